package proctest

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/internal/gittest"
)

// crashSeed picks the kill schedule: CKPT_CRASH_SEED replays a failing run.
func crashSeed(t *testing.T) uint64 {
	if v := os.Getenv("CKPT_CRASH_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("CKPT_CRASH_SEED=%q: %v", v, err)
		}
		return n
	}
	return uint64(time.Now().UnixNano())
}

// TestCrashDuringWrites runs 300 `ckpt write` processes one after the other and kills about
// half of them with SIGKILL at a random moment of their life. Afterwards git must find the
// repository sound, every write that exited 0 must be in history, and one more `ckpt
// commit` must leave a clean work tree.
func TestCrashDuringWrites(t *testing.T) {
	writes := 300
	if testing.Short() {
		writes = 60
	}
	seed := crashSeed(t)
	t.Logf("seed %d (CKPT_CRASH_SEED=%d replays this schedule)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x636b7074))

	s := newStore(t)
	// Pack often (about every 40 commits instead of every 330) so that kills also land
	// while loose objects are packed, packs merged and loose objects removed.
	if err := os.WriteFile(filepath.Join(s.home, "config.toml"), []byte("[core]\npack_threshold = 100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const id = "crash"
	s.mustRun(t, nil, "init", "-s", id)
	dir := s.sessionDir(id)

	start := time.Now()
	var (
		reported  [][]byte        // contents of the writes that exited 0
		killed    [][]byte        // contents of the writes a SIGKILL ended
		lifetimes []time.Duration // of the writes left alone
		window    = 15 * time.Millisecond
		sentKills int
		slow      int           // writes that took over a second
		slowTime  time.Duration // and how long they took in all
	)
	for i := range writes {
		content := checkpoint(fmt.Sprintf("Crash test write %d: the kill may land anywhere", i))
		cmd := s.command(content, "write", "-s", id)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		began := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var timer *time.Timer
		if rng.IntN(2) == 0 {
			// Anywhere from before main runs to the typical end of a write: the window
			// follows the median of recent writes, so with fsync on (tens of ms) the
			// kills still reach the object, ref and index writes.
			sentKills++
			delay := time.Duration(rng.Int64N(int64(window)))
			proc := cmd.Process
			timer = time.AfterFunc(delay, func() { _ = proc.Signal(syscall.SIGKILL) })
		}
		res := finish(cmd, &out, &errb, cmd.Wait())
		took := time.Since(began)
		if timer != nil {
			timer.Stop()
		}
		switch {
		case res.killed:
			killed = append(killed, content)
		case res.code == 0:
			reported = append(reported, content)
			if timer == nil {
				lifetimes = append(lifetimes, took)
				window = max(15*time.Millisecond, recentMedian(lifetimes, 20))
			}
			if took > time.Second {
				slow++ // waited for a stale lock file to age
				slowTime += took
			}
		default:
			t.Errorf("write %d: %s", i, res)
		}
	}
	elapsed := time.Since(start)

	// Kills that landed after the commit point: the write was reported to nobody, but it is
	// in history. Not an error; it says how far into the write the kills reached.
	lateKills := 0
	blobs := s.historyBlobs(t, dir)
	for _, id := range s.blobIDs(t, killed) {
		if blobs[id] {
			lateKills++
		}
	}
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	t.Logf("%d writes in %s: %d exited 0, %d kills sent, %d landed (%d of those after the commit was made), %d writes took over 1s (%s in all: a stale lock file must age 2s), final kill window %s, %d packs at the end",
		writes, elapsed.Round(time.Millisecond), len(reported), sentKills, len(killed), lateKills, slow, slowTime.Round(time.Millisecond), window.Round(time.Millisecond), len(packs))
	if len(killed) == 0 {
		t.Errorf("no kill landed: the test proved nothing")
	}

	s.requireHealthy(t, dir)
	s.requireInHistory(t, dir, reported)

	// A kill between the work-tree write and the ref update leaves new bytes on disk: one
	// more commit records them and leaves git status clean.
	s.mustRun(t, nil, "commit", "-s", id)
	gittest.Clean(t, dir)
	gittest.Fsck(t, dir)
	// A lock file left by a killed writer is removed by the next commit that needs it; none
	// may outlive that commit, or git itself would refuse to commit here.
	_ = filepath.WalkDir(filepath.Join(dir, ".git"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".lock") {
			t.Errorf("lock file left behind: %s", p)
		}
		return nil
	})
	disk, err := os.ReadFile(filepath.Join(dir, "checkpoint.md"))
	if err != nil {
		t.Fatal(err)
	}
	if head := s.mustRun(t, nil, "show", "-s", id); head != string(disk) {
		t.Errorf("after ckpt commit, HEAD's checkpoint.md differs from the disk")
	}
}

// recentMedian is the median of the last n durations.
func recentMedian(ds []time.Duration, n int) time.Duration {
	recent := append([]time.Duration(nil), ds[max(0, len(ds)-n):]...)
	sort.Slice(recent, func(i, j int) bool { return recent[i] < recent[j] })
	return recent[len(recent)/2]
}
