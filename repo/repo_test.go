package repo

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/internal/fssnap"
	"github.com/ckpt-dev/ckpt/internal/gittest"
)

func testStore(t testing.TB) *Store {
	t.Helper()
	opts := DefaultOptions()
	opts.Fsync = false
	opts.LockTimeout = 2 * time.Second
	clock := time.Date(2026, 4, 1, 22, 0, 0, 0, time.UTC)
	opts.Now = func() time.Time { clock = clock.Add(time.Second); return clock }
	opts.Author = Signature{"ckpt test", "test@example.com"}
	return NewStore(t.TempDir(), opts)
}

func TestParseSessionID(t *testing.T) {
	for _, tc := range []struct {
		id string
		ok bool
	}{
		{"alpha", true}, {"a", true}, {"A.b_c-9", true}, {strings.Repeat("a", 128), true},
		{"", false}, {".", false}, {"..", false}, {"../x", false}, {".git", false},
		{"a/b", false}, {"a\x00b", false}, {strings.Repeat("a", 129), false}, {strings.Repeat("x", 300), false},
		{"-x", false}, {"a b", false}, {"é", false},
		// valid git ref components only (the session travels as sessions/<id>)
		{"x.lock", false}, {"x.LOCK", false}, {"a.", false}, {"a..b", false}, {"a...", false},
		{"a.b", true}, {"lock", true}, {"x.locks", true}, {"x-lock", true}, {"a.b.c", true},
	} {
		_, err := ParseSessionID(tc.id)
		if (err == nil) != tc.ok {
			t.Errorf("ParseSessionID(%q) = %v, want ok=%v", tc.id, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidSession) {
			t.Errorf("ParseSessionID(%q) error %v is not ErrInvalidSession", tc.id, err)
		}
	}
}

// TestSessionIDsAreGitRefs holds ParseSessionID to git check-ref-format: every id it takes
// is a valid branch sessions/<id>, and the ids git refuses are refused.
func TestSessionIDsAreGitRefs(t *testing.T) {
	ids := []string{"alpha", "a.b", "a..b", "a.", "x.lock", "x.LOCK", "x.lock.y", "a_b-c.9", "0", "A",
		"a...", "a.lock.", "a@b", "a@{1}", "a~1", "a^", "a:b", "a?", "a*", "a[", "a\\b", "a b", "-a", ".a", "a/b",
		"a.loc", "lock.a", "a.-", "a-.", "a._", strings.Repeat("z", 128)}
	for _, id := range ids {
		_, err := ParseSessionID(id)
		out, gerr := gittest.Run(t, t.TempDir(), "check-ref-format", "refs/heads/sessions/"+id)
		if err == nil && gerr != nil {
			t.Errorf("ParseSessionID takes %q, git check-ref-format refuses it: %s", id, out)
		}
	}
	for _, id := range []string{"x.lock", "a.", "a..b"} {
		if _, gerr := gittest.Run(t, t.TempDir(), "check-ref-format", "refs/heads/sessions/"+id); gerr == nil {
			t.Errorf("git check-ref-format takes %q: the oracle is wrong", id)
		}
	}
}

// TestInitWorktreeIsolation: a session's work tree is never inside the store (another
// session's repository, knowledge/, state/, templates/, the store itself) nor another
// session's bound work tree, even through a symbolic link; a directory beside the store,
// or one that contains the store, is fine.
func TestInitWorktreeIsolation(t *testing.T) {
	st := testStore(t)
	files := map[string][]byte{"checkpoint.md": []byte("# C\n")}
	if _, _, err := st.Init("a", InitOptions{Files: files}); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	harness := filepath.Join(outside, "harness")
	if _, _, err := st.Init("bound", InitOptions{Files: files, Worktree: harness}); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(outside, "link")
	if err := os.Symlink(st.SessionDir("a"), link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, dir, want string
	}{
		{"session repository", st.SessionDir("a"), "inside the repository of session a"},
		{"inside a session repository", filepath.Join(st.SessionDir("a"), "sub"), "inside the repository of session a"},
		{"sessions dir", st.SessionsDir(), "inside the store"},
		{"a session yet to be", filepath.Join(st.SessionsDir(), "zz"), "inside the repository of session zz"},
		{"knowledge", st.KnowledgeDir(), "inside the store"},
		{"state", st.StateDir(), "inside the store"},
		{"templates", filepath.Join(st.Home, "templates"), "inside the store"},
		{"store", st.Home, "inside the store"},
		{"store, relative spelling", st.Home + "/sessions/..", "inside the store"},
		{"symlink into a repository", link, "inside the repository of session a"},
		{"below a symlink into a repository", filepath.Join(link, "x"), "inside the repository of session a"},
		{"bound work tree", harness, "already bound to session bound"},
		{"inside a bound work tree", filepath.Join(harness, "sub"), "the work tree of session bound"},
		{"beside the store", filepath.Join(outside, "other"), ""},
		{"around the store", filepath.Dir(st.Home), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := fssnap.Take(t, filepath.Dir(st.Home))
			r, _, err := st.Init("e", InitOptions{Files: files, Worktree: tc.dir})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if err := os.RemoveAll(r.Dir); err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrBadWorktree) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Init --worktree %s = %v, want ErrBadWorktree: %s", tc.dir, err, tc.want)
			}
			if d := fssnap.Diff(before, fssnap.Take(t, filepath.Dir(st.Home)), fssnap.Under(filepath.Base(st.Home)+"/state")); len(d) > 0 {
				t.Fatalf("refused init wrote:\n%s", strings.Join(d, "\n"))
			}
		})
	}
}

