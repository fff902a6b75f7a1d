package modeltest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// stats are the figures of a run.
type stats struct {
	mu        sync.Mutex
	sequences int
	ops       int
	commands  int // ckpt processes among the operations
	killsSent int
	kills     int // processes a SIGKILL ended
	conc      int // commands during which the agent appended
	vanished  int // killed writes' stdin tokens that are nowhere (allowed)
	failures  int
	failed    []uint64       // their seeds
	codes     map[string]int // "kind exit N" -> count
	gits      int            // git processes the harness ran
	fscks     int            // of which git fsck
	scans     int            // of which history scans (git rev-list --objects)
	ckptTime  time.Duration  // spent in ckpt processes
	checkTime time.Duration  // spent checking the invariant
}

func (s *stats) add(f func(*stats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func (s *stats) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var keys []string
	for k := range s.codes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%d sequences, %d operations (%d ckpt processes), %d kills sent, %d landed, %d commands with concurrent appends, %d killed-write tokens gone (allowed), %d failures",
		s.sequences, s.ops, s.commands, s.killsSent, s.kills, s.conc, s.vanished, s.failures)
	fmt.Fprintf(&b, "\ntime in ckpt processes %s, in checks %s; %d git processes (%d fsck, %d history scans)", s.ckptTime.Round(time.Millisecond), s.checkTime.Round(time.Millisecond), s.gits, s.fscks, s.scans)
	if len(s.failed) > 0 {
		slices.Sort(s.failed)
		fmt.Fprintf(&b, "\nfailing seeds: %v", s.failed)
	}
	b.WriteString("\noutcomes:")
	for i, k := range keys {
		if i%6 == 0 {
			b.WriteString("\n ")
		}
		fmt.Fprintf(&b, " %s: %d;", k, s.codes[k])
	}
	return b.String()
}

