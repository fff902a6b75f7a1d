package ui

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/hooks"
	"github.com/ckpt-dev/ckpt/internal/gittest"
	"github.com/ckpt-dev/ckpt/knowledge"
	"github.com/ckpt-dev/ckpt/repo"
	ckptsync "github.com/ckpt-dev/ckpt/sync"
	"github.com/ckpt-dev/ckpt/templates"
)

// The script an agent might have pasted into its checkpoint: if the UI ever let it run,
// the page's title and a global would change.
const (
	evilBlock  = "<script>document.title='pwned';window.ckptPwned=1</script>"
	evilInline = `<img src=x onerror="window.ckptPwned=2">`
)

// fixture is a store made the way agents make one: writes, a full sync that promotes
// decisions to the knowledge graph, a review, a decision that supersedes another, a
// second session on another template, a breaker left open, and a code commit that names
// a checkpoint.
type fixture struct {
	t     testing.TB
	home  string
	svc   *checkpoint.Service
	clock time.Time
	// heads are the commits written, per session, oldest first.
	heads map[string][]repo.Hash
	// evil is the commit whose checkpoint holds the script.
	evil repo.Hash
	// first and superseding are knowledge graph ids.
	first, superseding string
	code               string // the code repository bound to alpha
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{t: t, home: t.TempDir(), clock: time.Date(2026, 4, 1, 22, 0, 0, 0, time.UTC), heads: map[string][]repo.Hash{}}
	opts := repo.DefaultOptions()
	opts.Fsync = false
	opts.LockTimeout = 300 * time.Millisecond
	opts.Now = func() time.Time { return f.clock }
	opts.Author = repo.Signature{Name: "ckpt test", Email: "test@example.com"}
	f.svc = checkpoint.New(repo.NewStore(f.home, opts), nil)
	return f
}

func (f *fixture) store() *repo.Store { return f.svc.Store }

func (f *fixture) init(id, template string) *repo.Repo {
	f.t.Helper()
	r, h, err := f.svc.InitSession(repo.SessionID(id), template, "", nil)
	if err != nil {
		f.t.Fatal(err)
	}
	f.heads[id] = append(f.heads[id], h)
	return r
}

func (f *fixture) write(r *repo.Repo, content string) repo.Hash {
	f.t.Helper()
	f.clock = f.clock.Add(7 * time.Minute)
	res, err := f.svc.Write(r, checkpoint.File, []byte(content), checkpoint.CommitOptions{Trigger: "write"})
	if err != nil {
		f.t.Fatal(err)
	}
	if !res.Changed {
		f.t.Fatalf("write to %s changed nothing", r.ID)
	}
	f.heads[r.ID] = append(f.heads[r.ID], res.Commit)
	return res.Commit
}

func (f *fixture) fullSync(r *repo.Repo, notes string) {
	f.t.Helper()
	f.clock = f.clock.Add(11 * time.Minute)
	if err := os.WriteFile(r.WorkPath(checkpoint.NotesFile), []byte(notes), 0o644); err != nil {
		f.t.Fatal(err)
	}
	rep, err := ckptsync.New(f.svc).Sync(r, ckptsync.Options{Mode: ckptsync.Full})
	if err != nil {
		f.t.Fatal(err)
	}
	if h, err := r.Head(); err == nil {
		f.heads[r.ID] = append(f.heads[r.ID], h)
	}
	_ = rep
}