func TestInitCommitIsOrdinaryGit(t *testing.T) {
	st := testStore(t)
	r, first, err := st.Init("alpha", InitOptions{
		Files:   map[string][]byte{"checkpoint.md": []byte("# C\n"), "notes.md": []byte("# N\n")},
		Config:  map[string]string{"template": "six"},
		Message: "checkpoint(manual): start\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Template() != "six" {
		t.Errorf("template = %q", r.Template())
	}
	gittest.Fsck(t, r.Dir)
	gittest.Clean(t, r.Dir)
	var hashes []Hash
	hashes = append(hashes, first)
	for i := range 5 {
		h, changed, err := r.Commit(CommitRequest{
			Files:   map[string][]byte{"checkpoint.md": fmt.Appendf(nil, "# C\n%d\n", i), "notes.md": []byte("# N\n")},
			Message: fmt.Sprintf("checkpoint(write): %d\n\nCkpt-Session: alpha\nCkpt-Trigger: write\n", i),
		})
		if err != nil || !changed {
			t.Fatalf("commit %d: %v %v", i, changed, err)
		}
		hashes = append(hashes, h)
		gittest.Clean(t, r.Dir)
	}
	// identical content: no commit
	h, changed, err := r.Commit(CommitRequest{Files: map[string][]byte{"checkpoint.md": []byte("# C\n4\n"), "notes.md": []byte("# N\n")}, Message: "x\n"})
	if err != nil || changed || h != hashes[len(hashes)-1] {
		t.Fatalf("identical commit: %v %v %v", h, changed, err)
	}
	gittest.Fsck(t, r.Dir)
	log := gittest.Git(t, r.Dir, "log", "--format=%H")
	if got := strings.Count(log, "\n"); got != 6 {
		t.Errorf("git log shows %d commits, want 6:\n%s", got, log)
	}
	if !strings.HasPrefix(log, hashes[5].String()) {
		t.Errorf("git log head = %s, want %s", log[:40], hashes[5])
	}
	var seen []Hash
	r.Log(hashes[5], func(c CommitInfo) bool { seen = append(seen, c.Hash); return true })
	if len(seen) != 6 || seen[5] != first {
		t.Errorf("Log = %v", seen)
	}
	ci, _ := r.CommitInfo(hashes[5])
	if ci.Trailer("Ckpt-Trigger") != "write" {
		t.Errorf("trailers = %v", ci.Trailers)
	}
	for rev, want := range map[string]Hash{"HEAD": hashes[5], "HEAD~2": hashes[3], hashes[1].String()[:8]: hashes[1], "main": hashes[5]} {
		got, err := r.Resolve(rev)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %v, %v; want %v", rev, got, err, want)
		}
	}
	if _, err := r.Resolve("HEAD~99"); !errors.Is(err, ErrBadRevision) {
		t.Errorf("Resolve(HEAD~99) = %v", err)
	}
	b, err := r.ReadFile(hashes[2], "checkpoint.md")
	if err != nil || string(b) != "# C\n1\n" {
		t.Errorf("ReadFile = %q, %v", b, err)
	}
	// git sees ckpt's reflog
	if out := gittest.Git(t, r.Dir, "reflog", "-n", "1"); !strings.Contains(out, "checkpoint(write): 4") {
		t.Errorf("reflog: %s", out)
	}
}

