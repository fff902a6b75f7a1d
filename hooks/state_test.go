package hooks

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestStateRoundTrip(t *testing.T) {
	home := t.TempDir()
	st, err := LoadState(home)
	if err != nil || len(st.Sessions) != 0 {
		t.Fatalf("LoadState of a new store = %+v, %v", st, err)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.FixedZone("x", 3600))
	want := SessionState{
		Breaker:         Breaker{Failures: 2, LastError: "disk full"},
		Transcript:      "/t/abc.jsonl",
		TranscriptSize:  4096,
		TranscriptMtime: now,
		SizeAtLastFull:  1024,
		SparseSinceFull: 3,
		NotesSize:       12,
		NotesMtime:      now.Add(-time.Hour),
		LastCheckpoint:  now,
		WorkDir:         "/w",
		Bound:           "/src/proj",
	}
	err = UpdateState(home, func(st *State) error {
		*st.Session("alpha") = want
		st.Session("beta")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err = LoadState(home)
	if err != nil {
		t.Fatal(err)
	}
	got := st.Sessions["alpha"]
	if got == nil || !got.TranscriptMtime.Equal(want.TranscriptMtime) || !got.NotesMtime.Equal(want.NotesMtime) {
		t.Fatalf("alpha = %+v", got)
	}
	got.TranscriptMtime, got.NotesMtime, got.LastCheckpoint = want.TranscriptMtime, want.NotesMtime, want.LastCheckpoint
	if *got != want {
		t.Errorf("alpha = %+v\nwant %+v", *got, want)
	}
	if st.Sessions["beta"] == nil {
		t.Errorf("beta lost")
	}
	data := string(readFile(t, SessionStatePath(home, "alpha")))
	if ids, err := BoundTo(home, "/src/proj"); err != nil || len(ids) != 1 || ids[0] != "alpha" {
		t.Errorf("BoundTo = %v, %v; want [alpha]", ids, err)
	}
	for _, field := range []string{`"transcript_size": 4096`, `"sparse_since_full": 3`, `"last_error": "disk full"`} {
		if !strings.Contains(data, field) {
			t.Errorf("state file lacks %s:\n%s", field, data)
		}
	}
}

func TestUpdateStateWritesNothing(t *testing.T) {
	home := t.TempDir()
	if err := UpdateState(home, func(st *State) error { st.Session("a").Bound = "/x"; return nil }); err != nil {
		t.Fatal(err)
	}
	path := SessionStatePath(home, "a")
	before := readFile(t, path)
	fi, _ := os.Stat(path)
	tests := []struct {
		name    string
		fn      func(*State) error
		wantErr bool
	}{
		{"fn fails", func(st *State) error { st.Session("a").Bound = "/y"; return errors.New("boom") }, true},
		{"fn changes nothing", func(st *State) error { return nil }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := UpdateState(home, tc.fn)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if got := readFile(t, path); string(got) != string(before) {
				t.Errorf("state changed to %s", got)
			}
			if fi2, _ := os.Stat(path); !os.SameFile(fi, fi2) {
				t.Errorf("state file replaced")
			}
		})
	}
}

func TestCorruptStateIsAnError(t *testing.T) {
	tests := []struct{ name, content string }{
		{"truncated", `{"transcript_size": 1`},
		{"wrong type", `[]`},
		{"garbage", "\x00\x01"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			path := SessionStatePath(home, "a")
			os.MkdirAll(filepath.Dir(path), 0o755)
			write(t, path, tc.content, 0o644)
			_, err := LoadState(home)
			if !errors.Is(err, ErrCorruptState) || !strings.Contains(err.Error(), path) {
				t.Errorf("LoadState err = %v, want ErrCorruptState naming %s", err, path)
			}
			called := false
			err = UpdateState(home, func(*State) error { called = true; return nil })
			if !errors.Is(err, ErrCorruptState) || called {
				t.Errorf("UpdateState err = %v, fn called %v", err, called)
			}
			if got := string(readFile(t, path)); got != tc.content {
				t.Errorf("corrupt state rewritten to %q", got)
			}
		})
	}
}

