package search

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/repo"
)

var ckptWrite = checkpoint.CommitOptions{Trigger: checkpoint.TriggerWrite}

const (
	benchSessions = 1000
	benchVersions = 100
)

// TestMain removes the benchmark store, which outlives any one benchmark.
func TestMain(m *testing.M) {
	code := m.Run()
	if benchTemp != "" {
		os.RemoveAll(benchTemp)
	}
	os.Exit(code)
}

var (
	benchOnce  sync.Once
	benchHome  string
	benchTemp  string // removed by TestMain; "" when CKPT_BENCH_STORE keeps the store
	benchBuilt time.Duration
	benchErr   error
)

// benchStore returns a store of benchSessions sessions of benchVersions versions each,
// built once per process. CKPT_BENCH_STORE=DIR keeps it in DIR across runs (it takes
// minutes to build); TMPDIR=/dev/shm builds it faster.
func benchStore(b *testing.B) string {
	if testing.Short() {
		b.Skip("builds 1,000 sessions × 100 versions")
	}
	benchOnce.Do(func() {
		benchHome = os.Getenv("CKPT_BENCH_STORE")
		if benchHome == "" {
			benchTemp, benchErr = os.MkdirTemp("", "ckpt-search-bench-")
			benchHome = benchTemp
		}
		if benchErr != nil {
			return
		}
		done := filepath.Join(benchHome, "bench-complete")
		if _, err := os.Stat(done); err == nil {
			return
		}
		start := time.Now()
		benchErr = buildBenchStore(b, benchHome)
		benchBuilt = time.Since(start)
		if benchErr == nil {
			benchErr = os.WriteFile(done, nil, 0o644)
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchHome
}

// benchWords is a vocabulary of made-up words: lines built from it are as varied as
// real notes, and a query's selectivity is known.
var benchWords = func() []string {
	syl := []string{"ka", "to", "ri", "mon", "sel", "va", "dex", "pu", "lor", "zen", "qi", "fa", "no", "ter", "bu", "xi"}
	rng := rand.New(rand.NewSource(1))
	out := make([]string, 2000)
	for i := range out {
		var w strings.Builder
		for range 2 + rng.Intn(3) {
			w.WriteString(syl[rng.Intn(len(syl))])
		}
		out[i] = w.String()
	}
	return out
}()

func benchSentence(rng *rand.Rand, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = benchWords[rng.Intn(len(benchWords))]
	}
	return strings.Join(ws, " ")
}

// buildBenchStore writes every version through sync's Write, as an agent would: each
// version rewrites the current task, completes a step, and every fourth adds a decision.
func buildBenchStore(tb testing.TB, home string) error {
	f := newFixtureIn(tb, home)
	var wg sync.WaitGroup
	errs := make(chan error, benchSessions)
	next := make(chan int)
	var clock sync.Mutex
	now := f.clock
	f.svc.Store.Opts.Now = func() time.Time {
		clock.Lock()
		defer clock.Unlock()
		now = now.Add(time.Second)
		return now
	}
	for range 8 { // mostly waiting on the file system: more writers than CPUs
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				if err := benchSession(f, k); err != nil {
					errs <- err
				}
			}
		}()
	}
	for k := range benchSessions {
		next <- k
	}
	close(next)
	wg.Wait()
	close(errs)
	return <-errs
}

func benchSession(f *fixture, k int) error {
	rng := rand.New(rand.NewSource(int64(k)))
	r, _, err := f.svc.InitSession(repo.SessionID(fmt.Sprintf("s%04d", k)), "six", "", nil)
	if err != nil {
		return err
	}
	cp := string(benchBase)
	for v := range benchVersions {
		task := fmt.Sprintf("Step %d of session %d: %s.", v, k, benchSentence(rng, 8))
		cp = replaceSection(cp, "### 🎯 Current Task\n", task+"\n")
		cp = strings.Replace(cp, "\n### 🔑 Key Decisions\n", fmt.Sprintf("- [x] step %d: %s (`src/%s_%d.go`)\n\n### 🔑 Key Decisions\n", v, benchSentence(rng, 10), benchWords[rng.Intn(len(benchWords))], v), 1)
		if v%4 == 3 {
			cp = strings.Replace(cp, "\n### 📡 Recovered Delta\n", fmt.Sprintf("- Use %s for %s: %s\n\n### 📡 Recovered Delta\n", benchWords[rng.Intn(len(benchWords))], benchSentence(rng, 3), benchSentence(rng, 8)), 1)
		}
		res, err := f.svc.Write(r, "checkpoint.md", []byte(cp), ckptWrite)
		if err != nil {
			return fmt.Errorf("session %d version %d: %w", k, v, err)
		}
		if !res.Changed {
			return fmt.Errorf("session %d version %d: nothing changed", k, v)
		}
	}
	return nil
}