func TestInitExistingFails(t *testing.T) {
	st := testStore(t)
	files := map[string][]byte{"checkpoint.md": []byte("a\n")}
	if _, _, err := st.Init("s", InitOptions{Files: files}); err != nil {
		t.Fatal(err)
	}
	before := gittest.Git(t, st.SessionDir("s"), "rev-parse", "HEAD")
	if _, _, err := st.Init("s", InitOptions{Files: map[string][]byte{"checkpoint.md": []byte("b\n")}}); !errors.Is(err, ErrExists) {
		t.Fatalf("second init: %v", err)
	}
	if after := gittest.Git(t, st.SessionDir("s"), "rev-parse", "HEAD"); after != before {
		t.Errorf("HEAD moved")
	}
	if b, _ := os.ReadFile(filepath.Join(st.SessionDir("s"), "checkpoint.md")); string(b) != "a\n" {
		t.Errorf("checkpoint changed: %q", b)
	}
}

func TestBoundWorktree(t *testing.T) {
	st := testStore(t)
	wt := t.TempDir()
	os.WriteFile(filepath.Join(wt, "checkpoint.md"), []byte("harness wrote this\n"), 0o644)
	os.WriteFile(filepath.Join(wt, "other.txt"), []byte("not ours\n"), 0o644)
	r, _, err := st.Init("b", InitOptions{Worktree: wt, Files: map[string][]byte{"checkpoint.md": []byte("template\n"), "notes.md": []byte("n\n")}})
	if err != nil {
		t.Fatal(err)
	}
	if r.WorkDir != wt {
		t.Errorf("workdir = %s", r.WorkDir)
	}
	b, err := r.ReadFile(mustHead(t, r), "checkpoint.md")
	if err != nil || string(b) != "harness wrote this\n" {
		t.Errorf("committed %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(wt, ".git")); err == nil {
		t.Errorf("a .git appeared in the bound directory")
	}
	gittest.Clean(t, st.SessionDir("b"))
	gittest.Fsck(t, st.SessionDir("b"))
	if _, _, err := st.Init("c", InitOptions{Worktree: wt}); err == nil {
		t.Errorf("binding the same directory twice succeeded")
	}
}

func mustHead(t testing.TB, r *Repo) Hash {
	h, err := r.Head()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestRejected(t *testing.T) {
	st := testStore(t)
	r, head, _ := st.Init("r", InitOptions{Files: map[string][]byte{"checkpoint.md": []byte("ok\n")}})
	// The same bytes as the newest rejected write are that write: no new ref.
	for _, tc := range []struct {
		content string
		n       int
	}{{"bad\n", 1}, {"bad\n", 1}, {"worse\n", 2}, {"bad\n", 3}, {"bad\n", 3}} {
		name, h, err := r.Reject(map[string][]byte{"checkpoint.md": []byte(tc.content)}, "rejected(write): bad\n")
		if err != nil {
			t.Fatal(err)
		}
		if name != fmt.Sprintf("refs/ckpt/rejected/%d", tc.n) {
			t.Errorf("%q: ref = %s, want rejected/%d", tc.content, name, tc.n)
		}
		got, err := r.Resolve(fmt.Sprintf("rejected/%d", tc.n))
		if err != nil || got != h {
			t.Errorf("Resolve rejected/%d = %v %v", tc.n, got, err)
		}
	}
	if mustHead(t, r) != head {
		t.Errorf("a rejected write moved HEAD")
	}
	rej, _ := r.Rejected()
	if len(rej) != 3 || rej[0].N != 3 {
		t.Errorf("Rejected = %+v", rej)
	}
	gittest.Fsck(t, r.Dir)
	gittest.Clean(t, r.Dir)
}

func TestPack(t *testing.T) {
	st := testStore(t)
	st.Opts.PackThreshold = 30
	r, _, _ := st.Init("p", InitOptions{Files: map[string][]byte{"checkpoint.md": []byte("0\n")}})
	body := strings.Repeat("a line of a checkpoint that stays the same\n", 100)
	for i := range 300 {
		if _, _, err := r.Commit(CommitRequest{Files: map[string][]byte{"checkpoint.md": fmt.Appendf(nil, "%s%d\n", body, i)}, Message: "m\n"}); err != nil {
			t.Fatal(err)
		}
	}
	packs, _ := r.packs()
	if len(packs) == 0 {
		t.Fatal("no pack written")
	}
	// The packs form the geometric progression: each at least twice the one below it.
	var counts []uint32
	for _, p := range r.reader().objs.packList(true) {
		if err := p.open(); err != nil {
			t.Fatal(err)
		}
		counts = append(counts, p.n)
	}
	slices.Sort(counts)
	for i := 1; i < len(counts); i++ {
		if counts[i] < geometricFactor*counts[i-1] {
			t.Errorf("packs of %v objects: not a geometric progression", counts)
		}
	}
	loose, _ := r.looseObjects()
	if len(loose) >= 3*300 {
		t.Errorf("%d loose objects left", len(loose))
	}
	gittest.Fsck(t, r.Dir)
	if n := strings.Count(gittest.Git(t, r.Dir, "log", "--format=%H"), "\n"); n != 301 {
		t.Errorf("git log shows %d commits", n)
	}
	b, _ := r.ReadFile(mustHead(t, r), "checkpoint.md")
	if !strings.HasSuffix(string(b), "\n299\n") {
		t.Errorf("head content wrong after packing")
	}
}

func TestLockBusy(t *testing.T) {
	st := testStore(t)
	st.Opts.LockTimeout = 50 * time.Millisecond
	unlock, err := st.Lock("x", true)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if _, err := st.Lock("x", false); !errors.Is(err, ErrBusy) {
		t.Errorf("shared lock under exclusive: %v", err)
	}
	u2, err := st.Lock("y", false)
	if err != nil {
		t.Fatal(err)
	}
	u3, err := st.Lock("y", false)
	if err != nil {
		t.Errorf("two shared locks: %v", err)
	} else {
		u3()
	}
	u2()
}

func TestRefLockHeldByGit(t *testing.T) {
	st := testStore(t)
	st.Opts.LockTimeout = 100 * time.Millisecond
	r, _, _ := st.Init("g", InitOptions{Files: map[string][]byte{"checkpoint.md": []byte("0\n")}})
	lock := filepath.Join(r.GitDir, "refs", "heads", "main.lock")
	os.WriteFile(lock, nil, 0o644)
	_, _, err := r.Commit(CommitRequest{Files: map[string][]byte{"checkpoint.md": []byte("1\n")}, Message: "m\n"})
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("commit while git holds main.lock: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(r.WorkDir, "checkpoint.md")); string(b) != "0\n" {
		t.Errorf("work tree not restored: %q", b)
	}
	os.Remove(lock)
	gittest.Fsck(t, r.Dir)
	gittest.Clean(t, r.Dir)
}

// TestNameChecksAgreeWithPatterns: the hand-written checks of session ids and file names
// accept exactly what the patterns in their documentation accept.
func TestNameChecksAgreeWithPatterns(t *testing.T) {
	id := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	file := regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._+-]{0,124}\.md$`)
	device := regexp.MustCompile(`(?i)^(con|prn|aux|nul|com[0-9]|lpt[0-9])\.`)
	rev := regexp.MustCompile(`^(?:refs/ckpt/)?rejected/(\d+)$`)
	alphabet := []string{"a", "Z", "0", "9", ".", "_", "-", "+", "/", " ", "é", "\x00", "md", "checkpoint", "notes", "rejected", "refs/ckpt/", "MEMORY", "knowledge-graph", "CoN", "nul", "Lpt", "com", "aux"}
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []string{"", "checkpoint-.md", "checkpoint-a.md", "checkpoint-.a.md", "checkpoint-a.md.md", "rejected/", "rejected/12", "refs/ckpt/rejected/3", "rejected/1a", strings.Repeat("a", 128), strings.Repeat("a", 129), strings.Repeat("a", 125) + ".md", strings.Repeat("a", 126) + ".md", "_.md", ".md", "COM1.md", "lpt9.x.md", "com.md", "com10.md", "prn"}
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(6) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		cases = append(cases, b.String(), "checkpoint-"+b.String()+".md", "rejected/"+b.String())
	}
	for _, s := range cases {
		if got, want := idName(s, 128), id.MatchString(s); got != want {
			t.Errorf("idName(%q) = %v, the pattern says %v", s, got, want)
		}
		if got, want := trackedName(s), file.MatchString(s); got != want {
			t.Errorf("trackedName(%q) = %v, the pattern says %v", s, got, want)
		}
		if got, want := deviceName(s), device.MatchString(s); got != want {
			t.Errorf("deviceName(%q) = %v, the pattern says %v", s, got, want)
		}
		n, got := rejectedRev(s)
		if m := rev.FindStringSubmatch(s); (m != nil) != got || (got && m[1] != n) {
			t.Errorf("rejectedRev(%q) = %q %v, the pattern says %v", s, n, got, m)
		}
	}
}