// TestUpdateStateSerializes runs read-modify-writes concurrently: the lock must keep
// every increment.
func TestUpdateStateSerializes(t *testing.T) {
	home := t.TempDir()
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- UpdateState(home, func(st *State) error {
				st.Session("a").SparseSinceFull++
				time.Sleep(time.Millisecond) // widen the window a lost update needs
				return nil
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	st, err := LoadState(home)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Sessions["a"].SparseSinceFull; got != n {
		t.Errorf("counter = %d, want %d", got, n)
	}
}

func TestBreaker(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type step struct {
		ok          bool
		wantTripped bool
		wantOpen    bool
		wantFails   int
	}
	tests := []struct {
		name      string
		threshold int
		steps     []step
	}{
		{"opens after 3 failures", 3, []step{
			{false, false, false, 1}, {false, false, false, 2}, {false, true, true, 3},
		}},
		{"a success resets the count", 3, []step{
			{false, false, false, 1}, {false, false, false, 2}, {true, false, false, 0},
			{false, false, false, 1}, {false, false, false, 2}, {false, true, true, 3},
		}},
		{"a success never closes an open breaker", 3, []step{
			{false, false, false, 1}, {false, false, false, 2}, {false, true, true, 3},
			{true, false, true, 0}, {true, false, true, 0},
		}},
		{"trips once", 2, []step{
			{false, false, false, 1}, {false, true, true, 2}, {false, false, true, 3}, {false, false, true, 4},
		}},
		{"threshold 1", 1, []step{{false, true, true, 1}}},
		{"threshold 0 never opens", 0, []step{{false, false, false, 1}, {false, false, false, 2}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b Breaker
			for i, s := range tc.steps {
				now := t0.Add(time.Duration(i) * time.Minute)
				tripped := b.Record(s.ok, fmt.Sprintf("error %d", i), tc.threshold, now)
				if tripped != s.wantTripped || b.Open != s.wantOpen || b.Failures != s.wantFails {
					t.Fatalf("step %d: tripped %v open %v failures %d; want %v %v %d", i, tripped, b.Open, b.Failures, s.wantTripped, s.wantOpen, s.wantFails)
				}
				if tripped && (!b.OpenedAt.Equal(now) || !strings.Contains(b.Reason, fmt.Sprintf("error %d", i))) {
					t.Errorf("step %d: opened at %v reason %q", i, b.OpenedAt, b.Reason)
				}
			}
			b.Reset()
			if b != (Breaker{}) {
				t.Errorf("after Reset: %+v", b)
			}
		})
	}
}

func TestReceipts(t *testing.T) {
	home := t.TempDir()
	if got, err := ReadReceipts(home, 5); err != nil || got != nil {
		t.Fatalf("ReadReceipts of a new store = %v, %v", got, err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var prev []byte
	for i := range 5 {
		r := Receipt{Time: t0.Add(time.Duration(i) * time.Second), Session: fmt.Sprintf("s%d", i), Action: "sparse", Result: "ok", Trigger: "cron", DurationMS: 1.5}
		if i == 3 {
			r.Result, r.Error = "failed", "commit: disk full\nsecond line"
		}
		if err := AppendReceipt(home, r); err != nil {
			t.Fatal(err)
		}
		data := readFile(t, ReceiptsPath(home))
		if !strings.HasPrefix(string(data), string(prev)) || len(data) <= len(prev) {
			t.Fatalf("receipt %d rewrote the file", i)
		}
		prev = data
	}
	lines := strings.Split(strings.TrimSuffix(string(prev), "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines, want 5:\n%s", len(lines), prev)
	}
	if want := `{"time":"2026-01-01T00:00:00Z","session":"s0","action":"sparse","result":"ok","trigger":"cron","duration_ms":1.5}`; lines[0] != want {
		t.Errorf("line 0 = %s\nwant %s", lines[0], want)
	}
	tests := []struct {
		n    int
		want []string
	}{
		{2, []string{"s3", "s4"}},
		{5, []string{"s0", "s1", "s2", "s3", "s4"}},
		{50, []string{"s0", "s1", "s2", "s3", "s4"}},
		{0, []string{"s0", "s1", "s2", "s3", "s4"}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			got, err := ReadReceipts(home, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range got {
				ids = append(ids, r.Session)
			}
			if strings.Join(ids, ",") != strings.Join(tc.want, ",") {
				t.Errorf("sessions %v, want %v", ids, tc.want)
			}
		})
	}
	got, _ := ReadReceipts(home, 2)
	if got[0].Error != "commit: disk full\nsecond line" || !got[0].Time.Equal(t0.Add(3*time.Second)) {
		t.Errorf("receipt 3 = %+v", got[0])
	}
}

func TestReceiptsTornLine(t *testing.T) {
	home := t.TempDir()
	if err := AppendReceipt(home, Receipt{Session: "a", Action: "full", Result: "ok"}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(ReceiptsPath(home), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"time":"2026-01-01T00:00:00Z","sess`) // a crash mid-write
	f.Close()
	if err := AppendReceipt(home, Receipt{Session: "b", Action: "sparse", Result: "ok"}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadReceipts(home, 0)
	if err != nil || len(got) != 2 || got[0].Session != "a" || got[1].Session != "b" {
		t.Errorf("ReadReceipts = %+v, %v; want a and b", got, err)
	}

	write(t, ReceiptsPath(home), "not json\n", 0o644)
	if _, err := ReadReceipts(home, 0); err == nil || !strings.Contains(err.Error(), ReceiptsPath(home)) {
		t.Errorf("garbage line: err = %v", err)
	}
}

// TestReadReceiptsTail reads the end of a file much larger than one chunk.
func TestReadReceiptsTail(t *testing.T) {
	home := t.TempDir()
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, `{"time":"2026-01-01T00:00:00Z","session":"s%d","action":"none","result":"ok","duration_ms":0}`+"\n", i)
	}
	write(t, ReceiptsPath(home), b.String(), 0o644)
	got, err := ReadReceipts(home, 3)
	if err != nil || len(got) != 3 || got[0].Session != "s4997" || got[2].Session != "s4999" {
		t.Errorf("ReadReceipts = %+v, %v", got, err)
	}
}

// tickLockChildEnv makes the test binary a helper process that takes the tick lock.
const tickLockChildEnv = "CKPT_HOOKS_TICKLOCK_CHILD"

// TestTickLockChild is not a test on its own: TestTryTickLockAcrossProcesses runs the
// test binary again with it, to hold or try the lock from another process.
func TestTickLockChild(t *testing.T) {
	home := os.Getenv(tickLockChildEnv)
	if home == "" {
		t.Skip("helper process for TestTryTickLockAcrossProcesses")
	}
	unlock, ok, err := TryTickLock(home)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("ok", ok)
	if ok && os.Getenv("HOLD") != "" {
		// Hold the lock until the parent closes stdin.
		bufio.NewReader(os.Stdin).ReadString('\n')
		unlock()
	}
	os.Exit(0)
}

func tickLockChild(t *testing.T, home string, hold bool) (*exec.Cmd, *bufio.Reader, func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestTickLockChild$")
	cmd.Env = append(os.Environ(), tickLockChildEnv+"="+home)
	if hold {
		cmd.Env = append(cmd.Env, "HOLD=1")
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewReader(stdout), func() { stdin.Close(); _ = cmd.Wait() }
}

func TestTryTickLockAcrossProcesses(t *testing.T) {
	home := t.TempDir()

	// Another process holds the lock: this one is refused at once.
	_, out, done := tickLockChild(t, home, true)
	if line, _ := out.ReadString('\n'); line != "ok true\n" {
		done()
		t.Fatalf("holder said %q", line)
	}
	start := time.Now()
	unlock, ok, err := TryTickLock(home)
	if err != nil || ok || unlock != nil {
		t.Errorf("TryTickLock while another process holds it = %v, %v", ok, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("TryTickLock waited %s", d)
	}
	done()

	// Once it exits, the lock is free; while this process holds it, a child is refused.
	unlock, ok, err = TryTickLock(home)
	if err != nil || !ok {
		t.Fatalf("TryTickLock after the holder exited = %v, %v", ok, err)
	}
	_, out, done = tickLockChild(t, home, false)
	line, _ := out.ReadString('\n')
	done()
	if line != "ok false\n" {
		t.Errorf("child while the parent holds the lock said %q, want ok false", line)
	}
	unlock()
	_, out, done = tickLockChild(t, home, false)
	line, _ = out.ReadString('\n')
	done()
	if line != "ok true\n" {
		t.Errorf("child after unlock said %q, want ok true", line)
	}
}

func TestBoundMovesWithTheSession(t *testing.T) {
	home := t.TempDir()
	a, b := t.TempDir(), t.TempDir()
	set := func(id, bound string) {
		t.Helper()
		if err := UpdateSessions(home, []string{id}, func(st *State) error { st.Session(id).Bound = bound; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	set("x", a)
	set("y", a)
	set("z", b)
	if ids, _ := BoundTo(home, a); len(ids) != 2 || ids[0] != "x" || ids[1] != "y" {
		t.Errorf("bound to a: %v", ids)
	}
	set("y", b)
	if ids, _ := BoundTo(home, a); len(ids) != 1 || ids[0] != "x" {
		t.Errorf("bound to a after the move: %v", ids)
	}
	if ids, _ := BoundTo(home, b); len(ids) != 2 {
		t.Errorf("bound to b after the move: %v", ids)
	}
	if ids, err := BoundTo(home, t.TempDir()); err != nil || ids != nil {
		t.Errorf("an unbound directory: %v, %v", ids, err)
	}
	// a symlink to a bound work tree is the same work tree
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(b, link); err == nil {
		if ids, _ := BoundTo(home, link); len(ids) != 2 {
			t.Errorf("bound to b through a symlink: %v", ids)
		}
	}
}

// bind sets the work tree session id is bound to.
func bind(t *testing.T, home, id, bound string) error {
	t.Helper()
	return UpdateSessions(home, []string{id}, func(st *State) error { st.Session(id).Bound = bound; return nil })
}

func boundTo(t *testing.T, home, dir string) string {
	t.Helper()
	ids, err := BoundTo(home, dir)
	if err != nil {
		t.Fatalf("BoundTo: %v", err)
	}
	return strings.Join(ids, ",")
}

// The index of bindings is derived data: missing (a store from before it, a file deleted
// by hand) or unreadable, the sessions' files rebuild it, and it is written back.
func TestBoundIndexRebuilt(t *testing.T) {
	for _, damage := range []string{"missing", "corrupt", "empty"} {
		t.Run(damage, func(t *testing.T) {
			home := t.TempDir()
			a, b := t.TempDir(), t.TempDir()
			for id, dir := range map[string]string{"x": a, "y": a, "z": b} {
				if err := bind(t, home, id, dir); err != nil {
					t.Fatal(err)
				}
			}
			switch damage {
			case "missing":
				for _, p := range []string{boundPath(home), boundTextPath(home)} {
					if err := os.Remove(p); err != nil {
						t.Fatal(err)
					}
				}
			case "corrupt":
				write(t, boundPath(home), "{\"/elsewhere\": [\"x\"", 0o600)
			case "empty":
				write(t, boundPath(home), "", 0o600)
			}
			if got := boundTo(t, home, a); got != "x,y" {
				t.Errorf("bound to a: %q, want x,y", got)
			}
			if got := boundTo(t, home, b); got != "z" {
				t.Errorf("bound to b: %q, want z", got)
			}
			if m, ok, err := readBoundIndex(home); !ok || err != nil || len(m) != 2 {
				t.Errorf("bound.json after the rebuild: %v, %v, %v", m, ok, err)
			}
			if txt := string(readFile(t, boundTextPath(home))); !strings.Contains(txt, boundKey(a)+"\n") || !strings.Contains(txt, boundKey(b)+"\n") {
				t.Errorf("bound.txt after the rebuild: %q", txt)
			}
			// a binding made while the index is missing keeps everybody else's
			if err := os.Remove(boundPath(home)); err != nil {
				t.Fatal(err)
			}
			if err := bind(t, home, "w", b); err != nil {
				t.Fatal(err)
			}
			if m, _, _ := readBoundIndex(home); strings.Join(m[boundKey(a)], ",") != "x,y" || strings.Join(m[boundKey(b)], ",") != "w,z" {
				t.Errorf("bound.json after a binding made without it: %v", m)
			}
		})
	}
}

// A store without any session state gets no index, and no state directory, from a lookup.
func TestBoundIndexNoStore(t *testing.T) {
	home := filepath.Join(t.TempDir(), "store")
	if got := boundTo(t, home, t.TempDir()); got != "" {
		t.Errorf("bound: %q", got)
	}
	if _, err := os.Stat(home); !os.IsNotExist(err) {
		t.Errorf("the lookup made the store: %v", err)
	}
}

// The index may list more than the sessions' files say (a kill between its two updates);
// a session is only ever reported where its own state binds it.
func TestBoundIndexListsMoreThanTheFiles(t *testing.T) {
	home := t.TempDir()
	a, b := t.TempDir(), t.TempDir()
	if err := bind(t, home, "x", a); err != nil {
		t.Fatal(err)
	}
	if err := bind(t, home, "y", b); err != nil {
		t.Fatal(err)
	}
	write(t, boundPath(home), fmt.Sprintf("{%q: [\"ghost\", \"x\", \"y\"], %q: [\"y\"]}\n", boundKey(a), boundKey(b)), 0o600)
	if got := boundTo(t, home, a); got != "x" {
		t.Errorf("bound to a: %q, want x (y is bound to b, ghost has no state)", got)
	}
	if got := boundTo(t, home, b); got != "y" {
		t.Errorf("bound to b: %q, want y", got)
	}
}

// A binding moved by an update killed at either step between the index and the sessions'
// files: the session is found where its file binds it, never where it does not.
func TestBindingKilledMidway(t *testing.T) {
	for _, point := range []string{"bindings-listed", "bindings-written"} {
		t.Run(point, func(t *testing.T) {
			home := t.TempDir()
			a, b := t.TempDir(), t.TempDir()
			if err := bind(t, home, "x", a); err != nil {
				t.Fatal(err)
			}
			t.Setenv("CKPT_FAILPOINT", point)
			if err := bind(t, home, "x", b); err == nil {
				t.Fatal("the failpoint did not fail the update")
			}
			t.Setenv("CKPT_FAILPOINT", "")
			// the hook scripts' list names both: they start ckpt, which decides
			txt := string(readFile(t, boundTextPath(home)))
			if !strings.Contains(txt, boundKey(a)+"\n") || !strings.Contains(txt, boundKey(b)+"\n") {
				t.Errorf("bound.txt: %q", txt)
			}
			want := map[string]string{"bindings-listed": a, "bindings-written": b}[point]
			for _, dir := range []string{a, b} {
				got := boundTo(t, home, dir)
				if (dir == want) != (got == "x") {
					t.Errorf("bound to %s: %q (x's file binds it to %s)", dir, got, want)
				}
			}
			// the lookup that found the index listing more put it right
			if m, _, _ := readBoundIndex(home); len(m) != 1 || strings.Join(m[boundKey(want)], ",") != "x" {
				t.Errorf("bound.json after the lookup: %v", m)
			}
		})
	}
}
