package remote

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/internal/config"
	"github.com/ckpt-dev/ckpt/repo"
)

// testService is a remote service over a store in a temporary directory, with a fixed clock
// and author, and the checkpoint service it commits through.
type testService struct {
	*Service
	cp *checkpoint.Service
}

func newTestService(t testing.TB, cfg *config.Config) *testService {
	t.Helper()
	opts := repo.DefaultOptions()
	opts.Fsync = false
	opts.LockTimeout = 2 * time.Second
	clock := time.Date(2026, 4, 1, 22, 0, 0, 0, time.UTC)
	opts.Now = func() time.Time { return clock }
	opts.Author = repo.Signature{Name: "ckpt test", Email: "test@example.com"}
	cp := checkpoint.New(repo.NewStore(t.TempDir(), opts), cfg)
	s := New(cp)
	cp.FinishPull = s.FinishPull
	return &testService{Service: s, cp: cp}
}

// Write commits a session file through the checkpoint service.
func (ts *testService) Write(r *repo.Repo, name string, content []byte, o checkpoint.CommitOptions) (checkpoint.Result, error) {
	return ts.cp.Write(r, name, content, o)
}

// session creates a session from template and writes checkpoint into it.
func (ts *testService) session(t testing.TB, id, template string, cp, notes []byte) *repo.Repo {
	t.Helper()
	r, _, err := ts.cp.InitSession(repo.SessionID(id), template, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if cp != nil {
		if _, err := ts.cp.Write(r, checkpoint.File, cp, checkpoint.CommitOptions{Trigger: checkpoint.TriggerWrite}); err != nil {
			t.Fatal(err)
		}
	}
	if notes != nil {
		if err := os.WriteFile(r.WorkPath(checkpoint.NotesFile), notes, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// bigSix is the corpus six checkpoint grown to about size bytes.
func bigSix(size int) []byte {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "corpus", "six", "checkpoint.md"))
	if err != nil {
		panic(err)
	}
	src := string(b)
	heads := []string{"### 📋 Task Stack\n", "### ✅ This Session Completed\n", "### 🔑 Key Decisions\n", "### ⚠️ Notes & Blockers\n"}
	per := (size - len(src)) / len(heads)
	for i, h := range heads {
		var b strings.Builder
		for j := 0; b.Len() < per; j++ {
			fmt.Fprintf(&b, "- item %d of section %d: checkpoint text with `code_%d` and a path /srv/app/%d/config.toml\n", j, i, j, j)
		}
		src = strings.Replace(src, h, h+b.String(), 1)
	}
	return []byte(src)
}
