package history

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/hooks"
	"github.com/ckpt-dev/ckpt/knowledge"
	"github.com/ckpt-dev/ckpt/repo"
	ckptsync "github.com/ckpt-dev/ckpt/sync"
)

// fixture is a store with a clock that moves a minute per commit.
type fixture struct {
	t     testing.TB
	svc   *checkpoint.Service
	clock time.Time
	h     *Reader
}

var t0 = time.Date(2026, 4, 1, 22, 0, 0, 0, time.UTC)

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{t: t, clock: t0}
	opts := repo.DefaultOptions()
	opts.Fsync = false
	opts.LockTimeout = 200 * time.Millisecond
	opts.Now = func() time.Time { return f.clock }
	opts.Author = repo.Signature{Name: "ckpt test", Email: "test@example.com"}
	f.svc = checkpoint.New(repo.NewStore(t.TempDir(), opts), nil)
	f.h = New(f.svc)
	return f
}

func (f *fixture) session(id, template string) *repo.Repo {
	f.t.Helper()
	r, _, err := f.svc.InitSession(repo.SessionID(id), template, "", nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

// write commits a six checkpoint with the given section bodies and returns its commit.
func (f *fixture) write(r *repo.Repo, trigger string, bodies map[string]string) string {
	f.t.Helper()
	f.clock = f.clock.Add(time.Minute)
	res, err := f.svc.Write(r, checkpoint.File, six(bodies), checkpoint.CommitOptions{Trigger: checkpoint.Trigger(trigger)})
	if err != nil {
		f.t.Fatal(err)
	}
	if !res.Changed {
		f.t.Fatal("write: nothing changed")
	}
	return res.Commit.String()
}

func (f *fixture) notes(r *repo.Repo, text string) {
	f.t.Helper()
	b, err := os.ReadFile(r.WorkPath(checkpoint.NotesFile))
	if err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(r.WorkPath(checkpoint.NotesFile), append(b, text...), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) sync(r *repo.Repo, mode string) string {
	f.t.Helper()
	f.clock = f.clock.Add(time.Minute)
	rep, err := ckptsync.New(f.svc).Sync(r, ckptsync.Options{Mode: mode})
	if err != nil {
		f.t.Fatal(err)
	}
	return rep.Commit
}

var sixHeadings = []struct{ key, heading string }{
	{"🎯", "### 🎯 Current Task"}, {"📋", "### 📋 Task Stack"}, {"✅", "### ✅ This Session Completed"},
	{"🔑", "### 🔑 Key Decisions"}, {"📡", "### 📡 Recovered Delta\n_delta_since_last: 2026-04-01T22:00Z → 2026-04-01T22:00Z_"},
	{"⚠️", "### ⚠️ Notes & Blockers"},
}

func six(bodies map[string]string) []byte {
	var b strings.Builder
	b.WriteString("# Session Checkpoint\n\n_last_updated: 2026-04-01T22:00Z_\n_session_id: x_\n\n---\n\n")
	for _, h := range sixHeadings {
		b.WriteString(h.heading + "\n")
		if body := bodies[h.key]; body != "" {
			b.WriteString(body + "\n")
		}
		b.WriteString("\n")
	}
	b.WriteString("---\n")
	return []byte(b.String())
}

// history builds session alpha:
//
//	c[0] init
//	c[1] write: 🎯 task A, 🔑 D1
//	c[2] write: 📋 two tasks
//	c[3] write: 🔑 D1, D2
//	c[4] full sync (notes: a decision) -> promotes D1, D2, D3
//	c[5] write: 🎯 task B
func history(t *testing.T) (*fixture, []string) {
	f := newFixture(t)
	r := f.session("alpha", "six")
	c := []string{}
	head, _ := r.Head()
	c = append(c, head.String())
	c = append(c, f.write(r, "write", map[string]string{"🎯": "Task A", "🔑": "- D1: use xxhash"}))
	c = append(c, f.write(r, "write", map[string]string{"🎯": "Task A", "📋": "- [ ] one\n- [ ] two", "🔑": "- D1: use xxhash"}))
	c = append(c, f.write(r, "write", map[string]string{"🎯": "Task A", "📋": "- [ ] one\n- [ ] two", "🔑": "- D1: use xxhash\n- D2: keep notes append-only"}))
	f.notes(r, "- [decision] D3: blame walks first parents\n")
	c = append(c, f.sync(r, ckptsync.Full))
	cp, err := os.ReadFile(r.WorkPath(checkpoint.File))
	if err != nil {
		t.Fatal(err)
	}
	f.clock = f.clock.Add(time.Minute)
	res, err := f.svc.Write(r, checkpoint.File, []byte(strings.Replace(string(cp), "Task A", "Task B", 1)), checkpoint.CommitOptions{Trigger: checkpoint.TriggerWrite})
	if err != nil || !res.Changed {
		t.Fatalf("write: %v %v", res.Changed, err)
	}
	c = append(c, res.Commit.String())
	return f, c
}

func TestResolve(t *testing.T) {
	f, c := history(t)
	for _, tc := range []struct {
		name, rev string
		want      string
		err       error
	}{
		{"head", "HEAD", c[5], nil},
		{"empty is head", "", c[5], nil},
		{"head~2", "HEAD~2", c[3], nil},
		{"full hash", c[2], c[2], nil},
		{"short hash", c[2][:7], c[2], nil},
		{"before-compact", BeforeCompact, c[3], nil},
		{"time at a commit", "2026-04-01T22:02:00Z", c[2], nil},
		{"time between commits", "2026-04-01T22:02:30Z", c[2], nil},
		{"ckpt's time format", "2026-04-01T22:03Z", c[3], nil},
		{"time with offset", "2026-04-02T00:01:00+02:00", c[1], nil},
		{"a date is its whole day", "2026-04-01", c[5], nil},
		{"before the first commit", "2026-04-01T21:00:00Z", "", repo.ErrBadRevision},
		{"unknown", "nope", "", repo.ErrBadRevision},
		{"too far back", "HEAD~9", "", repo.ErrBadRevision},
		{"option-like", "--all", "", repo.ErrBadRevision},
		{"rejected none", "rejected/1", "", repo.ErrBadRevision},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := f.h.Resolve("alpha", tc.rev)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Hash != tc.want {
				t.Fatalf("got %s (%s), want %s", got.Short, got.Subject, tc.want[:7])
			}
		})
	}
}

func TestBeforeCompactWithoutFull(t *testing.T) {
	f := newFixture(t)
	r := f.session("beta", "six")
	f.write(r, "write", map[string]string{"🎯": "x"})
	_, err := f.h.Resolve("beta", BeforeCompact)
	if !errors.Is(err, repo.ErrBadRevision) || !strings.Contains(err.Error(), "no full checkpoint") {
		t.Fatalf("err = %v", err)
	}
}

func TestFullIsRecognised(t *testing.T) {
	f, c := history(t)
	// A full sync a hook takes says Ckpt-Trigger: full, and its cause names the hook.
	r, _ := f.svc.Store.Open("alpha")
	f.notes(r, "- [note] from the hook\n")
	f.clock = f.clock.Add(time.Minute)
	rep, err := ckptsync.New(f.svc).Sync(r, ckptsync.Options{Mode: ckptsync.Full, Cause: checkpoint.ClaudeCause("PreCompact")})
	if err != nil {
		t.Fatal(err)
	}
	page, err := f.h.Log("alpha", LogQuery{Trigger: "full"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, cm := range page.Commits {
		got = append(got, cm.Hash)
		if !cm.Full {
			t.Errorf("%s not full", cm.Short)
		}
	}
	if want := []string{rep.Commit, c[4]}; !slices.Equal(got, want) {
		t.Fatalf("full commits %v, want %v", got, want)
	}
	if cm := page.Commits[0]; cm.Trigger != "full" || cm.Cause != "claude:PreCompact" {
		t.Fatalf("trigger %q, cause %q", cm.Trigger, cm.Cause)
	}
	bc, err := f.h.Resolve("alpha", BeforeCompact)
	if err != nil || bc.Hash != c[5] {
		t.Fatalf("before-compact = %s, %v; want %s", bc.Short, err, c[5][:7])
	}
}

func TestLog(t *testing.T) {
	f, c := history(t)
	hashes := func(p LogPage) []string {
		var out []string
		for _, cm := range p.Commits {
			out = append(out, cm.Hash)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		q    LogQuery
		want []string
		next string
	}{
		{"all", LogQuery{}, []string{c[5], c[4], c[3], c[2], c[1], c[0]}, ""},
		{"limit", LogQuery{Limit: 2}, []string{c[5], c[4]}, c[3]},
		{"cursor", LogQuery{Limit: 2, Cursor: c[3]}, []string{c[3], c[2]}, c[1]},
		{"last page", LogQuery{Limit: 2, Cursor: c[1]}, []string{c[1], c[0]}, ""},
		{"section by emoji", LogQuery{Section: "🔑"}, []string{c[4], c[3], c[1], c[0]}, ""},
		{"section by title", LogQuery{Section: "task stack"}, []string{c[2], c[0]}, ""},
		{"section by number", LogQuery{Section: "2"}, []string{c[2], c[0]}, ""},
		{"trigger", LogQuery{Trigger: "write"}, []string{c[5], c[3], c[2], c[1]}, ""},
		{"trigger full", LogQuery{Trigger: "full"}, []string{c[4]}, ""},
		{"since", LogQuery{Since: t0.Add(3 * time.Minute)}, []string{c[5], c[4], c[3]}, ""},
		{"until", LogQuery{Until: t0.Add(1 * time.Minute)}, []string{c[1], c[0]}, ""},
		{"scan bound", LogQuery{Trigger: "full", Scan: 1}, nil, c[4]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page, err := f.h.Log("alpha", tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if got := hashes(page); !slices.Equal(got, tc.want) {
				t.Fatalf("got %d commits %v\nwant %v", len(got), got, tc.want)
			}
			if page.Next != tc.next {
				t.Fatalf("next = %q, want %q", page.Next, tc.next)
			}
		})
	}
	// Paging through everything gives the whole log once.
	var all []string
	q := LogQuery{Limit: 4}
	for {
		page, err := f.h.Log("alpha", q)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, hashes(page)...)
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	if len(all) != 6 || all[0] != c[5] || all[5] != c[0] {
		t.Fatalf("paged log %v", all)
	}
}

func TestLogDetails(t *testing.T) {
	f, c := history(t)
	page, err := f.h.Log("alpha", LogQuery{Limit: 2, Files: true})
	if err != nil {
		t.Fatal(err)
	}
	full := page.Commits[1]
	if full.Hash != c[4] || !full.Full || full.Trigger != "full" || !slices.Equal(full.Files, []string{"checkpoint.md"}) {
		t.Fatalf("full sync commit: %+v", full)
	}
	if w := page.Commits[0]; w.Full || !slices.Equal(w.Files, []string{"checkpoint.md"}) || !slices.Equal(w.Sections, []string{"🎯"}) || w.Session != "alpha" {
		t.Fatalf("write commit: %+v", w)
	}
	if p := full.Provenance("🔑"); p.Session != "alpha" || p.Commit != c[4] || !p.Time.Equal(t0.Add(4*time.Minute)) {
		t.Fatalf("provenance %+v", p)
	}
}

func TestBadInput(t *testing.T) {
	f, c := history(t)
	var se *SectionError
	for _, tc := range []struct {
		name string
		call func() error
		is   error
		text string
	}{
		{"unknown session", func() error { _, err := f.h.Log("ghost", LogQuery{}); return err }, repo.ErrNotFound, "ghost: no such session"},
		{"invalid session", func() error { _, err := f.h.Log("../etc", LogQuery{}); return err }, repo.ErrInvalidSession, "invalid session id"},
		{"bad cursor", func() error { _, err := f.h.Log("alpha", LogQuery{Cursor: "HEAD"}); return err }, ErrBadCursor, "pass the next cursor"},
		{"unknown cursor", func() error { _, err := f.h.Log("alpha", LogQuery{Cursor: strings.Repeat("a", 40)}); return err }, ErrBadCursor, "no such commit"},
		{"negative limit", func() error { _, err := f.h.Log("alpha", LogQuery{Limit: -1}); return err }, ErrBadQuery, "0 or more"},
		{"section not in template", func() error { _, err := f.h.Log("alpha", LogQuery{Section: "nothing"}); return err }, ErrNoSection, `no section "nothing" in template six`},
		{"bad revision", func() error { _, err := f.h.Show("alpha", "nope", "", ""); return err }, repo.ErrBadRevision, "unknown revision"},
		{"no such file", func() error { _, err := f.h.Show("alpha", "", "checkpoint-x.md", ""); return err }, repo.ErrNoFile, "no such file"},
		{"not a checkpoint file", func() error { _, err := f.h.Show("alpha", "", "../../config", ""); return err }, repo.ErrInvalidName, "not a checkpoint file name"},
		{"section missing at rev", func() error { _, err := f.h.Show("alpha", c[0], "notes.md", "🔑"); return err }, ErrNoSection, `no section "🔑" in notes.md at`},
		{"blame bad section", func() error { _, err := f.h.Blame("alpha", "§99", ""); return err }, ErrNoSection, "no section"},
		{"diff bad from", func() error { _, err := f.h.Diff("alpha", DiffQuery{From: "zzz"}); return err }, repo.ErrBadRevision, "unknown revision"},
		{"bad state", func() error { _, err := f.h.Decisions(DecisionsQuery{State: "maybe"}); return err }, ErrBadQuery, "want pending"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("err = %v, want %v containing %q", err, tc.is, tc.text)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is more than one line: %q", err)
			}
		})
	}
	_, err := f.h.Log("alpha", LogQuery{Section: "nothing"})
	if !errors.As(err, &se) || !se.Template || !slices.Equal(se.Sections, []string{"🎯", "📋", "✅", "🔑", "📡", "⚠️"}) {
		t.Fatalf("section error %#v", err)
	}
}

func TestShow(t *testing.T) {
	f, c := history(t)
	for _, tc := range []struct {
		name, rev, file, section string
		heading, contains, not   string
		commit                   string
	}{
		{"whole file", "", "", "", "", "### 🎯 Current Task\nTask B", "", c[5]},
		{"section by emoji", "HEAD~2", "", "🔑", "### 🔑 Key Decisions", "- D2: keep notes append-only", "Task", c[3]},
		{"section by number", "HEAD~2", "", "4", "### 🔑 Key Decisions", "- D1", "", c[3]},
		{"section by title", "before-compact", "", "key decisions", "### 🔑 Key Decisions", "- D2", "D3", c[3]},
		{"after the full sync", "", "", "🔑", "### 🔑 Key Decisions", "D3: blame walks first parents", "", c[5]},
		{"notes", c[3], "notes.md", "", "", "# Notes", "", c[3]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := f.h.Show("alpha", tc.rev, tc.file, tc.section)
			if err != nil {
				t.Fatal(err)
			}
			if s.Heading != tc.heading || !strings.Contains(s.Content, tc.contains) || tc.not != "" && strings.Contains(s.Content, tc.not) {
				t.Fatalf("heading %q content:\n%s", s.Heading, s.Content)
			}
			if s.Commit != tc.commit || s.Session != "alpha" || s.Time.IsZero() {
				t.Fatalf("provenance %+v, want commit %s", s.Provenance, tc.commit[:7])
			}
		})
	}
}

func TestDiff(t *testing.T) {
	f, c := history(t)
	for _, tc := range []struct {
		name string
		q    DiffQuery
		from string
		want []string // section:status
	}{
		{"head against its parent", DiffQuery{}, c[4], []string{"preamble:changed", "🎯:changed"}},
		{"range", DiffQuery{From: c[1], To: c[3]}, c[1], []string{"📋:changed", "🔑:changed"}},
		{"one section", DiffQuery{From: c[1], To: c[3], Section: "Key Decisions"}, c[1], []string{"🔑:changed"}},
		{"first commit", DiffQuery{To: c[0]}, "", []string{"🎯:added", "📋:added", "✅:added", "🔑:added", "📡:added", "⚠️:added"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := f.h.Diff("alpha", tc.q)
			if err != nil {
				t.Fatal(err)
			}
			checkDiffEach(t, f.h, "alpha", tc.q, d)
			var got []string
			for _, ch := range d.Changes {
				got = append(got, ch.Section+":"+ch.Status)
			}
			// The preamble's _last_updated_ changes with every write; only check it is there.
			if !slices.Equal(got, tc.want) && !slices.Equal(append([]string{"preamble:changed"}, tc.want...), got) {
				t.Fatalf("changes %v, want %v", got, tc.want)
			}
			if tc.from == "" && d.From != nil || tc.from != "" && (d.From == nil || d.From.Hash != tc.from) {
				t.Fatalf("from %+v, want %s", d.From, tc.from)
			}
		})
	}
	d, err := f.h.Diff("alpha", DiffQuery{From: c[2], To: c[3], Section: "🔑"})
	if err != nil {
		t.Fatal(err)
	}
	checkDiffEach(t, f.h, "alpha", DiffQuery{From: c[2], To: c[3], Section: "🔑"}, d)
	if len(d.Changes) != 1 || !strings.Contains(d.Changes[0].Diff, "+- D2: keep notes append-only") {
		t.Fatalf("diff %+v", d.Changes)
	}
}

// TestDiffEachHoldsNoLock: DiffEach hands out the changes after releasing the session's
// lock, so a reader that takes its time (a pager) holds up no write.
func TestDiffEachHoldsNoLock(t *testing.T) {
	f := newFixture(t)
	r := f.session("beta", "six")
	f.write(r, "write", map[string]string{"🎯": "Task A"})
	f.write(r, "write", map[string]string{"🎯": "Task B"})
	calls := 0
	_, err := f.h.DiffEach("beta", DiffQuery{}, func(ch Change, diff func(io.Writer) error) error {
		calls++
		f.write(r, "write", map[string]string{"🎯": fmt.Sprintf("Task C%d", calls)}) // fails the test when the lock is held
		return diff(io.Discard)
	})
	if err != nil || calls == 0 {
		t.Fatalf("DiffEach: %d changes, %v", calls, err)
	}
}

// checkDiffEach: DiffEach hands out Diff's changes, and writes Diff's text for each.
func checkDiffEach(t *testing.T, h *Reader, session string, q DiffQuery, want DiffResult) {
	t.Helper()
	var got []Change
	res, err := h.DiffEach(session, q, func(ch Change, diff func(io.Writer) error) error {
		if ch.Diff != "" {
			t.Errorf("DiffEach handed out a change with its diff: %+v", ch)
		}
		var b strings.Builder
		err := diff(&b)
		ch.Diff = b.String()
		got = append(got, ch)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 0 || res.To.Hash != want.To.Hash || (res.From == nil) != (want.From == nil) || res.From != nil && res.From.Hash != want.From.Hash {
		t.Fatalf("DiffEach's result %+v, Diff's %+v", res, want)
	}
	if !slices.Equal(got, want.Changes) {
		t.Fatalf("DiffEach's changes %+v, Diff's %+v", got, want.Changes)
	}
}

func TestBlame(t *testing.T) {
	f := newFixture(t)
	r := f.session("gamma", "six")
	c := map[string]string{}
	c["a"] = f.write(r, "write", map[string]string{"📋": "- [ ] a"})
	c["b"] = f.write(r, "write", map[string]string{"📋": "- [ ] a\n- [ ] b", "🎯": "x"})
	c["other"] = f.write(r, "write", map[string]string{"📋": "- [ ] a\n- [ ] b", "🎯": "y"}) // 📋 unchanged
	c["dup"] = f.write(r, "write", map[string]string{"📋": "- [ ] a\n- [ ] b\n- [ ] a", "🎯": "y"})
	c["drop b"] = f.write(r, "write", map[string]string{"📋": "- [ ] a\n- [ ] a", "🎯": "y"})
	c["b again"] = f.write(r, "write", map[string]string{"📋": "- [ ] a\n- [ ] b\n- [ ] a\n  continued", "🎯": "y"})
	c["tick"] = f.write(r, "write", map[string]string{"📋": "- [x] a\n- [ ] b\n- [ ] a\n  continued", "🎯": "y"})

	b, err := f.h.Blame("gamma", "Task Stack", "")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		text, commit string
		line         int
	}{
		{"- [x] a", "tick", 12}, {"- [ ] b", "b again", 13}, {"- [ ] a", "a", 14}, {"  continued", "b again", 15},
	}
	if len(b.Lines) != len(want) {
		t.Fatalf("blame lines %+v", b.Lines)
	}
	for i, w := range want {
		l := b.Lines[i]
		if l.Text != w.text || l.Commit != c[w.commit] || l.Line != w.line || l.Trigger != "write" || l.Time.IsZero() {
			t.Errorf("line %d: %+v, want %q by %q at line %d", i, l, w.text, w.commit, w.line)
		}
	}
	if b.Section != "📋" || b.Heading != "### 📋 Task Stack" || b.Session != "gamma" || b.Commit != c["tick"] {
		t.Fatalf("provenance %+v %q", b.Provenance, b.Heading)
	}
	// Claiming "- [ ] a" for the first write takes reading init, its parent: all 8.
	if b.Walked != 8 {
		t.Fatalf("walked %d commits, want 8", b.Walked)
	}
	// The walk stops as soon as every line is claimed: 🎯's "y" is "other"'s, found when
	// its parent is read; the two commits before are never read.
	b, err = f.h.Blame("gamma", "🎯", "")
	if err != nil || len(b.Lines) != 1 || b.Lines[0].Commit != c["other"] || b.Walked != 6 {
		t.Fatalf("blame 🎯: %+v walked %d, %v", b.Lines, b.Walked, err)
	}

	// At an older revision, the duplicate's second "- [ ] a" was added by "dup".
	b, err = f.h.Blame("gamma", "📋", "HEAD~3")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range b.Lines {
		got = append(got, l.Text+"@"+l.Short)
	}
	if want := []string{"- [ ] a@" + c["a"][:7], "- [ ] b@" + c["b"][:7], "- [ ] a@" + c["dup"][:7]}; !slices.Equal(got, want) {
		t.Fatalf("blame at HEAD~3: %v, want %v", got, want)
	}

	// A section that is empty has no lines; one the first commit already had is the first
	// commit's.
	b, err = f.h.Blame("gamma", "✅", "")
	if err != nil || len(b.Lines) != 0 {
		t.Fatalf("empty section: %+v %v", b.Lines, err)
	}
	b, err = f.h.Blame("gamma", "📡", "")
	head0, _ := f.h.Resolve("gamma", "HEAD~7")
	if err != nil || len(b.Lines) != 0 && b.Lines[0].Commit != head0.Hash {
		t.Fatalf("recovered delta: %+v %v", b.Lines, err)
	}
}

func TestDecisions(t *testing.T) {
	f, c := history(t)
	r, _ := f.svc.Store.Open("alpha")
	// D4 is written after the sync: not promoted yet.
	cp, _ := os.ReadFile(r.WorkPath(checkpoint.File))
	f.clock = f.clock.Add(time.Minute)
	res, err := f.svc.Write(r, checkpoint.File, []byte(strings.Replace(string(cp), "- D2: keep notes append-only", "- D2: keep notes append-only\n- D4: not promoted yet", 1)), checkpoint.CommitOptions{Trigger: checkpoint.TriggerWrite})
	if err != nil {
		t.Fatal(err)
	}
	d2 := knowledge.DecisionID("D2: keep notes append-only")
	if _, _, _, err := knowledge.Review(f.svc.Store, d2, knowledge.StateAccepted); err != nil {
		t.Fatal(err)
	}
	other := f.session("other", "six")
	f.notes(other, "- [decision] D9: from another session\n")
	f.sync(other, ckptsync.Full)

	got, err := f.h.Decisions(DecisionsQuery{Session: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ text, state, commit string }
	var rows []row
	for _, d := range got.Decisions {
		if d.ID != knowledge.DecisionID(d.Text) {
			t.Errorf("%s: id %s, want %s", d.Text, d.ID, knowledge.DecisionID(d.Text))
		}
		p := d.Provenance[0]
		if p.Session != "alpha" || p.Section != "🔑" && d.State != StateUnpromoted {
			t.Errorf("%s: provenance %+v", d.Text, d.Provenance)
		}
		if (d.Graph == nil) != (d.State == StateUnpromoted) {
			t.Errorf("%s: graph %+v in state %s", d.Text, d.Graph, d.State)
		}
		rows = append(rows, row{d.Text, d.State, p.Commit})
	}
	want := []row{
		{"D1: use xxhash", "pending", c[1]},
		{"D2: keep notes append-only", "accepted", c[3]},
		{"D4: not promoted yet", "unpromoted", res.Commit.String()},
		{"D3: blame walks first parents", "pending", c[4]},
	}
	if !slices.Equal(rows, want) {
		t.Fatalf("decisions\n%v\nwant\n%v", rows, want)
	}

	all, err := f.h.Decisions(DecisionsQuery{State: "pending"})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, d := range all.Decisions {
		texts = append(texts, d.Text)
		if len(d.Provenance) == 0 || d.Provenance[0].Time.IsZero() {
			t.Errorf("%s: provenance %+v", d.Text, d.Provenance)
		}
	}
	if want := []string{"D1: use xxhash", "D3: blame walks first parents", "D9: from another session"}; !slices.Equal(texts, want) {
		t.Fatalf("pending %v, want %v", texts, want)
	}
}

func TestSessions(t *testing.T) {
	f, c := history(t)
	r := f.session("beta", "eleven-en")
	f.notes(r, "- [note] one\n- [note] two\n")
	if err := hooks.UpdateSessions(f.svc.Store.Home, []string{"beta"}, func(st *hooks.State) error {
		s := st.Session("beta")
		s.Bound = "/src/project"
		s.Breaker = hooks.Breaker{Open: true, Failures: 3, Reason: "3 consecutive failed checkpoints"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	got, err := f.h.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("sessions %+v", got)
	}
	a, b := got[0], got[1]
	if a.ID != "alpha" || a.Template != "six" || a.Head != c[5] || a.Trigger != "write" || a.PendingNotes != 0 || a.Breaker.Open || a.Time.IsZero() {
		t.Fatalf("alpha %+v", a)
	}
	if b.ID != "beta" || b.Template != "eleven-en" || b.PendingNotes != 2 || !b.Breaker.Open || b.Breaker.Failures != 3 || b.Bound != "/src/project" || b.Worktree == "" {
		t.Fatalf("beta %+v", b)
	}
}

// Reading takes the shared lock: it waits out a writer's exclusive lock (ErrBusy past the
// timeout) and runs next to another reader.
func TestSharedLockOnly(t *testing.T) {
	f, _ := history(t)
	unlock, err := f.svc.Store.Lock("alpha", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.h.Log("alpha", LogQuery{Limit: 1}); err != nil {
		t.Fatalf("log beside a reader: %v", err)
	}
	if _, err := f.h.Blame("alpha", "🔑", ""); err != nil {
		t.Fatalf("blame beside a reader: %v", err)
	}
	unlock()
	unlock, err = f.svc.Store.Lock("alpha", true)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if _, err := f.h.Show("alpha", "", "", ""); !errors.Is(err, repo.ErrBusy) {
		t.Fatalf("show under a writer's lock: %v, want busy", err)
	}
}

// A reader kept open sees commits and packs made behind its back: go-git lists packs once,
// so a pack written after that (an automatic pack, gc) must make the reader start afresh.
func TestReaderSeesNewHistory(t *testing.T) {
	f, _ := history(t)
	r, _ := f.svc.Store.Open("alpha")
	if err := r.Pack(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.h.Log("alpha", LogQuery{}); err != nil {
		t.Fatal(err)
	}
	var last string
	for i, task := range []string{"C", "D"} {
		cp, _ := os.ReadFile(r.WorkPath(checkpoint.File))
		f.clock = f.clock.Add(time.Minute)
		res, err := f.svc.Write(r, checkpoint.File, []byte(strings.Replace(string(cp), "Task "+"BC"[i:i+1], "Task "+task, 1)), checkpoint.CommitOptions{Trigger: checkpoint.TriggerWrite})
		if err != nil {
			t.Fatal(err)
		}
		last = res.Commit.String()
	}
	if err := r.Pack(); err != nil { // a second pack; the loose objects go
		t.Fatal(err)
	}
	page, err := f.h.Log("alpha", LogQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if page.Commits[0].Hash != last || len(page.Commits) != 8 {
		t.Fatalf("log after pack: %d commits, first %s", len(page.Commits), page.Commits[0].Short)
	}
	if _, err := f.h.Blame("alpha", "🎯", ""); err != nil {
		t.Fatal(err)
	}
}

// Blame gives the same answer whether it trusts the trailers or reads every version, and
// reads commits made without trailers (by git, say) line by line.
func TestBlameTrailersAgree(t *testing.T) {
	f := newFixture(t)
	r := f.session("delta", "six")
	tasks := []string{}
	decisions := []string{"- first decision"}
	for i := range 40 {
		switch {
		case i%3 == 0:
			tasks = append(tasks, fmt.Sprintf("- [ ] task %d", i))
		case i%5 == 0 && len(tasks) > 1:
			tasks = append(tasks[:1], tasks[2:]...)
		case i%7 == 0:
			decisions = append(decisions, fmt.Sprintf("- decision %d", i))
		default:
			tasks = append(tasks, "- [ ] task again")
		}
		bodies := map[string]string{"📋": strings.Join(tasks, "\n"), "🔑": strings.Join(decisions, "\n"), "🎯": fmt.Sprint("step ", i)}
		if i%4 == 0 {
			// A commit made with git: no trailers.
			f.clock = f.clock.Add(time.Minute)
			files, err := r.WorkFiles()
			if err != nil {
				t.Fatal(err)
			}
			files[checkpoint.File] = six(bodies)
			if _, _, err := r.Commit(repo.CommitRequest{Files: files, Message: fmt.Sprintf("by hand %d\n", i)}); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(r.WorkPath(checkpoint.File), six(bodies), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		f.write(r, "write", bodies)
	}
	for _, sec := range []string{"📋", "🔑", "🎯"} {
		for _, rev := range []string{"", "HEAD~1", "HEAD~10", "HEAD~25"} {
			trustTrailers = true
			a, err := f.h.Blame("delta", sec, rev)
			if err != nil {
				t.Fatal(err)
			}
			trustTrailers = false
			b, err := New(f.svc).Blame("delta", sec, rev)
			trustTrailers = true
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a.Lines, b.Lines) {
				t.Fatalf("%s at %q:\ntrusting trailers %+v\nreading all %+v", sec, rev, a.Lines, b.Lines)
			}
			if len(a.Lines) == 0 {
				t.Fatalf("%s at %q: no lines", sec, rev)
			}
		}
	}
}

// A reader keeps a few sessions open, not every session or id it was ever asked about.
func TestReaderBoundsOpenSessions(t *testing.T) {
	f := newFixture(t)
	for i := range openSessions + 4 {
		f.session(fmt.Sprint("s", i), "six")
	}
	for i := range openSessions + 4 {
		if _, err := f.h.Log(fmt.Sprint("s", i), LogQuery{Limit: 1}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.h.Log(fmt.Sprint("ghost", i), LogQuery{}); !errors.Is(err, repo.ErrNotFound) {
			t.Fatal(err)
		}
	}
	if n := len(f.h.repos); n > openSessions {
		t.Fatalf("%d sessions open", n)
	}
	// The most recent ones are still open.
	if f.h.repos[repo.SessionID(fmt.Sprint("s", openSessions+3))] == nil {
		t.Fatal("the last session used was closed")
	}
}

// TestOlderTriggerForms: a history written before syncs said Ckpt-Trigger: sparse|full with
// a Ckpt-Cause (hook or cron triggers, with Ckpt-Mode or without) reads as the syncs they
// were: log's trigger and cause, its filters, the full flag and before-compact.
func TestOlderTriggerForms(t *testing.T) {
	f := newFixture(t)
	r := f.session("old", "six")
	var c []string
	commit := func(trailers string, bodies map[string]string) {
		t.Helper()
		f.clock = f.clock.Add(time.Minute)
		files, err := r.WorkFiles()
		if err != nil {
			t.Fatal(err)
		}
		files[checkpoint.File] = six(bodies)
		h, _, err := r.Commit(repo.CommitRequest{Files: files, Message: "checkpoint: old form\n\nCkpt-Session: old\n" + trailers})
		if err != nil {
			t.Fatal(err)
		}
		c = append(c, h.String())
	}
	commit("Ckpt-Trigger: cron\nCkpt-Sections: 📡\n", map[string]string{"📡": "**[2026-04-01T22:01Z]** a"})
	commit("Ckpt-Trigger: hook\nCkpt-Sections: 🔑,📡\nCkpt-Files: checkpoint.md,notes.md\n", map[string]string{"🔑": "- D1", "📡": "**[2026-04-01T22:01Z]** a"})
	commit("Ckpt-Trigger: hook\nCkpt-Mode: full\nCkpt-Sections: 📡\n", map[string]string{"🔑": "- D1", "📡": "**[2026-04-01T22:02Z]** b"})
	commit("Ckpt-Trigger: cron\nCkpt-Mode: sparse\nCkpt-Sections: 📡\n", map[string]string{"🔑": "- D1", "📡": "**[2026-04-01T22:03Z]** c"})
	commit("Ckpt-Trigger: sparse\nCkpt-Cause: hook:pre-commit\nCkpt-Sections: 📡\n", map[string]string{"🔑": "- D1", "📡": "**[2026-04-01T22:04Z]** d"})

	page, err := f.h.Log("old", LogQuery{Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, cm := range page.Commits {
		got = append(got, fmt.Sprintf("%s/%s/%v", cm.Trigger, cm.Cause, cm.Full))
	}
	want := []string{"sparse/hook:pre-commit/false", "sparse/cron/false", "full/hook/true", "full/hook/true", "sparse/cron/false"}
	if !slices.Equal(got, want) {
		t.Errorf("log reads %v\nwant       %v", got, want)
	}
	for _, tc := range []struct {
		filter string
		want   []string
	}{
		{"sparse", []string{c[4], c[3], c[0]}},
		{"full", []string{c[2], c[1]}},
		{"cron", []string{c[3], c[0]}},
		{"hook", []string{c[4], c[2], c[1]}},
		{"hook:pre-commit", []string{c[4]}},
	} {
		page, err := f.h.Log("old", LogQuery{Trigger: tc.filter})
		if err != nil {
			t.Fatal(err)
		}
		var hs []string
		for _, cm := range page.Commits {
			hs = append(hs, cm.Hash)
		}
		if !slices.Equal(hs, tc.want) {
			t.Errorf("--trigger %s: %d commits %v, want %v", tc.filter, len(hs), hs, tc.want)
		}
	}
	bc, err := f.h.Resolve("old", BeforeCompact)
	if err != nil || bc.Hash != c[1] {
		t.Fatalf("before-compact = %s, %v; want the parent of the newest full checkpoint %s", bc.Short, err, c[1][:7])
	}
}