// replaceSection replaces the body of the section under heading with body.
func replaceSection(cp, heading, body string) string {
	i := strings.Index(cp, heading) + len(heading)
	j := i + strings.Index(cp[i:], "\n### ")
	return cp[:i] + body + cp[j:]
}

// benchBase is the six template with a few lines in each section: what a session starts
// from before its versions pile up.
var benchBase = []byte(`# Session Checkpoint

_last_updated: 2026-04-01T22:00Z_
_session_id: bench_

---

### 🎯 Current Task
Start.

### 📋 Task Stack
- [ ] (P0) Implement the SPARSE trigger logic in checkpoint_manager.py
- [ ] (P1) Add Circuit Breaker degradation

### ✅ This Session Completed
- [x] Designed the 6-section checkpoint template (21:30)

### 🔑 Key Decisions
- Use xxhash instead of md5 for file hashing: 10-20x faster

### 📡 Recovered Delta
_delta_since_last: 2026-04-01T21:45Z → 2026-04-01T22:00Z_

### ⚠️ Notes & Blockers
- after the Circuit Breaker degrades, recovery is manual

---
`)

// indexBytes is the total size of the index files.
func indexBytes(b *testing.B, home string) int64 {
	var n int64
	err := filepath.Walk(filepath.Join(home, "state", "search"), func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

var (
	benchIndexOnce  sync.Once
	benchIndexBuild time.Duration
	benchIndexStats Stats
)

// BenchmarkSearchHistory1000x100 is the target: a history search over 1,000
// sessions × 100 versions once indexed, ≤ 200 ms. It reports the index's size and the time
// to build it from nothing (every commit of every session read from git).
func BenchmarkSearchHistory1000x100(b *testing.B) {
	home := benchStore(b)
	st := repo.NewStore(home, repo.DefaultOptions())
	s := New(st)
	benchIndexOnce.Do(func() {
		if err := os.RemoveAll(filepath.Join(home, "state", "search")); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		var err error
		if benchIndexStats, err = s.Index(""); err != nil {
			b.Fatal(err)
		}
		benchIndexBuild = time.Since(start)
	})
	if benchBuilt > 0 {
		b.Logf("store built in %v", benchBuilt.Round(time.Second))
	}
	b.Logf("index: %d repositories, %d commits, %d lines, %d bytes, built in %v",
		benchIndexStats.Repos, benchIndexStats.Commits, benchIndexStats.Lines, benchIndexStats.Bytes, benchIndexBuild.Round(time.Millisecond))
	for _, tc := range []struct {
		name  string
		terms []string
	}{
		{"word", []string{benchWords[7]}},
		{"two-words", []string{benchWords[7], benchWords[11]}},
		{"phrase", []string{"circuit breaker degrades"}},
		{"absent", []string{"no such text anywhere"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var hits int
			for b.Loop() {
				h, err := s.Search(Query{Terms: tc.terms, History: true})
				if err != nil {
					b.Fatal(err)
				}
				hits = len(h)
			}
			b.ReportMetric(float64(hits), "hits")
			b.ReportMetric(float64(indexBytes(b, home)), "index-bytes")
			b.ReportMetric(benchIndexBuild.Seconds(), "build-s")
		})
	}
}

// BenchmarkSearchCurrent1000 searches the work trees of 1,000 sessions: no index.
func BenchmarkSearchCurrent1000(b *testing.B) {
	home := benchStore(b)
	s := New(repo.NewStore(home, repo.DefaultOptions()))
	var hits int
	for b.Loop() {
		h, err := s.Search(Query{Terms: []string{benchWords[7]}})
		if err != nil {
			b.Fatal(err)
		}
		hits = len(h)
	}
	b.ReportMetric(float64(hits), "hits")
}

// BenchmarkIndexUpdate times a history search right after one session got a new commit:
// only that commit is indexed, and that session's index file rewritten.
func BenchmarkIndexUpdate(b *testing.B) {
	f := newFixture(b)
	if err := benchSession(f, 0); err != nil {
		b.Fatal(err)
	}
	r, err := f.store().Open("s0000")
	if err != nil {
		b.Fatal(err)
	}
	s := New(f.store())
	if _, err := s.Index(""); err != nil {
		b.Fatal(err)
	}
	cp, err := os.ReadFile(r.WorkPath("checkpoint.md"))
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		next := replaceSection(string(cp), "### 🎯 Current Task\n", fmt.Sprintf("Update %d.\n", i))
		if _, err := f.svc.Write(r, "checkpoint.md", []byte(next), ckptWrite); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if st, err := s.Index(""); err != nil || st.Commits != 1 {
			b.Fatalf("%+v %v", st, err)
		}
	}
}
