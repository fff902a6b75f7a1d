package mcp_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ckpt-dev/ckpt/internal/benchhistory"
)

// Benchmarks of issue 14's targets, through a built ckpt binary over stdio: start to first
// answer (initialize + tools/list) ≤ 50 ms; ckpt_log, ckpt_show, ckpt_diff ≤ 20 ms warm and
// ckpt_blame ≤ 200 ms on a 10,000-commit session; an idle server ≤ 30 MB RSS. Next to them,
// git doing the nearest thing on the same repository. Figures: BENCHMARKS.md.

func startServer(b *testing.B, home string) (*sdk.ClientSession, *exec.Cmd) {
	b.Helper()
	cmd := exec.Command(ckptBin, "--home", home, "mcp")
	c := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	return cs, cmd
}

func reportMedian(b *testing.B, took []time.Duration, unit string) {
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, unit)
}

// BenchmarkStartToFirstAnswer starts `ckpt mcp`, initializes and lists the tools: what an
// agent's harness waits for before the first call.
func BenchmarkStartToFirstAnswer(b *testing.B) {
	f := store(b)
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		cs, _ := startServer(b, f.home)
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil || len(res.Tools) != 7 {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
		_ = cs.Close()
	}
	reportMedian(b, took, "median-ms")
}

func rssMB(b *testing.B, pid int) float64 {
	b.Helper()
	st, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		b.Skip("no /proc: RSS not measured")
	}
	for _, l := range strings.Split(string(st), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return float64(kb) / 1024
		}
	}
	b.Fatal("no VmRSS")
	return 0
}

// BenchmarkIdleRSS is the resident memory of a server that answered initialize and
// tools/list, then waits (idle-MB); and of one that has answered every tool on the
// 10,000-commit session, its commit cache full (after-10k-MB).
func BenchmarkIdleRSS(b *testing.B) {
	home, err := benchhistory.Home()
	if err != nil {
		b.Fatal(err)
	}
	var idle, used []float64
	for b.Loop() {
		cs, cmd := startServer(b, home)
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		idle = append(idle, rssMB(b, cmd.Process.Pid))
		warm(b, cs)
		used = append(used, rssMB(b, cmd.Process.Pid))
		_ = cs.Close()
	}
	slices.Sort(idle)
	slices.Sort(used)
	b.ReportMetric(idle[len(idle)/2], "idle-MB")
	b.ReportMetric(used[len(used)/2], "after-10k-MB")
}

func callBench(b *testing.B, cs *sdk.ClientSession, name string, args map[string]any) {
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError {
		b.Fatalf("%s: %v %s", name, err, text(res))
	}
}

// warm makes a server read the whole 10,000-commit history once, as it has after its first
// blame of a section as old as the session.
func warm(b *testing.B, cs *sdk.ClientSession) {
	callBench(b, cs, "ckpt_blame", map[string]any{"session": benchhistory.Session, "section": "🔑"})
	callBench(b, cs, "ckpt_log", map[string]any{"session": benchhistory.Session})
}

// BenchmarkTools10k times one call of each tool, warm, over stdio, on the 10,000-commit
// session.
func BenchmarkTools10k(b *testing.B) {
	home, err := benchhistory.Home()
	if err != nil {
		b.Fatal(err)
	}
	cs, _ := startServer(b, home)
	defer cs.Close()
	warm(b, cs)
	s := benchhistory.Session
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"log20", "ckpt_log", map[string]any{"session": s}},
		{"log-section", "ckpt_log", map[string]any{"session": s, "section": "🔑"}},
		{"show", "ckpt_show", map[string]any{"session": s}},
		{"show-HEAD~5000-section", "ckpt_show", map[string]any{"session": s, "rev": "HEAD~5000", "section": "🔑"}},
		{"show-before-compact", "ckpt_show", map[string]any{"session": s, "rev": "before-compact"}},
		{"diff", "ckpt_diff", map[string]any{"session": s}},
		{"diff-HEAD~9000", "ckpt_diff", map[string]any{"session": s, "from": "HEAD~9000"}},
		{"blame-whole-history", "ckpt_blame", map[string]any{"session": s, "section": "🔑"}},
		{"blame-recent", "ckpt_blame", map[string]any{"session": s, "section": "📋"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				callBench(b, cs, tc.tool, tc.args)
			}
		})
	}
}

// BenchmarkGit10k is git doing the nearest thing on the same repository, each a process:
// log -n 20, show of an old version, diff of the last commit, blame of the Key Decisions
// along first parents.
func BenchmarkGit10k(b *testing.B) {
	home, err := benchhistory.Home()
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(home, "sessions", benchhistory.Session)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"log-n20", []string{"log", "-n", "20", "--format=%H %ct %s"}},
		{"show-HEAD~5000", []string{"show", "HEAD~5000:checkpoint.md"}},
		{"diff-HEAD~1", []string{"diff", "HEAD~1", "HEAD"}},
		{"blame-key-decisions", []string{"blame", "--first-parent", "-L", "/### 🔑/,+12", "checkpoint.md"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command("git", append([]string{"-C", dir}, tc.args...)...)
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				if err := cmd.Run(); err != nil {
					b.Fatalf("git %v: %v\n%s", tc.args, err, out.String())
				}
			}
		})
	}
}
