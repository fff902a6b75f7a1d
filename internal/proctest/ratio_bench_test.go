package proctest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	ckptcheckpoint "github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/internal/benchhistory"
	"github.com/ckpt-dev/ckpt/internal/config"
	"github.com/ckpt-dev/ckpt/repo"
)

// Issue 11's benchmarks: ckpt against git doing the same job, paired run by run. Each run
// times one ckpt process (or the ones a job needs) and the git processes that do the same
// work, alternating which goes first; the metrics are the medians of each side's wall and
// CPU time (user + system, from the processes' rusage) and the medians of the paired
// ratios, which a machine that is busy elsewhere disturbs far less than either median.
// The stores are built once and kept under $CKPT_BENCH_CACHE (default: the temporary
// directory's ckpt-bench-cache); each benchmark works on a copy.

// sample is what one job cost: wall time and CPU time.
type sample struct{ wall, cpu time.Duration }

// runJob runs cmds one after the other, output to a buffer, and sums their cost.
func runJob(tb testing.TB, cmds ...*exec.Cmd) sample {
	tb.Helper()
	var s sample
	for _, cmd := range cmds {
		var out bytes.Buffer
		if cmd.Stdout == nil {
			cmd.Stdout = &out
		}
		if cmd.Stderr == nil {
			cmd.Stderr = &out
		}
		start := time.Now()
		err := cmd.Run()
		s.wall += time.Since(start)
		if err != nil {
			tb.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out.String())
		}
		s.cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	return s
}

// pairs collects paired samples of ckpt and git, and their peak RSS (peakRSS).
type pairs struct {
	ckpt, git       []sample
	ckptRSS, gitRSS float64 // MB; 0 when not measured
}

// peakRSS runs cmd once more under /usr/bin/time for its peak RSS in MB (0 without it).
// The rusage of a process this one starts cannot tell: Linux counts the memory of the
// parent it was forked from (the benchmark, tens of MB) into the child's peak; a child of
// time starts from time's few hundred KB.
func peakRSS(tb testing.TB, cmd *exec.Cmd) float64 {
	tb.Helper()
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		return 0
	}
	out := filepath.Join(tb.TempDir(), "rss")
	timed := exec.Command("/usr/bin/time", append([]string{"-f", "%M", "-o", out, cmd.Path}, cmd.Args[1:]...)...)
	timed.Env, timed.Dir = cmd.Env, cmd.Dir
	runJob(tb, timed)
	b, err := os.ReadFile(out)
	if err != nil {
		tb.Fatal(err)
	}
	kb, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
	if err != nil {
		tb.Fatalf("/usr/bin/time wrote %q", b)
	}
	return kb / 1024
}

// run times one pair; odd runs start with git.
func (p *pairs) run(tb testing.TB, ckpt, git func() []*exec.Cmd) {
	tb.Helper()
	if len(p.ckpt)%2 == 0 {
		p.ckpt = append(p.ckpt, runJob(tb, ckpt()...))
		p.git = append(p.git, runJob(tb, git()...))
	} else {
		p.git = append(p.git, runJob(tb, git()...))
		p.ckpt = append(p.ckpt, runJob(tb, ckpt()...))
	}
}

// report reports the medians, each metric's name after prefix: ckpt-ms, git-ms, ratio (of
// wall times, pair by pair), ckpt-cpu-ms, git-cpu-ms, cpu-ratio, and the peak RSS of each
// side when measured.
func (p *pairs) report(b *testing.B, prefix string) {
	if len(p.ckpt) == 0 {
		return
	}
	pick := func(ss []sample, f func(sample) float64) []float64 {
		out := make([]float64, len(ss))
		for i, s := range ss {
			out[i] = f(s)
		}
		return out
	}
	wall := func(s sample) float64 { return float64(s.wall) }
	cpu := func(s sample) float64 { return float64(s.cpu) }
	ratios := func(f func(sample) float64) []float64 {
		out := make([]float64, len(p.ckpt))
		for i := range p.ckpt {
			out[i] = f(p.ckpt[i]) / max(f(p.git[i]), 1)
		}
		return out
	}
	ms := func(ns float64) float64 { return ns / 1e6 }
	b.ReportMetric(ms(medianF(pick(p.ckpt, wall))), prefix+"ckpt-ms")
	b.ReportMetric(ms(medianF(pick(p.git, wall))), prefix+"git-ms")
	b.ReportMetric(medianF(ratios(wall)), prefix+"ratio")
	b.ReportMetric(ms(medianF(pick(p.ckpt, cpu))), prefix+"ckpt-cpu-ms")
	b.ReportMetric(ms(medianF(pick(p.git, cpu))), prefix+"git-cpu-ms")
	b.ReportMetric(medianF(ratios(cpu)), prefix+"cpu-ratio")
	if p.ckptRSS > 0 && p.gitRSS > 0 {
		b.ReportMetric(p.ckptRSS, prefix+"ckpt-RSS-MB")
		b.ReportMetric(p.gitRSS, prefix+"git-RSS-MB")
	}
	b.ReportMetric(0, "ns/op") // the time per op is two tools' and their setup: meaningless
}

