package history

import (
	"testing"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/internal/benchhistory"
	"github.com/ckpt-dev/ckpt/repo"
)

// Benchmarks of issue 14's targets on a 10,000-commit session: a page of the log, a show
// and a diff ≤ 20 ms warm, blame of a section ≤ 200 ms. The figures are in BENCHMARKS.md.

// benchHistory returns the service over the 10,000-commit store of internal/benchhistory.
func benchHistory(b *testing.B) *checkpoint.Service {
	b.Helper()
	home, err := benchhistory.Home()
	if err != nil {
		b.Fatal(err)
	}
	opts := repo.DefaultOptions()
	opts.Fsync = false
	return checkpoint.New(repo.NewStore(home, opts), nil)
}

func benchReader(b *testing.B) *Reader {
	h := New(benchHistory(b))
	// Warm, as a server that has answered once: the whole history read.
	if p, err := h.Log("bench", LogQuery{}); err != nil || len(p.Commits) != benchhistory.Commits {
		b.Fatal(len(p.Commits), err)
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
		if err != nil || res.Walked != benchhistory.Commits {
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

// BenchmarkBlameWholeCold is BenchmarkBlameWhole on a reader that has read nothing yet: a
// server's first blame.
// It reports CPU time too: on this shared machine the wall time mostly measures the load.
func BenchmarkBlameWholeCold(b *testing.B) {
	svc := benchHistory(b)
	cpu0, n := benchhistory.CPUTime(), 0
	for b.Loop() {
		if _, err := New(svc).Blame("bench", "🔑", ""); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64((benchhistory.CPUTime()-cpu0).Microseconds())/1000/float64(n), "cpu-ms/op")
}