// TestModel runs the model: seeds 1 to 200 by default (the short run of make test; 40
// with -short), one seed with -seed=N, or, with -soak=D, longer sequences from -start on
// for D.
func TestModel(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	st := &stats{codes: map[string]int{}}
	began := time.Now()
	long := *flagSoak > 0 || *flagLong
	seeds := make(chan uint64)
	go func() {
		defer close(seeds)
		switch {
		case *flagSeed != 0:
			seeds <- *flagSeed
		case *flagSoak > 0:
			for s := *flagStart; time.Since(began) < *flagSoak; s++ {
				seeds <- s
			}
		default:
			n := *flagSequences
			if testing.Short() {
				n = min(n, 40)
			}
			for i := range n {
				seeds <- *flagStart + uint64(i)
			}
		}
	}()
	var wg sync.WaitGroup
	for range max(1, *flagWorkers) {
		wg.Go(func() {
			for seed := range seeds {
				seq := generate(seed, long)
				dir, err := os.MkdirTemp("", fmt.Sprintf("ckpt-model-%d-", seed))
				if err != nil {
					t.Error(err)
					continue
				}
				report, err := runSequence(seq, dir, st)
				st.add(func(s *stats) { s.sequences++ })
				if err != nil {
					st.add(func(s *stats) { s.failures++; s.failed = append(s.failed, seed) })
					kept := ""
					if *flagKeep {
						kept = "\nthe stores are kept in " + dir
					}
					t.Errorf("seed %d: %v\nreplay: go test ./internal/modeltest -run TestModel -seed=%d%s -v\nsetting: %s\n%s%s", seed, err, seed, replayFlags(long), seq, report, kept)
				} else if *flagOps || *flagSeed != 0 {
					t.Logf("seed %d passed\nsetting: %s\n%s", seed, seq, report)
				}
				if err == nil || !*flagKeep {
					os.RemoveAll(dir)
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%s\nin %s", st, time.Since(began).Round(time.Millisecond))
	if *flagSoak > 0 {
		fmt.Printf("soak from seed %d for %s: %s\n", *flagStart, time.Since(began).Round(time.Second), st)
	}
}

// replayFlags are the flags besides -seed that generated the failing sequence.
func replayFlags(long bool) string {
	s := ""
	if long {
		s += " -long"
	}
	if *flagWithout != "" {
		s += " -without=" + *flagWithout
	}
	return s
}

// runSequence runs one sequence in dir and checks the invariant after every step. It
// returns the log of operations with their outcomes, and the first failure.
func runSequence(seq *sequence, dir string, st *stats) (string, error) {
	w, err := newWorld(seq, dir, st)
	if err != nil {
		return "", err
	}
	report := func() string {
		return "operations:\n  " + strings.Join(w.log, "\n  ") + "\n"
	}
	fail := func(format string, args ...any) (string, error) {
		return report(), fmt.Errorf(format, args...)
	}
	if err := w.setup(); err != nil {
		return fail("setup: %v", err)
	}
	if err := w.check(); err != nil {
		return fail("after setup: %v", err)
	}
	for i := range seq.ops {
		o := &seq.ops[i]
		w.step = i + 1
		w.now = w.now.Add(o.advance)
		desc := o.describe(seq.tmpl, seq.homes)
		outcome, err := w.do(o)
		w.log = append(w.log, fmt.Sprintf("%d: %s: %s", w.step, desc, outcome))
		st.add(func(s *stats) {
			s.ops++
			if o.kind.runsCkpt() {
				s.commands++
				code := outcome
				if i := strings.LastIndex(code, "exit "); i >= 0 {
					code = strings.Fields(code[i:])[0] + " " + strings.Fields(code[i:])[1]
				} else if strings.Contains(code, "killed") {
					code = "killed"
				}
				s.codes[o.kind.String()+" "+code]++
				if o.kill {
					s.killsSent++
				}
				if o.conc > 0 {
					s.conc++
				}
			}
		})
		if err != nil {
			return fail("step %d (%s): %v", w.step, desc, err)
		}
		if err := w.check(); err != nil {
			return fail("after step %d (%s): %v", w.step, desc, err)
		}
	}
	w.step = len(seq.ops) + 1
	w.now = w.now.Add(time.Minute)
	if err := w.settle(); err != nil {
		return fail("settling at the end: %v", err)
	}
	if err := w.check(); err != nil {
		return fail("after settling: %v", err)
	}
	return report(), nil
}

// check is the invariant after a step: every repository sound, nothing written lost.
func (w *world) check() error {
	began := time.Now()
	defer func() { w.stats.add(func(s *stats) { s.checkTime += time.Since(began) }) }()
	if err := w.fsck(); err != nil {
		return err
	}
	return w.checkTokens()
}

// setup makes the homes: a session in the first, and with two homes a bare remote that
// the first pushes to and the second is cloned from.
func (w *world) setup() error {
	a := w.homes[0]
	if err := os.MkdirAll(a.dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(a.dir, "config.toml"), w.config(), 0o644); err != nil {
		return err
	}
	run := func(h *home, args ...string) error {
		r, err := w.ckpt(h, nil, nil, args...)
		if err != nil {
			return err
		}
		w.log = append(w.log, fmt.Sprintf("setup %s: ckpt %s: %s", h.name, strings.Join(args, " "), r.short()))
		return expect(r, 0)
	}
	if err := run(a, "init", "-s", sessionID, "--template", w.seq.tmpl.name); err != nil {
		return err
	}
	if len(w.homes) < 2 {
		return nil
	}
	w.remote = filepath.Join(w.dir, "remote.git")
	if _, err := w.git(w.dir, nil, "init", "-q", "--bare", w.remote); err != nil {
		return err
	}
	if err := run(a, "remote", "add", "origin", w.remote); err != nil {
		return err
	}
	// A sync first, so that the knowledge repository exists and travels too.
	if err := run(a, "sync", "-s", sessionID); err != nil {
		return err
	}
	if err := run(a, "push"); err != nil {
		return err
	}
	b := w.homes[1]
	if err := run(a, "clone", w.remote, b.dir); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(b.dir, "config.toml"), w.config(), 0o644)
}
