package proctest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// logLine is one line of `ckpt log` without colour.
var logLine = regexp.MustCompile(`^[0-9a-f]{7} \d{4}-\d\d-\d\d \d\d:\d\d  checkpoint\((write|manual)\): \S.*$`)

// TestReadersDuringWrites runs `ckpt log -n 5`, `ckpt show` and a plain read of the work
// tree's checkpoint.md in loops while two writers commit. A reader may be told the session
// is busy (exit 4) but must never fail otherwise, and must never see a torn file: every
// checkpoint it prints or reads is one that some write (or init) produced.
func TestReadersDuringWrites(t *testing.T) {
	const writers, readers = 2, 2
	perWriter := 60
	if testing.Short() {
		perWriter = 20
	}
	s := newStore(t)
	const id = "readers"
	s.mustRun(t, nil, "init", "-s", id)
	dir := s.sessionDir(id)

	// Every checkpoint a reader may legitimately see.
	valid := map[string]bool{s.mustRun(t, nil, "show", "-s", id): true}
	content := func(w, i int) []byte {
		return checkpoint(fmt.Sprintf("Write %d of writer %d while readers read", i, w))
	}
	for w := range writers {
		for i := range perWriter {
			valid[string(content(w, i))] = true
		}
	}
	// Five commits first, so that log -n 5 always has five lines to print.
	for i := range 5 {
		c := checkpoint(fmt.Sprintf("Warm-up write %d", i))
		valid[string(c)] = true
		s.mustRun(t, c, "write", "-s", id)
	}

	var done atomic.Bool
	var writersWG, readersWG sync.WaitGroup
	for w := range writers {
		writersWG.Go(func() {
			for i := range perWriter {
				if res := s.run(content(w, i), "write", "-s", id); res.code != 0 {
					t.Errorf("writer %d, write %d: %s", w, i, res)
				}
			}
		})
	}
	var logs, shows, diskReads, busy atomic.Int64
	for r := range readers {
		readersWG.Go(func() {
			for k := 0; !done.Load(); k++ {
				switch k % 3 {
				case 0:
					res := s.run(nil, "log", "-s", id, "-n", "5")
					if !readerOK(t, r, "log", res, &busy) {
						continue
					}
					lines := strings.Split(strings.TrimSuffix(res.stdout, "\n"), "\n")
					if len(lines) != 5 {
						t.Errorf("reader %d: ckpt log -n 5 printed %d lines:\n%s", r, len(lines), res.stdout)
					}
					for _, l := range lines {
						if !logLine.MatchString(l) {
							t.Errorf("reader %d: ckpt log printed a malformed line %q", r, l)
						}
					}
					logs.Add(1)
				case 1:
					res := s.run(nil, "show", "-s", id)
					if !readerOK(t, r, "show", res, &busy) {
						continue
					}
					if !valid[res.stdout] {
						t.Errorf("reader %d: ckpt show printed a checkpoint no write produced (%d bytes):\n%s", r, len(res.stdout), res.stdout)
					}
					shows.Add(1)
				case 2:
					b, err := os.ReadFile(filepath.Join(dir, "checkpoint.md"))
					if err != nil {
						t.Errorf("reader %d: read the work tree: %v", r, err)
					} else if !valid[string(b)] {
						t.Errorf("reader %d: the work tree's checkpoint.md is torn (%d bytes):\n%s", r, len(b), b)
					}
					diskReads.Add(1)
				}
			}
		})
	}
	start := time.Now()
	writersWG.Wait()
	done.Store(true)
	readersWG.Wait()
	t.Logf("%d writes in %s while readers ran %d ckpt log, %d ckpt show (%d told busy), %d reads of the work tree",
		writers*perWriter, time.Since(start).Round(time.Millisecond), logs.Load(), shows.Load(), busy.Load(), diskReads.Load())
	if logs.Load() == 0 || shows.Load() == 0 {
		t.Errorf("the readers never got through: the test proved nothing")
	}
	s.requireHealthy(t, dir)
}

// readerOK accepts exit 0 and exit 4 (busy, counted); anything else fails the test. It
// reports whether there is output to check.
func readerOK(t *testing.T, r int, what string, res result, busy *atomic.Int64) bool {
	t.Helper()
	switch res.code {
	case 0:
		if res.stderr != "" {
			t.Errorf("reader %d: ckpt %s exited 0 but wrote to stderr: %s", r, what, res.stderr)
		}
		return true
	case 4:
		busy.Add(1)
		return false
	}
	t.Errorf("reader %d: ckpt %s: %s", r, what, res)
	return false
}
