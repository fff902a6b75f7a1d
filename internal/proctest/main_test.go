package proctest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ckpt-dev/ckpt/internal/gittest"
)

// ckptBin is the binary TestMain built: the lean build, as `make build` makes it (static).
var ckptBin string

// The build tags of the two builds (Makefile's LEAN_TAGS and FULL_TAGS).
const (
	leanTags = "ckpt_lean,urfave_cli_no_docs"
	fullTags = "urfave_cli_no_docs"
)

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "ckpt-proctest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "proctest:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	// The two builds `make build` makes: the lean ckpt, and beside it the full build it
	// hands the web UI, the MCP server and go-git's network to (cmd/ckpt/fullbuild.go).
	ckptBin = filepath.Join(dir, "ckpt")
	for _, b := range []struct{ out, tags string }{{ckptBin, leanTags}, {filepath.Join(dir, "ckpt-full"), fullTags}} {
		build := exec.Command("go", "build", "-tags", b.tags, "-o", b.out, "github.com/ckpt-dev/ckpt/cmd/ckpt")
		build.Env = append(os.Environ(), "CGO_ENABLED=0") // static, as make build links it
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "proctest: build %s: %v\n", b.out, err)
			return 1
		}
	}
	return m.Run()
}

// fixedNow is the clock every ckpt process of these tests runs with (CKPT_NOW), and
// fixedStamp how ckpt writes it in _last_updated_. A checkpoint that already carries this
// stamp is committed byte for byte, so a test knows the blob id of every write.
const (
	fixedNow   = "2026-04-01T22:00:00Z"
	fixedStamp = "2026-04-01T22:00Z"
)

// store is a ckpt store in a temporary directory, with the environment its processes run in.
type store struct {
	home string
	env  []string
}

// newStore makes an empty store. Its processes see a HOME of their own, no global or system
// git configuration, no CKPT_ or GIT_ variable of the caller's, and a 30 s lock timeout: a
// writer that was killed while it held refs/heads/main.lock makes the next one wait for the
// lock to grow stale (2 s), which is expected, not a failure.
func newStore(tb testing.TB) *store {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("git is not installed")
	}
	home := tb.TempDir()
	gitHome := tb.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "CKPT_"), strings.HasPrefix(k, "GIT_"),
			k == "HOME", k == "XDG_CONFIG_HOME", k == "NO_COLOR", k == "CLICOLOR_FORCE":
			continue
		}
		env = append(env, kv)
	}
	env = append(env,
		"CKPT_HOME="+home,
		"CKPT_NOW="+fixedNow,
		"CKPT_LOCK_TIMEOUT=30s",
		"NO_COLOR=1",
		"HOME="+gitHome,
		"XDG_CONFIG_HOME="+gitHome,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=test", "GIT_COMMITTER_EMAIL=test@example.com",
	)
	return &store{home: home, env: env}
}

// sessionDir is the repository (and work tree) of a session.
func (s *store) sessionDir(id string) string { return filepath.Join(s.home, "sessions", id) }

// command prepares a ckpt process; stdin may be nil.
func (s *store) command(stdin []byte, args ...string) *exec.Cmd {
	cmd := exec.Command(ckptBin, args...)
	cmd.Env = s.env
	cmd.Dir = s.home
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	return cmd
}

// result is how a process ended.
type result struct {
	stdout, stderr string
	code           int  // exit code; -1 when killed by a signal or not started
	killed         bool // ended by SIGKILL
	err            error
}

func (r result) String() string {
	return fmt.Sprintf("exit %d (%v)\nstdout:\n%s\nstderr:\n%s", r.code, r.err, r.stdout, r.stderr)
}

// finish classifies how a command that was run (or waited for) ended.
func finish(cmd *exec.Cmd, out, errb *bytes.Buffer, err error) result {
	r := result{stdout: out.String(), stderr: errb.String(), err: err}
	if err == nil {
		return r
	}
	r.code = -1
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			r.killed = true
		}
	}
	return r
}