func medianF(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// cachedBuild returns the directory $CKPT_BENCH_CACHE/<name>, building it with build
// (into a temporary name, renamed when complete) when it is missing.
func cachedBuild(b *testing.B, name string, build func(dir string)) string {
	b.Helper()
	root := os.Getenv("CKPT_BENCH_CACHE")
	if root == "" {
		root = filepath.Join(os.TempDir(), "ckpt-bench-cache")
	}
	// The version changes whenever what a build makes changes.
	dir := filepath.Join(root, "v1-"+name)
	if _, err := os.Stat(dir); err == nil {
		return dir
	}
	tmp := dir + ".building"
	_ = os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	build(tmp)
	if err := os.Rename(tmp, dir); err != nil {
		b.Fatal(err)
	}
	b.Logf("built %s in %s", dir, time.Since(start).Round(time.Millisecond))
	return dir
}

// copyDir copies a cached build for one benchmark to change.
func copyDir(b *testing.B, src string) string {
	b.Helper()
	dst := filepath.Join(b.TempDir(), "copy")
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		b.Fatalf("cp -a %s: %v\n%s", src, err, out)
	}
	return dst
}

// benchID is the session of the history benchmarks: benchhistory's checkpoints name it.
const benchID = benchhistory.Session

// ckptMessage is the message ckpt writes for a write of the Task Stack.
const ckptMessage = "checkpoint(write): update 📋 Task Stack\n\nCkpt-Session: bench\nCkpt-Trigger: write\nCkpt-Sections: 📋\n"

// ckptHistory builds a store whose session "bench" holds n commits of benchhistory's 8 KB
// six checkpoint, each changing one line: ckpt init as a process, then ckpt's own commit
// in-process (fsync off, automatic packing as ckpt does it). Past 10,000 commits the
// history is written by git fast-import instead (a minute, not an hour); ckpt then works on
// one big pack, which is what its geometric packing converges to.
func ckptHistory(b *testing.B, n int) string {
	return cachedBuild(b, fmt.Sprintf("ckpt-history-%d", n), func(home string) {
		s := newStore(b)
		s.home, s.env = home, replaceEnv(s.env, "CKPT_HOME", home)
		s.mustRun(b, nil, "init", "-s", benchID)
		if n > 10_000 {
			dir := s.sessionDir(benchID)
			fastImport(b, s.env, dir, n, true)
			s.git(b, dir, "read-tree", "-u", "--reset", "HEAD")
			return
		}
		opts := repo.DefaultOptions()
		opts.Fsync = false
		st := repo.NewStore(home, opts)
		r, err := st.Open(benchID)
		if err != nil {
			b.Fatal(err)
		}
		unlock, err := st.Lock(r.LockName, true)
		if err != nil {
			b.Fatal(err)
		}
		defer unlock()
		head, err := r.Head()
		if err != nil {
			b.Fatal(err)
		}
		files, err := r.Files(head)
		if err != nil {
			b.Fatal(err)
		}
		for v := 1; v < n; v++ {
			files["checkpoint.md"] = benchhistory.Checkpoint(v)
			if _, changed, err := r.Commit(repo.CommitRequest{Files: files, Message: ckptMessage}); err != nil || !changed {
				b.Fatalf("commit %d: changed=%v, %v", v, changed, err)
			}
		}
	})
}

