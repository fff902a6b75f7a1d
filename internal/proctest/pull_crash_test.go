package proctest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/internal/gittest"
)

// TestKilledPullConverges has two stores share a session through a bare remote. Each round
// the other store pushes a change; this one, every other round, makes a change of its own,
// so its pull merges or fast-forwards; the pull is killed with SIGKILL right after it
// replaced checkpoint.md (before main moved), at a random moment, or not at all. The next
// pull, a push and a pull on the other side must leave both stores at the remote's head,
// with one merge commit per round that needed one and no commit recording the files a
// killed pull wrote.
func TestKilledPullConverges(t *testing.T) {
	rounds := 12
	if testing.Short() {
		rounds = 6
	}
	seed := crashSeed(t)
	t.Logf("seed %d (CKPT_CRASH_SEED=%d replays this schedule)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x70756c6c))

	remote := filepath.Join(t.TempDir(), "remote.git")
	a, b := newStore(t), newStore(t)
	a.git(t, filepath.Dir(remote), "init", "-q", "--bare", remote)
	const id = "alpha"
	a.mustRun(t, nil, "init", "-s", id)
	a.mustRun(t, checkpoint("Round 0 of the pull test"), "write", "-s", id)
	a.mustRun(t, nil, "remote", "add", "origin", remote)
	a.mustRun(t, nil, "push")
	b.mustRun(t, nil, "clone", remote, b.home)
	ad, bd := a.sessionDir(id), b.sessionDir(id)

	edit := func(s *store, dir, old, new string) {
		t.Helper()
		cp, err := os.ReadFile(filepath.Join(dir, "checkpoint.md"))
		if err != nil {
			t.Fatal(err)
		}
		s.mustRun(t, []byte(strings.Replace(string(cp), old, new, 1)), "write", "-s", id)
	}
	head := func(s *store, dir string) string { return strings.TrimSpace(s.git(t, dir, "rev-parse", "HEAD")) }

	merges, kills, landed := 0, 0, 0
	task, decision := "Round 0 of the pull test", "Ask the real git CLI"
	for round := 1; round <= rounds; round++ {
		next := fmt.Sprintf("Round %d of the pull test", round)
		edit(b, bd, task, next)
		task = next
		b.mustRun(t, nil, "push")
		if round%2 == 1 {
			d := fmt.Sprintf("Decision of round %d: ask the real git CLI", round)
			edit(a, ad, decision, d)
			decision = d
			merges++
		}

		cmd := a.command(nil, "pull")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		var timer *time.Timer
		switch rng.IntN(4) {
		case 0: // left alone
		case 1:
			proc := cmd.Process
			timer = time.AfterFunc(time.Duration(rng.Int64N(int64(40*time.Millisecond))), func() { _ = proc.Signal(syscall.SIGKILL) })
			kills++
		default:
			go killOnChange(cmd.Process, filepath.Join(ad, "checkpoint.md"), done)
			kills++
		}
		res := finish(cmd, &out, &errb, cmd.Wait())
		close(done)
		if timer != nil {
			timer.Stop()
		}
		switch {
		case res.killed:
			landed++
		case res.code != 0:
			t.Fatalf("round %d: pull: %s", round, res)
		}

		a.mustRun(t, nil, "pull")
		a.mustRun(t, nil, "push")
		b.mustRun(t, nil, "pull")
		ra := strings.TrimSpace(a.git(t, remote, "rev-parse", "refs/heads/sessions/"+id))
		if ha, hb := head(a, ad), head(b, bd); ha != ra || hb != ra {
			t.Fatalf("round %d: heads differ: this store %s, the other %s, the remote %s", round, ha, hb, ra)
		}
		if n, _ := strconv.Atoi(strings.TrimSpace(a.git(t, ad, "rev-list", "--merges", "--count", "HEAD"))); n != merges {
			t.Fatalf("round %d: %d merge commits, want %d\n%s", round, n, merges, a.git(t, ad, "log", "--graph", "--oneline"))
		}
		if log := a.git(t, ad, "log", "--format=%s"); strings.Contains(log, "record the work tree") {
			t.Fatalf("round %d: a pull recorded the files a killed pull wrote:\n%s", round, log)
		}
	}
	t.Logf("%d rounds, %d kills sent, %d landed, %d merges", rounds, kills, landed, merges)
	if landed == 0 {
		t.Fatal("no kill landed: the test proved nothing")
	}
	for _, dir := range []string{ad, bd} {
		gittest.Fsck(t, dir)
		gittest.Clean(t, dir)
	}
	if _, err := os.Stat(filepath.Join(ad, ".git", "CKPT_PULL")); err == nil {
		t.Error("the pull's note outlived the pulls")
	}
}
