package proctest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ckptcheckpoint "github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/hooks"
	"github.com/ckpt-dev/ckpt/internal/config"
	"github.com/ckpt-dev/ckpt/repo"
)

// The benchmarks of issues 4 and 5: triggers and remotes at the scale of a store with a
// thousand sessions. The stores are built in-process (fsync off) and the measured commands
// run as real processes, as a user's git, cron or shell runs them.

// bigStore makes n sessions of commits commits each (an 8 KB-ish six checkpoint with a
// small change per commit), records them in the trigger state with a baseline, and binds
// the first `bound` of them to workTree (the others to another directory).
func bigStore(b testing.TB, s *store, n, commits, bound int, workTree string) {
	b.Helper()
	opts := repo.DefaultOptions()
	opts.Fsync = false
	opts.Now = func() time.Time { return time.Date(2026, 4, 1, 22, 0, 0, 0, time.UTC) }
	st := repo.NewStore(s.home, opts)
	svc := ckptcheckpoint.New(st, &config.Config{})
	base := string(checkpoint("scale"))
	var repos []*repo.Repo
	for i := range n {
		id := repo.SessionID(fmt.Sprintf("s%04d", i))
		r, _, err := svc.InitSession(id, "six", "", nil)
		if err != nil {
			b.Fatal(err)
		}
		for c := range commits {
			cp := strings.Replace(base, "scale", fmt.Sprintf("scale %d/%d", i, c), 1)
			if _, err := svc.Write(r, ckptcheckpoint.File, []byte(cp), ckptcheckpoint.CommitOptions{Trigger: ckptcheckpoint.TriggerWrite}); err != nil {
				b.Fatal(err)
			}
		}
		repos = append(repos, r)
	}
	elsewhere := b.TempDir()
	err := hooks.UpdateState(s.home, func(state *hooks.State) error {
		for i, r := range repos {
			ss := state.Session(r.ID)
			ss.WorkDir, ss.Bound = r.WorkDir, elsewhere
			if i < bound {
				ss.Bound = workTree
			}
			obs, err := hooks.ObserveSession(ss.WorkDir, "")
			if err != nil {
				return err
			}
			ss.Recorded(hooks.ActionFull, obs, opts.Now())
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

// withCkptOnPath is the store's environment with the built ckpt first on PATH, as the
// installed hook scripts need.
func withCkptOnPath(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			kv = "PATH=" + filepath.Dir(ckptBin) + ":" + strings.TrimPrefix(kv, "PATH=")
		}
		out = append(out, kv)
	}
	return out
}

func timed(b *testing.B, cmd *exec.Cmd) time.Duration {
	b.Helper()
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return time.Since(start)
}

// BenchmarkGitCommitHooks1000: what ckpt's pre-commit and prepare-commit-msg hooks add to a
// git commit in a store of 1,000 sessions, when nothing changed ("idle") and when the one
// session bound to the repository needs a sparse checkpoint ("sparse"). Each iteration
// times `git commit --allow-empty` in a repository with the hooks and in one without; the
// metric added-ms is the median difference.
func BenchmarkGitCommitHooks1000(b *testing.B) {
	s := newStore(b)
	s.env = withCkptOnPath(s.env)
	work := b.TempDir()
	with, without := filepath.Join(work, "with"), filepath.Join(work, "without")
	for _, d := range []string{with, without} {
		s.git(b, work, "init", "-q", d)
	}
	bigStore(b, s, 1000, 1, 1, with)
	install := s.command(nil, "hooks", "install", "--git", "--repo", with)
	timed(b, install)
	for _, mode := range []string{"idle", "sparse"} {
		b.Run(mode, func(b *testing.B) {
			var added []time.Duration
			for i := 0; b.Loop(); i++ {
				if mode == "sparse" {
					// the harness rewrote the checkpoint: the hook takes a sparse checkpoint
					cp := strings.Replace(string(checkpoint("scale")), "scale", fmt.Sprintf("scale changed %d", i), 1)
					if err := os.WriteFile(filepath.Join(s.sessionDir("s0000"), "checkpoint.md"), []byte(cp), 0o644); err != nil {
						b.Fatal(err)
					}
				}
				commit := func(dir string) time.Duration {
					cmd := exec.Command("git", "-C", dir, "commit", "-q", "--allow-empty", "-m", "x")
					cmd.Env = s.env
					return timed(b, cmd)
				}
				t1 := commit(with)
				t0 := commit(without)
				added = append(added, t1-t0)
			}
			b.ReportMetric(float64(median(added).Microseconds())/1000, "added-ms")
		})
	}
	msg := s.git(b, with, "log", "-1", "--format=%B")
	if !strings.Contains(msg, "Ckpt-Checkpoint: s0000@") {
		b.Fatalf("the hooked commit has no trailer:\n%s", msg)
	}
}

// BenchmarkCronTick1000Idle: one `ckpt cron tick` process over 1,000 sessions with nothing
// to do (change detection by size and mtime only).
func BenchmarkCronTick1000Idle(b *testing.B) {
	s := newStore(b)
	bigStore(b, s, 1000, 1, 0, b.TempDir())
	var ds []time.Duration
	for b.Loop() {
		ds = append(ds, timed(b, s.command(nil, "cron", "tick")))
	}
	b.ReportMetric(float64(median(ds).Microseconds())/1000, "median-ms")
}

func replaceEnv(env []string, key, value string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}
