package proctest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/internal/gittest"
)

// TestCrashDuringSyncSpills kills full syncs that spill Key Decisions (a small budget makes
// every sync move some) at random moments, and runs each killed sync again, as the next
// hook or cron tick would. No entry may be in checkpoint-decisions.md twice, none may be
// lost, every decision must reach the knowledge graph once, and git must find both
// repositories sound.
func TestCrashDuringSyncSpills(t *testing.T) {
	rounds := 40
	if testing.Short() {
		rounds = 12
	}
	seed := crashSeed(t)
	t.Logf("seed %d (CKPT_CRASH_SEED=%d replays this schedule)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x7370696c6c))

	s := newStore(t)
	if err := os.WriteFile(filepath.Join(s.home, "config.toml"), []byte("[budgets.six]\n\"🔑\" = 700\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const id = "spill"
	s.mustRun(t, nil, "init", "-s", id)
	dir := s.sessionDir(id)
	notes := filepath.Join(dir, "notes.md")

	var (
		decisions []string
		window    = 20 * time.Millisecond
		lifetimes []time.Duration
		kills     int
	)
	for round := range rounds {
		f, err := os.OpenFile(notes, os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			d := fmt.Sprintf("Decision %03d-%d: keep the spill file free of duplicates after any kill", round, i)
			decisions = append(decisions, d)
			fmt.Fprintf(f, "- [decision] %s\n", d)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}

		cmd := s.command(nil, "sync", "-s", id)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		began := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var timer *time.Timer
		done := make(chan struct{})
		switch rng.IntN(4) {
		case 0: // left alone
		case 1: // anywhere
			proc := cmd.Process
			timer = time.AfterFunc(time.Duration(rng.Int64N(int64(window))), func() { _ = proc.Signal(syscall.SIGKILL) })
		default:
			// Right after the sync replaced one of the files of its commit, before the
			// others and the ref: the windows a random kill rarely hits.
			name := []string{"checkpoint-decisions.md", "checkpoint.md", "notes.md"}[rng.IntN(3)]
			go killOnChange(cmd.Process, filepath.Join(dir, name), done)
		}
		res := finish(cmd, &out, &errb, cmd.Wait())
		close(done)
		if timer != nil {
			timer.Stop()
		}
		switch {
		case res.killed:
			kills++
			// The next sync (a hook, a cron tick) runs on whatever the kill left.
			s.mustRun(t, nil, "sync", "-s", id)
		case res.code == 0:
			if timer == nil {
				lifetimes = append(lifetimes, time.Since(began))
				window = max(20*time.Millisecond, recentMedian(lifetimes, 10))
			}
		default:
			t.Fatalf("round %d: %s", round, res)
		}
		spill, _ := os.ReadFile(filepath.Join(dir, "checkpoint-decisions.md"))
		seen := map[string]bool{}
		for _, l := range strings.Split(string(spill), "\n") {
			if !strings.HasPrefix(l, "- ") {
				continue
			}
			if seen[l] {
				t.Fatalf("round %d: %q is twice in checkpoint-decisions.md", round, l)
			}
			seen[l] = true
		}
	}
	t.Logf("%d syncs, %d killed, final kill window %s", rounds, kills, window.Round(time.Millisecond))
	if kills == 0 {
		t.Fatal("no kill landed: the test proved nothing")
	}

	cp, _ := os.ReadFile(filepath.Join(dir, "checkpoint.md"))
	spill, _ := os.ReadFile(filepath.Join(dir, "checkpoint-decisions.md"))
	if len(spill) == 0 {
		t.Fatal("nothing spilled: the budget did not bite")
	}
	kg := s.mustRun(t, nil, "kg", "list")
	for _, d := range decisions {
		in := strings.Count(string(cp), "- "+d+"\n") + strings.Count(string(spill), "- "+d+"\n")
		if in != 1 {
			t.Errorf("%q is %d times in checkpoint.md and checkpoint-decisions.md, want once", d, in)
		}
		if strings.Count(kg, d) != 1 {
			t.Errorf("%q is %d times in the knowledge graph, want once", d, strings.Count(kg, d))
		}
	}
	gittest.Fsck(t, dir)
	gittest.Clean(t, dir)
	gittest.Fsck(t, filepath.Join(s.home, "knowledge"))
}

// killOnChange sends SIGKILL to proc as soon as the file at path is replaced (its inode,
// size or time changes), or returns when done is closed.
func killOnChange(proc *os.Process, path string, done <-chan struct{}) {
	before, _ := os.Stat(path)
	for {
		select {
		case <-done:
			return
		default:
		}
		now, err := os.Stat(path)
		if err == nil && (before == nil || !os.SameFile(before, now) || now.Size() != before.Size() || !now.ModTime().Equal(before.ModTime())) {
			_ = proc.Signal(syscall.SIGKILL)
			return
		}
		time.Sleep(20 * time.Microsecond)
	}
}
