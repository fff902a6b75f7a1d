// Package gittest runs the real git CLI in tests, to prove that what ckpt writes is an
// ordinary git repository.
package gittest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Env is an environment for git that ignores the user's and the system's configuration.
func Env(t testing.TB) []string {
	t.Helper()
	home := t.TempDir()
	return append(os.Environ(),
		"HOME="+home,
		"XDG_CONFIG_HOME="+home,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=test", "GIT_COMMITTER_EMAIL=test@example.com",
	)
}

// Git runs git with args in dir and returns its standard output; it fails the test when git
// exits non-zero.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := Run(t, dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// Run runs git and returns its combined output and error.
func Run(t testing.TB, dir string, args ...string) (string, error) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = Env(t)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Fsck runs `git fsck --full --strict` and fails the test on any complaint.
func Fsck(t testing.TB, dir string) {
	t.Helper()
	out, err := Run(t, dir, "fsck", "--full", "--strict", "--no-dangling")
	if err != nil || strings.TrimSpace(out) != "" {
		t.Fatalf("git fsck in %s: %v\n%s", dir, err, out)
	}
}

// Clean fails the test unless `git status --porcelain` is empty.
func Clean(t testing.TB, dir string) {
	t.Helper()
	if out := Git(t, dir, "status", "--porcelain"); strings.TrimSpace(out) != "" {
		t.Fatalf("git status in %s is not clean:\n%s", dir, out)
	}
}
