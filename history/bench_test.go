package history

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/repo"
	ckptsync "github.com/ckpt-dev/ckpt/sync"
)

// Benchmarks of issue 14's targets on a 10,000-commit session: a page of the log, a show
// and a diff ≤ 20 ms warm, blame of a section ≤ 200 ms. The figures are in BENCHMARKS.md.

// BenchCommits is the length of the benchmark history.
const BenchCommits = 10000

// benchCheckpoint is version v of an 8 KB six checkpoint: every version changes one line of
// the Task Stack; the Key Decisions hold a line from version 1 (so blaming them walks the
// whole history) and gain one line every 1,000 versions.
func benchCheckpoint(v int) []byte {
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

func benchMessage(v int) string {
	trigger, secs := "write", "📋"
	if v%1000 == 0 {
		secs = "📋,🔑"
	}
	if v%100 == 0 {
		trigger = "full"
	}
	return fmt.Sprintf("checkpoint(%s): update 📋 Task Stack (%d)\n\nCkpt-Session: bench\nCkpt-Trigger: %s\nCkpt-Sections: %s\n", trigger, v, trigger, secs)
}

// benchHistory returns a store holding session "bench" with BenchCommits commits, built
// once per process; CKPT_BENCH_HISTORY=DIR keeps it between runs.
func benchHistory(b *testing.B) *ckptsync.Service {
	b.Helper()
	home := os.Getenv("CKPT_BENCH_HISTORY")
	if home == "" {
		home = filepath.Join(os.TempDir(), "ckpt-bench-history")
	}
	opts := repo.DefaultOptions()
	opts.Fsync = false
	opts.Author = repo.Signature{Name: "ckpt bench", Email: "bench@example.com"}
	clock := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	opts.Now = func() time.Time { clock = clock.Add(time.Second); return clock }
	st := repo.NewStore(home, opts)
	svc := ckptsync.New(st, nil)
	done := filepath.Join(home, "complete")
	if _, err := os.Stat(done); err == nil {
		return svc
	}
	_ = os.RemoveAll(home)
	start := time.Now()
	r, _, err := st.Init("bench", repo.InitOptions{
		Files:   map[string][]byte{"checkpoint.md": benchCheckpoint(0), "notes.md": []byte("# Notes\n")},
		Config:  map[string]string{"template": "six"},
		Message: benchMessage(0),
	})
	if err != nil {
		b.Fatal(err)
	}
	for v := 1; v < BenchCommits; v++ {
		if _, _, err := r.Commit(repo.CommitRequest{Files: map[string][]byte{"checkpoint.md": benchCheckpoint(v), "notes.md": []byte("# Notes\n")}, Message: benchMessage(v)}); err != nil {
			b.Fatal(err)
		}
	}
	if err := r.Pack(); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("built %d commits in %s", BenchCommits, time.Since(start))
	return svc
}

func benchReader(b *testing.B) *Reader {
	h := New(benchHistory(b))
	if _, err := h.Log("bench", LogQuery{Limit: 1}); err != nil { // warm: the repository is open
		b.Fatal(err)
	}
	return h
}

func BenchmarkLog20(b *testing.B) {
	h := benchReader(b)
	for b.Loop() {
		p, err := h.Log("bench", LogQuery{Limit: 20, Files: true})
		if err != nil || len(p.Commits) != 20 {
			b.Fatal(len(p.Commits), err)
		}
	}
}

// BenchmarkLogSection20 lists the 20 newest commits that changed a section changed once in
// 1,000 commits, with the scan bound the MCP server uses.
func BenchmarkLogSectionScan(b *testing.B) {
	h := benchReader(b)
	for b.Loop() {
		if _, err := h.Log("bench", LogQuery{Limit: 20, Section: "🔑", Scan: 2000}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkShowSection(b *testing.B) {
	h := benchReader(b)
	for b.Loop() {
		if _, err := h.Show("bench", "HEAD~5000", "", "🔑"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkShowBeforeCompact(b *testing.B) {
	h := benchReader(b)
	for b.Loop() {
		if _, err := h.Show("bench", BeforeCompact, "", ""); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDiffHead(b *testing.B) {
	h := benchReader(b)
	for b.Loop() {
		if _, err := h.Diff("bench", DiffQuery{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDiffFar(b *testing.B) {
	h := benchReader(b)
	for b.Loop() {
		if _, err := h.Diff("bench", DiffQuery{From: "HEAD~9000"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBlameWhole blames the Key Decisions, whose first line dates from version 1: the
// walk reads all 10,000 commits.
func BenchmarkBlameWhole(b *testing.B) {
	h := benchReader(b)
	for b.Loop() {
		res, err := h.Blame("bench", "🔑", "")
		if err != nil || res.Walked != BenchCommits {
			b.Fatal(res.Walked, err)
		}
	}
}

// BenchmarkBlameRecent blames the Task Stack, whose lines all changed in the last 60
// commits.
func BenchmarkBlameRecent(b *testing.B) {
	h := benchReader(b)
	for b.Loop() {
		if _, err := h.Blame("bench", "📋", ""); err != nil {
			b.Fatal(err)
		}
	}
}
