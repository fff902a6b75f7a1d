package proctest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/internal/gittest"
)

// gcPrune is what TestCrashDuringGC passes to --prune: "now" makes every gc delete every
// unreachable object, so each kill can land among deletions.
var gcPrune = []string{"--prune", "now"}

// TestCrashDuringGC runs `ckpt gc` over and over on a session that keeps growing (old
// sparse checkpoints to squash, a rejected write, unreachable objects to prune, sometimes a
// pending merge whose commit only MERGE_HEAD names) and kills about half of the runs with
// SIGKILL at a random moment. After every run, killed or not, the real git must find the
// repository sound (fsck --full --strict, which also reads every reflog entry), main's
// history must hold every checkpoint that is not a squashed sparse one with the same tree
// and message, every checkpoint written must still be readable from some ref or reflog, and
// MERGE_HEAD's commit must be there.
func TestCrashDuringGC(t *testing.T) {
	rounds := 60
	if testing.Short() {
		rounds = 15
	}
	seed := crashSeed(t)
	t.Logf("seed %d (CKPT_CRASH_SEED=%d replays this schedule)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x6763))

	s := newStore(t)
	const id = "gc"
	s.mustRun(t, nil, "init", "-s", id)
	dir := s.sessionDir(id)
	cp := filepath.Join(dir, "checkpoint.md")
	var tasks []string // every Current Task line committed
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	commit := func(trigger string) {
		t.Helper()
		task := fmt.Sprintf("GC crash test checkpoint %d (%s)", len(tasks), trigger)
		if err := os.WriteFile(cp, checkpoint(task), 0o644); err != nil {
			t.Fatal(err)
		}
		day = day.Add(time.Hour)
		cmd := s.command(nil, "commit", "-s", id, "--trigger", trigger)
		cmd.Env = append(cmd.Env, "CKPT_NOW="+day.Format(time.RFC3339))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("ckpt commit: %v\n%s", err, out)
		}
		tasks = append(tasks, task)
	}
	bad := checkpoint("rejected")
	bad = bytes.Replace(bad, []byte("### 🎯 Current Task"), []byte("### 🎯 Task"), 1)
	if r := s.run(bad, "write", "-s", id); r.code != 3 {
		t.Fatalf("rejected write: %s", r)
	}

	var (
		kills, landed int
		phases        = map[string]int{}
		lifetimes     []time.Duration
		window        = 30 * time.Millisecond
		mergeHead     string
	)
	start := time.Now()
	for round := range rounds {
		// Grow: a run of old sparse checkpoints between full ones, and loose garbage.
		commit("full")
		for range 2 + rng.IntN(3) {
			commit("sparse")
		}
		commit("manual")
		for i := range 3 {
			hashObject(t, s, dir, fmt.Sprintf("garbage %d of round %d\n", i, round))
		}
		// Now and then a pending merge of a commit nothing else names.
		squash := true
		if mergeHead == "" && rng.IntN(4) == 0 {
			tip := strings.TrimSpace(s.git(t, dir, "rev-parse", "main"))
			mergeHead = strings.TrimSpace(s.git(t, dir, "commit-tree", "-p", tip, "-m", fmt.Sprintf("theirs %d", round), tip+"^{tree}"))
			if err := os.WriteFile(filepath.Join(dir, ".git", "MERGE_HEAD"), []byte(mergeHead+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		} else if mergeHead != "" {
			_ = os.Remove(filepath.Join(dir, ".git", "MERGE_HEAD"))
			mergeHead = ""
		}
		if mergeHead != "" {
			squash = false // refused during a merge; a plain gc must still keep MERGE_HEAD
		}
		before := keptHistory(t, s, dir)
		packsBefore := packNames(dir)

		args := append([]string{"gc", "-s", id}, gcPrune...)
		if squash {
			args = append(args, "--squash-sparse-older-than", "1d")
		}
		cmd := s.command(nil, args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		began := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var timer *time.Timer
		done := make(chan struct{})
		killAt := rng.IntN(6)
		proc := cmd.Process
		switch {
		case killAt < 3: // left alone
		case killAt == 3: // anywhere in a typical run
			kills++
			timer = time.AfterFunc(time.Duration(rng.Int64N(int64(window))), func() { _ = proc.Signal(syscall.SIGKILL) })
		case killAt == 4: // in its last stretch
			kills++
			timer = time.AfterFunc(window*3/5+time.Duration(rng.Int64N(int64(window*2/5))), func() { _ = proc.Signal(syscall.SIGKILL) })
		default:
			// Right after the new pack is in place, while old objects are deleted: that
			// stretch lasts a millisecond or two, so watch for it.
			kills++
			delay := time.Duration(rng.Int64N(int64(2 * time.Millisecond)))
			go func() {
				for {
					select {
					case <-done:
						return
					default:
					}
					for p := range packNames(dir) {
						if !packsBefore[p] {
							time.Sleep(delay)
							_ = proc.Signal(syscall.SIGKILL)
							return
						}
					}
					time.Sleep(200 * time.Microsecond)
				}
			}()
		}
		res := finish(cmd, &out, &errb, cmd.Wait())
		close(done)
		took := time.Since(began)
		if timer != nil {
			timer.Stop()
		}
		switch {
		case res.killed:
			landed++
			phases[killPhase(dir, packsBefore)]++
		case res.code == 0:
			if killAt < 3 {
				lifetimes = append(lifetimes, took)
				window = max(30*time.Millisecond, recentMedian(lifetimes, 10))
			}
		default:
			t.Fatalf("round %d: ckpt %s: %s", round, strings.Join(args, " "), res)
		}

		// Sound after every run, killed or not.
		gittest.Fsck(t, dir)
		s.git(t, dir, "rev-list", "--reflog", "--all", "--objects")
		if after := keptHistory(t, s, dir); after != before {
			t.Fatalf("round %d (killed %v): main's non-sparse history changed\nbefore:\n%s\nafter:\n%s", round, res.killed, before, after)
		}
		if mergeHead != "" {
			s.git(t, dir, "rev-list", mergeHead)
		}
		requireTasksKept(t, s, dir, tasks)
		if got, want := taskOf([]byte(s.git(t, dir, "show", "main:checkpoint.md"))), tasks[len(tasks)-1]; got != want {
			t.Fatalf("round %d: main's checkpoint.md says %q, want %q", round, got, want)
		}
		// ckpt reads through go-git, which fails on states git shrugs off (a pack without
		// its index): it must read the whole history too.
		if got, want := taskOf([]byte(s.mustRun(t, nil, "show", "-s", id, "--rev", "HEAD~1"))), ""; got == want {
			t.Fatalf("round %d: ckpt show HEAD~1 has no task", round)
		}
		s.mustRun(t, nil, "log", "-s", id)
	}
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	t.Logf("%d gc runs in %s: %d kills sent, %d landed (%d before the new pack was started, %d while it was written, %d while old objects were deleted, %d after); final kill window %s; %d commits on main, %d packs at the end",
		rounds, time.Since(start).Round(time.Millisecond), kills, landed, phases["before"], phases["writing"], phases["deleting"], phases["after"],
		window.Round(time.Millisecond), len(strings.Fields(s.git(t, dir, "rev-list", "main"))), len(packs))
	if landed == 0 || (!testing.Short() && phases["deleting"] == 0) {
		t.Errorf("no kill landed while old objects were deleted: the test proved little")
	}
	// The session still works: one more commit and a full gc leave it clean.
	commit("full")
	s.mustRun(t, nil, append([]string{"gc", "-s", id}, gcPrune...)...)
	gittest.Fsck(t, dir)
	gittest.Clean(t, dir)
}

// hashObject writes a blob nothing names, as a killed writer would leave one.
func hashObject(t *testing.T, s *store, dir, content string) {
	t.Helper()
	cmd := exec.Command("git", "-C", dir, "hash-object", "-w", "--stdin")
	cmd.Env, cmd.Stdin = s.env, strings.NewReader(content)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git hash-object: %v\n%s", err, out)
	}
}

// keptHistory is main's first-parent history without sparse checkpoints: tree and subject
// of each commit, which a squash must keep as they are.
func keptHistory(t *testing.T, s *store, dir string) string {
	t.Helper()
	var b strings.Builder
	for _, l := range strings.Split(s.git(t, dir, "log", "--first-parent", "--format=%T %s", "main"), "\n") {
		if l != "" && !strings.Contains(l, "checkpoint(sparse)") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// requireTasksKept fails unless every task line is in some checkpoint.md that a ref or a
// reflog entry still reaches.
func requireTasksKept(t *testing.T, s *store, dir string, tasks []string) {
	t.Helper()
	var blobs []string
	for _, l := range strings.Split(s.git(t, dir, "rev-list", "--objects", "--all", "--reflog"), "\n") {
		if h, path, ok := strings.Cut(l, " "); ok && path == "checkpoint.md" {
			blobs = append(blobs, h)
		}
	}
	cmd := exec.Command("git", "-C", dir, "cat-file", "--batch")
	cmd.Env, cmd.Stdin = s.env, strings.NewReader(strings.Join(blobs, "\n")+"\n")
	all, err := cmd.Output()
	if err != nil {
		t.Fatalf("git cat-file --batch: %v", err)
	}
	for _, task := range tasks {
		if !bytes.Contains(all, []byte("\n"+task+"\n")) {
			t.Fatalf("checkpoint %q is in no ref's or reflog's history any more", task)
		}
	}
}

// packNames lists the packs (with an index) of a repository.
func packNames(dir string) map[string]bool {
	idx, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.idx"))
	out := map[string]bool{}
	for _, p := range idx {
		if _, err := os.Stat(strings.TrimSuffix(p, ".idx") + ".pack"); err == nil {
			out[filepath.Base(p)] = true
		}
	}
	return out
}

// killPhase says where a kill left gc's repack: not started (no new pack, nothing
// temporary), writing the new pack (a temporary file, or a pack without its index),
// deleting (the new pack in place, loose objects or old packs left), or done.
func killPhase(dir string, packsBefore map[string]bool) string {
	objects := filepath.Join(dir, ".git", "objects")
	tmp, _ := filepath.Glob(filepath.Join(objects, "pack", "tmp_*"))
	tmpIdx, _ := filepath.Glob(filepath.Join(objects, "pack", ".*.tmp-*"))
	packs, _ := filepath.Glob(filepath.Join(objects, "pack", "*.pack"))
	now := packNames(dir)
	if len(tmp)+len(tmpIdx) > 0 || len(packs) > len(now) {
		return "writing"
	}
	fresh := false
	for p := range now {
		fresh = fresh || !packsBefore[p]
	}
	if !fresh {
		return "before"
	}
	loose, _ := filepath.Glob(filepath.Join(objects, "[0-9a-f][0-9a-f]", "*"))
	if len(loose) > 0 || len(now) > 1 {
		return "deleting"
	}
	return "after"
}
