// Package benchhistory builds the 10,000-commit session that the history and MCP
// benchmarks read (issue 14's targets), once per machine: it is kept under the temporary
// directory (or $CKPT_BENCH_HISTORY) between runs.
package benchhistory

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ckpt-dev/ckpt/repo"
)

// Commits is the length of the history.
const Commits = 10000

// Session is the id of the session.
const Session = "bench"

// Checkpoint is version v of an 8 KB six checkpoint: every version changes one line of the
// Task Stack; the Key Decisions hold a line from the first version (so blaming them walks
// the whole history) and gain one line every 1,000 versions.
func Checkpoint(v int) []byte {
	var b bytes.Buffer
	b.WriteString("# Session Checkpoint\n\n_last_updated: 2026-04-01T22:00Z_\n_session_id: bench_\n\n---\n\n")
	b.WriteString("### 🎯 Current Task\nKeep the benchmark honest\n\n### 📋 Task Stack\n")
	for l := range 60 {
		rev := 0
		if l == v%60 {
			rev = v
		}
		fmt.Fprintf(&b, "- [ ] task %02d: keep `checkpoint_manager.py` in step with the template (rev %6d)\n", l, rev)
	}
	b.WriteString("\n### ✅ This Session Completed\n- nothing yet\n\n### 🔑 Key Decisions\n")
	b.WriteString("- Use xxhash instead of md5 for file hashing: 10-20x faster\n")
	for k := 1; k*1000 <= v; k++ {
		fmt.Fprintf(&b, "- Decision %d: taken at version %d\n", k, k*1000)
	}
	b.WriteString("\n### 📡 Recovered Delta\n_delta_since_last: 2026-04-01T22:00Z → 2026-04-01T22:00Z_\n\n### ⚠️ Notes & Blockers\n")
	for l := range 30 {
		fmt.Fprintf(&b, "- note %02d: a blocker seen on the CI runner, kept for the record of this session\n", l)
	}
	b.WriteString("\n---\n")
	return b.Bytes()
}

// message is what ckpt writes for version v: a write of the Task Stack, the Key
// Decisions too every 1,000 versions, and a full checkpoint every 100.
func message(v int) string {
	trigger, secs := "write", "📋"
	if v%1000 == 0 {
		secs = "📋,🔑"
	}
	if v%100 == 0 {
		trigger = "full"
	}
	return fmt.Sprintf("checkpoint(%s): update 📋 Task Stack (%d)\n\nCkpt-Session: bench\nCkpt-Trigger: %s\nCkpt-Sections: %s\n", trigger, v, trigger, secs)
}

// Home returns the store holding the session, building it when missing (about a minute).
func Home() (string, error) {
	home := os.Getenv("CKPT_BENCH_HISTORY")
	if home == "" {
		home = filepath.Join(os.TempDir(), "ckpt-bench-history")
	}
	done := filepath.Join(home, "complete")
	if _, err := os.Stat(done); err == nil {
		return home, nil
	}
	_ = os.RemoveAll(home)
	opts := repo.DefaultOptions()
	opts.Fsync = false
	opts.Author = repo.Signature{Name: "ckpt bench", Email: "bench@example.com"}
	clock := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	opts.Now = func() time.Time { clock = clock.Add(time.Second); return clock }
	st := repo.NewStore(home, opts)
	r, _, err := st.Init(Session, repo.InitOptions{
		Files:   map[string][]byte{"checkpoint.md": Checkpoint(0), "notes.md": []byte("# Notes\n")},
		Config:  map[string]string{"template": "six"},
		Message: message(0),
	})
	if err != nil {
		return "", err
	}
	for v := 1; v < Commits; v++ {
		if _, _, err := r.Commit(repo.CommitRequest{Files: map[string][]byte{"checkpoint.md": Checkpoint(v), "notes.md": []byte("# Notes\n")}, Message: message(v)}); err != nil {
			return "", err
		}
	}
	if err := r.Pack(); err != nil {
		return "", err
	}
	return home, os.WriteFile(done, nil, 0o644)
}