func corpus(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "corpus", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func newStore(t testing.TB) *fixture {
	t.Helper()
	f := newFixture(t)
	alpha := f.init("alpha", "six")
	cp := corpus(t, "six/checkpoint.md")
	f.write(alpha, cp)
	cp = strings.Replace(cp, "xxhash instead of md5", "blake3 instead of md5", 1)
	f.write(alpha, cp)
	f.first = knowledge.DecisionID("Use blake3 instead of md5 for file hashing: 10-20x faster")
	f.fullSync(alpha, corpus(t, "six/notes.md"))
	if _, _, _, err := knowledge.Review(f.svc.Store, knowledge.DecisionID("Drop the Signal Trap approach in favour of a cron job backup (more reliable)"), knowledge.StateAccepted); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(alpha.WorkPath(checkpoint.File))
	if err != nil {
		t.Fatal(err)
	}
	cp = string(b)
	superseding := "Hash with blake3 everywhere, keyed per session (supersedes " + f.first + ")"
	f.superseding = knowledge.DecisionID(superseding)
	cp = strings.Replace(cp, "### 🔑 Key Decisions\n", "### 🔑 Key Decisions\n- "+superseding+"\n", 1)
	f.write(alpha, cp)
	f.fullSync(alpha, "# Notes\n\n- [task] (P2) Benchmark the Circuit Breaker under load\n")
	b, err = os.ReadFile(alpha.WorkPath(checkpoint.File))
	if err != nil {
		t.Fatal(err)
	}
	cp = strings.Replace(string(b), "### ⚠️ Notes & Blockers\n", "### ⚠️ Notes & Blockers\n"+evilBlock+"\n\n- pasted from a web page: "+evilInline+" <b>bold?</b>\n", 1)
	f.evil = f.write(alpha, cp)

	beta := f.init("beta", "eleven-en")
	_ = beta
	f.write(beta, elevenCheckpoint(t, "Ship the UI", "write the handlers"))
	f.write(beta, elevenCheckpoint(t, "Ship the UI", "test in a real browser"))
	err = hooks.UpdateSessions(f.home, []string{"beta"}, func(st *hooks.State) error {
		b := &st.Session("beta").Breaker
		b.Failures, b.Open, b.Reason = 3, true, "3 consecutive failed checkpoints, last: disk full"
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f.bindCode(alpha)
	return f
}

// bindCode makes a git repository whose last commit names alpha's head, as the
// prepare-commit-msg hook would, and binds alpha to it.
func (f *fixture) bindCode(alpha *repo.Repo) {
	f.t.Helper()
	if _, err := gittest.Run(f.t, f.home, "--version"); err != nil {
		return
	}
	dir := f.t.TempDir()
	gittest.Git(f.t, dir, "init", "-q", "-b", "main")
	head := f.heads["alpha"][len(f.heads["alpha"])-1]
	gittest.Git(f.t, dir, "commit", "-q", "--allow-empty", "-m", "Add the hashing module\n\nCkpt-Checkpoint: alpha@"+repo.ShortHash(head))
	f.code = dir
	err := hooks.UpdateSessions(f.home, []string{"alpha"}, func(st *hooks.State) error {
		st.Session("alpha").Bound = dir
		return nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
}

func elevenCheckpoint(t testing.TB, intent, action string) string {
	t.Helper()
	tm, err := templates.Load("", "eleven-en")
	if err != nil {
		t.Fatal(err)
	}
	cp := strings.Replace(string(tm.Source), "> (none)", "> "+intent, 1)
	cp = strings.Replace(cp, "possible_\n(none)", "possible_\n"+action, 1)
	return strings.Replace(cp, "no immediate code or file_\n(none)", "no immediate code or file_\n- Render on the server", 1)
}

// server returns a UI handler over the fixture's store that accepts Host 127.0.0.1:8765.
func (f *fixture) server(t testing.TB, token string) *Server {
	t.Helper()
	s, err := New(Options{Store: f.store(), Token: token, Hosts: HostPolicy{Port: "8765", Loopback: true},
		Log: func(format string, args ...any) { t.Logf("server: "+format, args...) }})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const testHost = "127.0.0.1:8765"

func do(t testing.TB, h http.Handler, method, target string, mod ...func(*http.Request)) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	req.Host = testHost
	for _, m := range mod {
		m(req)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func get(t testing.TB, h http.Handler, target string) *httptest.ResponseRecorder {
	t.Helper()
	return do(t, h, http.MethodGet, target)
}