// gitHistory builds a plain git repository with the same n versions of the checkpoint, by
// git fast-import (one pack, as git gc leaves a history), checked out.
func gitHistory(b *testing.B, n int) string {
	return cachedBuild(b, fmt.Sprintf("git-history-%d", n), func(dir string) {
		s := newStore(b)
		s.git(b, dir, "init", "-q", "-b", "main", ".")
		fastImport(b, s.env, dir, n, false)
		s.git(b, dir, "read-tree", "-u", "--reset", "HEAD")
	})
}

// fastImport adds n commits of the checkpoint to main of the repository at dir (on top of
// HEAD when onHead). Version v is benchhistory.Checkpoint(v).
func fastImport(b *testing.B, env []string, dir string, n int, onHead bool) {
	b.Helper()
	cmd := exec.Command("git", "-C", dir, "fast-import", "--quiet", "--done")
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	w, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	flush := func() {
		if _, err := w.Write(buf.Bytes()); err != nil {
			b.Fatalf("fast-import: %v\n%s", err, out.String())
		}
		buf.Reset()
	}
	when := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC).Unix()
	for v := 1; v < n; v++ {
		c := benchhistory.Checkpoint(v)
		fmt.Fprintf(&buf, "commit refs/heads/main\ncommitter ckpt bench <bench@example.com> %d +0000\ndata %d\n%s", when+int64(v), len(ckptMessage), ckptMessage)
		if v == 1 && onHead {
			buf.WriteString("from refs/heads/main^0\n")
		}
		fmt.Fprintf(&buf, "M 100644 inline checkpoint.md\ndata %d\n%s\n", len(c), c)
		if v == 1 && !onHead {
			fmt.Fprintf(&buf, "M 100644 inline notes.md\ndata 8\n# Notes\n\n")
		}
		if buf.Len() > 1<<20 {
			flush()
		}
	}
	buf.WriteString("done\n")
	flush()
	w.Close()
	if err := cmd.Wait(); err != nil {
		b.Fatalf("fast-import: %v\n%s", err, out.String())
	}
}

// historyLengths are the lengths the commit and log benchmarks sweep; CKPT_BENCH_100K=1
// adds 100,000.
func historyLengths() []int {
	ns := []int{100, 1_000, 10_000}
	if os.Getenv("CKPT_BENCH_100K") == "1" {
		ns = append(ns, 100_000)
	}
	return ns
}

// BenchmarkRatioHistory sweeps history length: for each, a copy of a ckpt store and of a
// git repository holding the same history, then paired runs of
//   - commit-nofsync: `ckpt commit -s bench` of an 8 KB checkpoint with one line changed,
//     ckpt's fsync off, against `git add checkpoint.md && git commit -q -m ...` of the same
//     bytes (git's defaults: git fsyncs nothing here);
//   - commit-defaults: the same with ckpt's defaults (fsync on);
//   - log20: `ckpt log -s bench -n 20` against `git log -n 20`.
func BenchmarkRatioHistory(b *testing.B) {
	for _, n := range historyLengths() {
		b.Run(fmt.Sprintf("commits=%d", n), func(b *testing.B) {
			s := newStore(b)
			home := copyDir(b, ckptHistory(b, n))
			s.home, s.env = home, replaceEnv(s.env, "CKPT_HOME", home)
			plain := copyDir(b, gitHistory(b, n))
			ckptFile := filepath.Join(s.sessionDir(benchID), "checkpoint.md")
			plainFile := filepath.Join(plain, "checkpoint.md")
			v := n + 1 // a version neither history holds
			ckptStart, gitStart := count(b, s, s.sessionDir(benchID)), count(b, s, plain)
			for _, fsync := range []bool{false, true} {
				name := "commit-nofsync"
				if fsync {
					name = "commit-defaults"
				}
				b.Run(name, func(b *testing.B) {
					cfg := "[core]\nfsync = false\n"
					if fsync {
						cfg = ""
					}
					if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o644); err != nil {
						b.Fatal(err)
					}
					var p pairs
					for b.Loop() {
						v++
						c := benchhistory.Checkpoint(v)
						for _, f := range []string{ckptFile, plainFile} {
							if err := os.WriteFile(f, c, 0o644); err != nil {
								b.Fatal(err)
							}
						}
						p.run(b, func() []*exec.Cmd {
							return []*exec.Cmd{s.command(nil, "commit", "-s", benchID)}
						}, func() []*exec.Cmd {
							return []*exec.Cmd{s.gitCmd(plain, "add", "checkpoint.md"), s.gitCmd(plain, "commit", "-q", "-m", ckptMessage)}
						})
					}
					p.report(b, "")
				})
			}
			b.Run("log20", func(b *testing.B) {
				var p pairs
				for b.Loop() {
					p.run(b, func() []*exec.Cmd {
						return []*exec.Cmd{s.command(nil, "log", "-s", benchID, "-n", "20")}
					}, func() []*exec.Cmd {
						return []*exec.Cmd{s.gitCmd(plain, "log", "-n", "20")}
					})
				}
				p.report(b, "")
			})
			// Both histories grew by one commit per version written.
			if grew := [2]int{count(b, s, s.sessionDir(benchID)) - ckptStart, count(b, s, plain) - gitStart}; grew[0] != grew[1] || grew[0] != v-n-1 {
				b.Fatalf("ckpt made %d commits, git %d, for %d versions", grew[0], grew[1], v-n-1)
			}
		})
	}
}

