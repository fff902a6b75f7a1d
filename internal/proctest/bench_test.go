package proctest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/repo"
)

// Whole-process benchmarks of issue 2's targets: `ckpt commit` against `git add && git
// commit` (ratio ≤ 1.0), `ckpt log -n 20` on 10,000 commits (≤ 30 ms, not growing with
// history), `ckpt diff` of a 1 MB checkpoint rewritten completely (≤ 50 ms, ≤ 64 MB peak
// memory). Results are in BENCHMARKS.md.

// BenchmarkProcessCommitVsGit alternates, in one run, a whole-process `ckpt commit -s ID`
// of a changed checkpoint.md with `git add checkpoint.md` + `git commit -q -m x` of the same
// change in a plain repository: two processes, as a user would type them. ckpt runs with
// its defaults (fsync on); git with its own (loose objects, refs and index not fsynced).
// The sub-benchmarks pair them differently: ckpt with fsync off against git's defaults,
// and ckpt's defaults against git with core.fsync=all.
func BenchmarkProcessCommitVsGit(b *testing.B) {
	for _, tc := range []struct {
		name      string
		ckptFsync bool
		gitArgs   []string
	}{
		{"defaults", true, nil},
		{"nofsync", false, nil},
		{"fsync", true, []string{"-c", "core.fsync=all", "-c", "core.fsyncMethod=fsync"}},
	} {
		b.Run(tc.name, func(b *testing.B) { benchCommitVsGit(b, tc.ckptFsync, tc.gitArgs) })
	}
}