// run runs ckpt to its end.
func (s *store) run(stdin []byte, args ...string) result {
	cmd := s.command(stdin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	return finish(cmd, &out, &errb, cmd.Run())
}

// mustRun runs ckpt and fails the test unless it exits 0; it returns standard output.
func (s *store) mustRun(tb testing.TB, stdin []byte, args ...string) string {
	tb.Helper()
	r := s.run(stdin, args...)
	if r.code != 0 {
		tb.Fatalf("ckpt %s: %s", strings.Join(args, " "), r)
	}
	return r.stdout
}

// git runs the git CLI in dir with the store's environment and fails the test on an error.
func (s *store) git(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = s.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		tb.Fatalf("git %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

// checkpoint is a valid six checkpoint whose Current Task line is task. It carries
// fixedStamp, so ckpt commits it unchanged.
func checkpoint(task string) []byte {
	return []byte(`# Session Checkpoint

_last_updated: ` + fixedStamp + `_
_session_id: proctest-0001_

---

### 🎯 Current Task
` + task + `

### 📋 Task Stack
- [ ] (P0) Keep every reported write in history
- [ ] (P1) Leave the repository valid after any kill

### ✅ This Session Completed
- [x] Built the binary once in TestMain

### 🔑 Key Decisions
- Ask the real git CLI (` + "`git fsck --full`" + `) whether anything broke

### 📡 Recovered Delta
_delta_since_last: 2026-04-01T21:45Z → 2026-04-01T22:00Z_

**[2026-04-01T21:50Z]** Started the process test

### ⚠️ Notes & Blockers
- Nothing blocks

---
`)
}

// blobIDs asks git for the blob id of each content, in order.
func (s *store) blobIDs(tb testing.TB, contents [][]byte) []string {
	tb.Helper()
	if len(contents) == 0 {
		return nil
	}
	dir := tb.TempDir()
	args := []string{"hash-object", "--no-filters", "--"}
	for i, c := range contents {
		p := filepath.Join(dir, fmt.Sprintf("c%d.md", i))
		if err := os.WriteFile(p, c, 0o644); err != nil {
			tb.Fatal(err)
		}
		args = append(args, p)
	}
	ids := strings.Fields(s.git(tb, dir, args...))
	if len(ids) != len(contents) {
		tb.Fatalf("git hash-object gave %d ids for %d files", len(ids), len(contents))
	}
	return ids
}

// historyBlobs returns every blob that a commit reachable from main recorded as
// checkpoint.md, read from `git log --raw`.
func (s *store) historyBlobs(tb testing.TB, dir string) map[string]bool {
	tb.Helper()
	out := s.git(tb, dir, "log", "--format=", "--raw", "--no-abbrev", "--root", "main", "--", "checkpoint.md")
	blobs := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		meta, path, ok := strings.Cut(l, "\t")
		if !ok || !strings.HasPrefix(meta, ":") || path != "checkpoint.md" {
			continue
		}
		if f := strings.Fields(meta); len(f) >= 5 {
			blobs[f[3]] = true
		}
	}
	return blobs
}

// requireInHistory fails the test for every content that no commit on main recorded.
func (s *store) requireInHistory(tb testing.TB, dir string, contents [][]byte) {
	tb.Helper()
	blobs := s.historyBlobs(tb, dir)
	missing := 0
	for i, id := range s.blobIDs(tb, contents) {
		if !blobs[id] {
			missing++
			if missing <= 5 {
				tb.Errorf("write %d (blob %s, first line of task %q) exited 0 but is not in git log", i, id, taskOf(contents[i]))
			}
		}
	}
	if missing > 0 {
		tb.Errorf("%d of %d reported writes are missing from history", missing, len(contents))
	}
}

// taskOf returns the Current Task line of a checkpoint made by checkpoint().
func taskOf(c []byte) string {
	_, rest, _ := strings.Cut(string(c), "### 🎯 Current Task\n")
	line, _, _ := strings.Cut(rest, "\n")
	return line
}

// requireHealthy asks git whether the session is sound: fsck clean and HEAD a commit.
func (s *store) requireHealthy(tb testing.TB, dir string) {
	tb.Helper()
	gittest.Fsck(tb, dir)
	if typ := strings.TrimSpace(s.git(tb, dir, "cat-file", "-t", strings.TrimSpace(s.git(tb, dir, "rev-parse", "--verify", "HEAD^{commit}")))); typ != "commit" {
		tb.Errorf("HEAD is a %s", typ)
	}
}