// count is the number of commits HEAD of the repository at dir reaches.
func count(b *testing.B, s *store, dir string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s.git(b, dir, "rev-list", "--count", "HEAD")))
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// gitCmd is a git process in dir with the store's environment.
func (s *store) gitCmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = s.env
	return cmd
}

// BenchmarkRatioDiff1MB: `ckpt diff -s diff` between two commits of a 1 MB checkpoint that
// differ in every line of its biggest section, against `git diff HEAD~ HEAD` of the same
// two commits in a plain repository; with peak RSS (peakRSS).
func BenchmarkRatioDiff1MB(b *testing.B) {
	s := newStore(b)
	const id = "diff"
	s.mustRun(b, nil, "init", "-s", id)
	older, newer := bigPair(1 << 20)
	s.mustRun(b, older, "write", "-s", id)
	s.mustRun(b, newer, "write", "-s", id)
	plain := filepath.Join(b.TempDir(), "plain")
	s.git(b, filepath.Dir(plain), "init", "-q", "-b", "main", plain)
	for _, c := range [][]byte{older, newer} {
		if err := os.WriteFile(filepath.Join(plain, "checkpoint.md"), c, 0o644); err != nil {
			b.Fatal(err)
		}
		s.git(b, plain, "add", "checkpoint.md")
		s.git(b, plain, "commit", "-q", "-m", "x")
	}
	var p pairs
	ckpt := func() []*exec.Cmd { return []*exec.Cmd{s.command(nil, "diff", "-s", id)} }
	git := func() []*exec.Cmd { return []*exec.Cmd{s.gitCmd(plain, "diff", "HEAD~", "HEAD")} }
	for b.Loop() {
		p.run(b, ckpt, git)
	}
	p.ckptRSS, p.gitRSS = peakRSS(b, ckpt()[0]), peakRSS(b, git()[0])
	p.report(b, "")
}

// BenchmarkRatioStart: process start, `ckpt --version` against `git --version`.
func BenchmarkRatioStart(b *testing.B) {
	s := newStore(b)
	var p pairs
	ckpt := func() []*exec.Cmd { return []*exec.Cmd{s.command(nil, "--version")} }
	git := func() []*exec.Cmd { return []*exec.Cmd{exec.Command("git", "--version")} }
	for b.Loop() {
		p.run(b, ckpt, git)
	}
	p.ckptRSS, p.gitRSS = peakRSS(b, ckpt()[0]), peakRSS(b, git()[0])
	p.report(b, "")
}