func benchCommitVsGit(b *testing.B, ckptFsync bool, gitArgs []string) {
	s := newStore(b)
	if !ckptFsync {
		if err := os.WriteFile(filepath.Join(s.home, "config.toml"), []byte("[core]\nfsync = false\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	const id = "bench"
	s.mustRun(b, nil, "init", "-s", id)
	ckptFile := filepath.Join(s.sessionDir(id), "checkpoint.md")
	plain := filepath.Join(b.TempDir(), "plain")
	s.git(b, filepath.Dir(plain), "init", "-q", "-b", "main", plain)
	plainFile := filepath.Join(plain, "checkpoint.md")
	write := func(p string, c []byte) {
		if err := os.WriteFile(p, c, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	first := checkpoint("Benchmark: the first version")
	write(ckptFile, first)
	s.mustRun(b, nil, "commit", "-s", id)
	write(plainFile, first)
	s.git(b, plain, "add", "checkpoint.md")
	s.git(b, plain, "commit", "-q", "-m", "x")

	run := func(cmd *exec.Cmd) time.Duration {
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		err := cmd.Run()
		took := time.Since(start)
		if err != nil {
			b.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out.String())
		}
		return took
	}
	gitCmd := func(args ...string) *exec.Cmd {
		cmd := exec.Command("git", slices.Concat([]string{"-C", plain}, gitArgs, args)...)
		cmd.Env = s.env
		return cmd
	}
	var ckptTimes, gitTimes []time.Duration
	v := 0
	for b.Loop() {
		v++
		c := checkpoint(fmt.Sprintf("Benchmark: version %d of the task", v))
		write(ckptFile, c)
		ckptTimes = append(ckptTimes, run(s.command(nil, "commit", "-s", id)))
		write(plainFile, c)
		gitTimes = append(gitTimes, run(gitCmd("add", "checkpoint.md"))+run(gitCmd("commit", "-q", "-m", "x")))
	}
	ck, gt := median(ckptTimes), median(gitTimes)
	b.ReportMetric(float64(ck.Nanoseconds()), "ckpt-ns/op")
	b.ReportMetric(float64(gt.Nanoseconds()), "git-ns/op")
	b.ReportMetric(float64(ck)/float64(gt), "ratio")
	if n := strings.Count(s.git(b, s.sessionDir(id), "log", "--format=%H"), "\n"); n != v+2 {
		b.Fatalf("ckpt made %d commits, want %d", n, v+2)
	}
}

// median of a non-empty list of durations.
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// historySession makes session "big" with ckpt init, then adds commits in-process through
// the repo package (fsync off, packing on as in DefaultOptions) until it holds n, each a
// one-line change of the checkpoint with a message as ckpt writes it.
func historySession(b *testing.B, s *store, n int) string {
	b.Helper()
	const id = "big"
	s.mustRun(b, nil, "init", "-s", id)
	opts := repo.DefaultOptions()
	opts.Fsync = false
	st := repo.NewStore(s.home, opts)
	r, err := st.Open(id)
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
	start := time.Now()
	for v := 1; v < n; v++ {
		files["checkpoint.md"] = checkpoint(fmt.Sprintf("History commit %d", v))
		msg := fmt.Sprintf("checkpoint(write): update 🎯 Current Task\n\nCkpt-Session: %s\nCkpt-Trigger: write\nCkpt-Sections: 🎯\n", id)
		if _, changed, err := r.Commit(repo.CommitRequest{Files: files, Message: msg}); err != nil || !changed {
			b.Fatalf("commit %d: changed=%v, %v", v, changed, err)
		}
	}
	b.Logf("built %d commits in %s", n, time.Since(start).Round(time.Millisecond))
	return id
}

// BenchmarkProcessLog20 runs `ckpt log -n 20` as a process on sessions of 1,000 and 10,000
// commits: the time must not grow with the length of history.
func BenchmarkProcessLog20(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("commits=%d", n), func(b *testing.B) {
			s := newStore(b)
			id := historySession(b, s, n)
			devNull := openDevNull(b)
			var out bytes.Buffer
			for b.Loop() {
				out.Reset()
				cmd := s.command(nil, "log", "-s", id, "-n", "20")
				cmd.Stdout, cmd.Stderr = &out, devNull
				if err := cmd.Run(); err != nil {
					b.Fatalf("ckpt log: %v", err)
				}
				if lines := strings.Count(out.String(), "\n"); lines != 20 {
					b.Fatalf("ckpt log -n 20 printed %d lines", lines)
				}
			}
		})
	}
}

// bigPair returns two valid six checkpoints of about n bytes whose every body line differs.
func bigPair(n int) (older, newer []byte) {
	build := func(word string) []byte {
		base := string(checkpoint("Benchmark: a 1 MB checkpoint, " + word))
		head, tail, _ := strings.Cut(base, "### 📋 Task Stack\n")
		var b strings.Builder
		b.WriteString(head + "### 📋 Task Stack\n")
		for k := 0; b.Len() < n-len(tail); k++ {
			fmt.Fprintf(&b, "- [x] %s step %d: keep `checkpoint_manager.py` and https://example.com/%d in step\n", word, k, k)
		}
		b.WriteString(tail)
		return []byte(b.String())
	}
	return build("draft"), build("final")
}

// BenchmarkProcessDiff1MB runs `ckpt diff` between two commits of a 1 MB checkpoint that
// differ in every line of its biggest section, and reports the peak resident memory of the
// process (the largest over all runs) from its rusage.
func BenchmarkProcessDiff1MB(b *testing.B) {
	s := newStore(b)
	const id = "diff"
	s.mustRun(b, nil, "init", "-s", id)
	older, newer := bigPair(1 << 20)
	s.mustRun(b, older, "write", "-s", id)
	s.mustRun(b, newer, "write", "-s", id)
	devNull := openDevNull(b)
	var peakKB int64
	var outBytes int
	var out bytes.Buffer
	for b.Loop() {
		out.Reset()
		cmd := s.command(nil, "diff", "-s", id)
		cmd.Stdout, cmd.Stderr = &out, devNull
		if err := cmd.Run(); err != nil {
			b.Fatalf("ckpt diff: %v", err)
		}
		outBytes = out.Len()
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peakKB = max(peakKB, ru.Maxrss) // kilobytes on Linux
		}
	}
	if outBytes < len(older) {
		b.Fatalf("ckpt diff printed only %d bytes", outBytes)
	}
	b.ReportMetric(float64(peakKB)/1024, "peak-RSS-MB")
	b.ReportMetric(float64(len(newer)), "checkpoint-bytes")
}

func openDevNull(b *testing.B) *os.File {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}
