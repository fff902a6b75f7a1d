package proctest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/internal/gittest"
)

// TestConcurrentWriters runs 4 writers, each a loop of 100 `ckpt write` processes, against
// one session at once. Every write must exit 0 and become its own commit: 1 + 400 commits,
// every content in history, fsck clean, status clean.
func TestConcurrentWriters(t *testing.T) {
	const workers = 4
	perWorker := 100
	if testing.Short() {
		perWorker = 25
	}
	s := newStore(t)
	const id = "conc"
	s.mustRun(t, nil, "init", "-s", id)
	dir := s.sessionDir(id)

	contents := make([][][]byte, workers)
	latencies := make([][]time.Duration, workers)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				c := checkpoint(fmt.Sprintf("Concurrent write %d of writer %d", i, w))
				began := time.Now()
				res := s.run(c, "write", "-s", id)
				latencies[w] = append(latencies[w], time.Since(began))
				if res.code != 0 {
					t.Errorf("writer %d, write %d: %s", w, i, res)
					continue
				}
				contents[w] = append(contents[w], c)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := slices.Concat(contents...)
	lat := slices.Concat(latencies...)
	slices.Sort(lat)
	t.Logf("%d writes by %d writers in %s; latency median %s, max %s (the default lock timeout is 10s)",
		len(lat), workers, elapsed.Round(time.Millisecond), lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond))

	want := 1 + workers*perWorker
	if n, _ := strconv.Atoi(strings.TrimSpace(s.git(t, dir, "rev-list", "--count", "main"))); n != want {
		t.Errorf("git rev-list --count main = %d, want %d", n, want)
	}
	if n := strings.Count(s.git(t, dir, "log", "--format=%H"), "\n"); n != want {
		t.Errorf("git log shows %d commits, want %d", n, want)
	}
	s.requireHealthy(t, dir)
	s.requireInHistory(t, dir, all)
	gittest.Clean(t, dir)
}