// sessionsStore builds a store of n sessions of commits commits each (an 8 KB six
// checkpoint, one line changed per commit), through ckpt's checkpoint service in-process.
func sessionsStore(b *testing.B, n, commits int) string {
	return cachedBuild(b, fmt.Sprintf("sessions-%dx%d", n, commits), func(home string) {
		opts := repo.DefaultOptions()
		opts.Fsync = false
		opts.Now = func() time.Time { return time.Date(2026, 4, 1, 22, 0, 0, 0, time.UTC) }
		st := repo.NewStore(home, opts)
		svc := ckptcheckpoint.New(st, &config.Config{})
		for i := range n {
			id := repo.SessionID(fmt.Sprintf("s%04d", i))
			r, _, err := svc.InitSession(id, "six", "", nil)
			if err != nil {
				b.Fatal(err)
			}
			for c := range commits {
				cp := bytes.Replace(benchhistory.Checkpoint(i*commits+c), []byte("_session_id: bench_"), []byte("_session_id: "+string(id)+"_"), 1)
				if _, err := svc.Write(r, ckptcheckpoint.File, cp, ckptcheckpoint.CommitOptions{Trigger: ckptcheckpoint.TriggerWrite}); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkRatioPushClone1000x20: a store of 1,000 sessions × 20 commits (a copy of a
// cached one each run) pushed by `ckpt push` into an empty bare repository, against
// `git push --mirror` of the same refs and objects (ckpt's transport repository after the
// push, its tracking refs removed) into another; then `ckpt clone` of the first against
// `git clone --no-local --mirror` of the second (a local clone would hard-link the
// objects, not copy them), and a pull of the clone with nothing new (ckpt only).
// Run with -benchtime 1x to 3x: a run takes a minute.
func BenchmarkRatioPushClone1000x20(b *testing.B) {
	cached := sessionsStore(b, 1000, 20)
	var push, clone pairs
	var pulls []float64
	for b.Loop() {
		b.StopTimer()
		s := newStore(b)
		home := copyDir(b, cached)
		s.home, s.env = home, replaceEnv(s.env, "CKPT_HOME", home)
		tmp := b.TempDir()
		remoteA, remoteB := filepath.Join(tmp, "a.git"), filepath.Join(tmp, "b.git")
		for _, r := range []string{remoteA, remoteB} {
			s.git(b, tmp, "init", "-q", "--bare", r)
		}
		s.mustRun(b, nil, "remote", "add", "origin", remoteA)
		b.StartTimer()
		c := runJob(b, s.command(nil, "push"))
		b.StopTimer()
		// The same refs and objects, as a git repository: the transport, less its
		// tracking refs.
		src := filepath.Join(tmp, "src.git")
		if out, err := exec.Command("cp", "-a", filepath.Join(home, "state", "transport.git"), src).CombinedOutput(); err != nil {
			b.Fatalf("cp: %v\n%s", err, out)
		}
		for _, ref := range strings.Fields(s.git(b, src, "for-each-ref", "--format=%(refname)", "refs/remotes/")) {
			s.git(b, src, "update-ref", "-d", ref)
		}
		b.StartTimer()
		g := runJob(b, s.gitCmd(src, "push", "-q", "--mirror", remoteB))
		push.ckpt, push.git = append(push.ckpt, c), append(push.git, g)
		dest := filepath.Join(tmp, "clone")
		cs := &store{home: dest, env: replaceEnv(s.env, "CKPT_HOME", dest)}
		clone.run(b, func() []*exec.Cmd {
			cmd := cs.command(nil, "clone", remoteA, dest)
			cmd.Dir = tmp // dest is not there yet
			return []*exec.Cmd{cmd}
		}, func() []*exec.Cmd {
			_ = os.RemoveAll(filepath.Join(tmp, "mirror.git"))
			return []*exec.Cmd{s.gitCmd(tmp, "clone", "-q", "--no-local", "--mirror", remoteB, filepath.Join(tmp, "mirror.git"))}
		})
		b.StopTimer()
		refs := func(dir string) int { return strings.Count(s.git(b, dir, "for-each-ref"), "\n") }
		if a, bb := refs(remoteA), refs(remoteB); a != bb || a < 1000 {
			b.Fatalf("ckpt pushed %d refs, git %d", a, bb)
		}
		b.StartTimer()
		pulls = append(pulls, float64(runJob(b, cs.command(nil, "pull")).wall)/1e6)
		b.StopTimer()
		if out := cs.mustRun(b, nil, "sessions"); strings.Count(out, "\n") != 1000 {
			b.Fatalf("the clone has %d sessions", strings.Count(out, "\n"))
		}
		b.StartTimer()
	}
	push.report(b, "push-")
	clone.report(b, "clone-")
	b.ReportMetric(medianF(pulls), "noop-pull-ms")
}
