package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// isolateGit points git at an empty configuration, so the user's hooksPath, templates or
// signing settings cannot leak into a test.
func isolateGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	home := t.TempDir()
	global := filepath.Join(home, "gitconfig")
	if err := os.WriteFile(global, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_AUTHOR_NAME", "test")
	t.Setenv("GIT_AUTHOR_EMAIL", "test@example.com")
	t.Setenv("GIT_COMMITTER_NAME", "test")
	t.Setenv("GIT_COMMITTER_EMAIL", "test@example.com")
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// newRepo makes a repository with one commit, with the templates' sample hooks removed
// so that only what a test puts there is in the hooks directory.
func newRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "--template=", ".")
	write(t, filepath.Join(dir, "a.txt"), "a\n", 0o644)
	git(t, dir, "add", "a.txt")
	git(t, dir, "commit", "-q", "-m", "first")
	return dir
}

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // the umask applied to WriteFile
		t.Fatal(err)
	}
}

func realPath(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestGitHooksDir(t *testing.T) {
	isolateGit(t)
	tests := []struct {
		name  string
		setup func(t *testing.T, repo string) (runIn, want string)
	}{
		{"default", func(t *testing.T, repo string) (string, string) {
			return repo, filepath.Join(repo, ".git", "hooks")
		}},
		{"from a subdirectory", func(t *testing.T, repo string) (string, string) {
			sub := filepath.Join(repo, "x", "y")
			if err := os.MkdirAll(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			return sub, filepath.Join(repo, ".git", "hooks")
		}},
		{"relative core.hooksPath (husky)", func(t *testing.T, repo string) (string, string) {
			git(t, repo, "config", "core.hooksPath", ".husky")
			sub := filepath.Join(repo, "sub")
			if err := os.MkdirAll(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			return sub, filepath.Join(repo, ".husky")
		}},
		{"absolute core.hooksPath", func(t *testing.T, repo string) (string, string) {
			abs := filepath.Join(t.TempDir(), "shared-hooks")
			git(t, repo, "config", "core.hooksPath", abs)
			return repo, abs
		}},
		{"linked worktree uses the main hooks", func(t *testing.T, repo string) (string, string) {
			wt := filepath.Join(t.TempDir(), "wt")
			git(t, repo, "worktree", "add", "-q", wt)
			return wt, filepath.Join(repo, ".git", "hooks")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			repo := realPath(t, newRepo(t))
			runIn, want := tc.setup(t, repo)
			got, err := GitHooksDir(runIn)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("GitHooksDir = %s, want %s", got, want)
			}
		})
	}
	t.Run("not a repository", func(t *testing.T) {
		dir := t.TempDir()
		_, err := GitHooksDir(dir)
		if err == nil || !strings.Contains(err.Error(), dir) {
			t.Fatalf("err = %v, want an error naming %s", err, dir)
		}
	})
}

// fileState is what "byte for byte with its mode" compares.
type fileState struct {
	data string
	mode os.FileMode
}

func stateOf(t *testing.T, path string) (fileState, bool) {
	t.Helper()
	fi, err := os.Lstat(path)
	if os.IsNotExist(err) {
		return fileState{}, false
	}
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		target, _ := os.Readlink(path)
		return fileState{data: "-> " + target, mode: fi.Mode()}, true
	}
	if fi.IsDir() {
		return fileState{data: "<dir>", mode: fi.Mode()}, true
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return fileState{string(data), fi.Mode()}, true
}

// snapshot records every file of a hooks directory.
func snapshot(t *testing.T, dir string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		st, _ := stateOf(t, filepath.Join(dir, e.Name()))
		out[e.Name()] = st
	}
	return out
}

func equalSnapshots(a, b map[string]fileState) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestInstallUninstallGit(t *testing.T) {
	isolateGit(t)
	tests := []struct {
		name     string
		hooksDir string            // relative to the repository; "" is .git/hooks
		before   map[string]string // existing hooks: name -> content
		mode     os.FileMode
	}{
		{name: "no hooks"},
		{name: "existing pre-commit", before: map[string]string{
			"pre-commit": "#!/bin/sh\necho lint\n"}, mode: 0o750},
		{name: "existing hooks without final newline, not executable", before: map[string]string{
			"pre-commit":         "#!/bin/sh\nexit 0",
			"prepare-commit-msg": "#!/usr/bin/env python3\nprint('x')"}, mode: 0o644},
		{name: "husky directory", hooksDir: ".husky", before: map[string]string{
			"pre-commit": "#!/usr/bin/env sh\nnpx lint-staged\n"}, mode: 0o755},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			repo := newRepo(t)
			dir := filepath.Join(repo, ".git", "hooks")
			if tc.hooksDir != "" {
				git(t, repo, "config", "core.hooksPath", tc.hooksDir)
				dir = filepath.Join(repo, tc.hooksDir)
			}
			for name, content := range tc.before {
				write(t, filepath.Join(dir, name), content, tc.mode)
			}
			before := snapshot(t, dir)

			got, err := InstallGit(repo)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(gitHooks) {
				t.Fatalf("InstallGit returned %d statuses, want %d", len(got), len(gitHooks))
			}
			for i, st := range got {
				hook := gitHooks[i]
				path := filepath.Join(realPath(t, dir), hook)
				if st.Hook != hook || realPath(t, st.Path) != path || !st.Installed {
					t.Errorf("status %d = %+v, want %s installed at %s", i, st, hook, path)
				}
				cur, _ := stateOf(t, path)
				if cur.data != GitHookScript(hook) || cur.mode.Perm() != 0o755 {
					t.Errorf("%s: not ckpt's script with mode 0755: %o\n%s", hook, cur.mode, cur.data)
				}
				orig, ok := before[hook]
				if !ok {
					if st.Chained != "" {
						t.Errorf("%s: Chained = %q with no original", hook, st.Chained)
					}
					continue
				}
				if st.Chained != st.Path+origSuffix {
					t.Errorf("%s: Chained = %q, want %q", hook, st.Chained, st.Path+origSuffix)
				}
				if kept, _ := stateOf(t, path+origSuffix); kept != orig {
					t.Errorf("%s: kept original %+v, want %+v", hook, kept, orig)
				}
			}
			status, err := StatusGit(repo)
			if err != nil {
				t.Fatal(err)
			}
			for i := range status {
				if status[i] != got[i] {
					t.Errorf("StatusGit[%d] = %+v, want %+v", i, status[i], got[i])
				}
			}

			installed := snapshot(t, dir)
			var infos []os.FileInfo
			for _, hook := range gitHooks {
				fi, err := os.Stat(filepath.Join(dir, hook))
				if err != nil {
					t.Fatal(err)
				}
				infos = append(infos, fi)
			}
			if _, err := InstallGit(repo); err != nil {
				t.Fatal(err)
			}
			if again := snapshot(t, dir); !equalSnapshots(again, installed) {
				t.Errorf("second install changed the hooks:\n%v\nwant\n%v", again, installed)
			}
			for i, hook := range gitHooks {
				if fi, err := os.Stat(filepath.Join(dir, hook)); err != nil || !os.SameFile(fi, infos[i]) {
					t.Errorf("second install rewrote %s", hook)
				}
			}

			if _, err := UninstallGit(repo); err != nil {
				t.Fatal(err)
			}
			if after := snapshot(t, dir); !equalSnapshots(after, before) {
				t.Errorf("after uninstall:\n%v\nwant\n%v", after, before)
			}
			if _, err := UninstallGit(repo); err != nil {
				t.Fatal(err)
			}
			if after := snapshot(t, dir); !equalSnapshots(after, before) {
				t.Errorf("second uninstall changed the hooks:\n%v\nwant\n%v", after, before)
			}
			status, err = StatusGit(repo)
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range status {
				_, existed := tc.before[st.Hook]
				if st.Installed || st.Chained != "" || st.Foreign != existed {
					t.Errorf("status after uninstall = %+v", st)
				}
			}
		})
	}
}

func TestInstallGitRefuses(t *testing.T) {
	isolateGit(t)
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
	}{
		{"symlink hook", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "shared.sh"), "#!/bin/sh\n", 0o755)
			if err := os.Symlink("shared.sh", filepath.Join(dir, "pre-commit")); err != nil {
				t.Fatal(err)
			}
		}},
		{"dangling symlink hook", func(t *testing.T, dir string) {
			if err := os.Symlink("/nonexistent/hook", filepath.Join(dir, "prepare-commit-msg")); err != nil {
				t.Fatal(err)
			}
		}},
		{"directory hook", func(t *testing.T, dir string) {
			if err := os.MkdirAll(filepath.Join(dir, "pre-commit"), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{"kept original already there", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "pre-commit"), "#!/bin/sh\necho new\n", 0o755)
			write(t, filepath.Join(dir, "pre-commit"+origSuffix), "#!/bin/sh\necho old\n", 0o755)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			repo := newRepo(t)
			dir := filepath.Join(repo, ".git", "hooks")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			tc.setup(t, dir)
			before := snapshot(t, dir)
			_, err := InstallGit(repo)
			if !errors.Is(err, ErrForeignHook) {
				t.Fatalf("InstallGit err = %v, want ErrForeignHook", err)
			}
			if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), dir) {
				t.Errorf("error %q: want one line naming the hook", err)
			}
			// A refusal changes nothing, not even the other hook.
			if after := snapshot(t, dir); !equalSnapshots(after, before) {
				t.Errorf("after refused install:\n%v\nwant\n%v", after, before)
			}
			if _, err := UninstallGit(repo); err != nil {
				t.Fatalf("UninstallGit: %v", err)
			}
			if after := snapshot(t, dir); !equalSnapshots(after, before) {
				t.Errorf("after uninstall:\n%v\nwant\n%v", after, before)
			}
		})
	}
}

func TestInstallGitReplacesOlderScript(t *testing.T) {
	isolateGit(t)
	repo := newRepo(t)
	dir := filepath.Join(repo, ".git", "hooks")
	old := "#!/bin/sh\n" + gitHookMarker + ": pre-commit\nexec ckpt hook git pre-commit \"$@\"\n"
	write(t, filepath.Join(dir, "pre-commit"), old, 0o755)
	write(t, filepath.Join(dir, "pre-commit"+origSuffix), "#!/bin/sh\necho mine\n", 0o700)
	if _, err := InstallGit(repo); err != nil {
		t.Fatal(err)
	}
	if st, _ := stateOf(t, filepath.Join(dir, "pre-commit")); st.data != GitHookScript("pre-commit") {
		t.Errorf("older script not replaced:\n%s", st.data)
	}
	if st, _ := stateOf(t, filepath.Join(dir, "pre-commit"+origSuffix)); st.data != "#!/bin/sh\necho mine\n" || st.mode.Perm() != 0o700 {
		t.Errorf("kept original changed: %+v", st)
	}
}

// fakeCkpt puts a ckpt on a fresh PATH that logs its arguments and its standard input.
func fakeCkpt(t *testing.T, log string) string {
	t.Helper()
	bin := t.TempDir()
	// It says when ckpt's pre-commit hook left it its checkpoint (TakePreCommitMark).
	write(t, filepath.Join(bin, "ckpt"), `#!/bin/sh
m=
mark=$GIT_INDEX_FILE`+PreCommitMarkSuffix+`
if [ -f "$mark" ] && read -r pid date <"$mark" && [ "$pid $date" = "$PPID $GIT_AUTHOR_DATE" ]; then
	m=" (pre-commit ran)"
fi
echo "ckpt $*$m" >>'`+log+`'
`, 0o755)
	return bin
}

// systemPath is a PATH with git and the usual tools but, checked, no ckpt.
func systemPath(t *testing.T) string {
	t.Helper()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	p := filepath.Dir(gitPath) + string(os.PathListSeparator) + "/usr/bin" + string(os.PathListSeparator) + "/bin"
	for _, d := range filepath.SplitList(p) {
		if _, err := os.Stat(filepath.Join(d, "ckpt")); err == nil {
			t.Skipf("a ckpt is installed in %s", d)
		}
	}
	return p
}

func commit(t *testing.T, repo, path string, args ...string) (string, error) {
	t.Helper()
	write(t, filepath.Join(repo, "b.txt"), strings.Join(args, " ")+"\n", 0o644)
	git(t, repo, "add", "b.txt")
	cmd := exec.Command("git", append([]string{"commit", "-q"}, args...)...)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "PATH="+path)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestGitCommitRunsHooks(t *testing.T) {
	isolateGit(t)
	sysPath := systemPath(t)
	tests := []struct {
		name     string
		hooksDir string
		orig     string // existing pre-commit; "" for none
		ckpt     bool   // a ckpt on PATH
		wantErr  bool
		args     []string // of git commit, besides -m change
		wrap     bool     // another tool's pre-commit runs ckpt's as its child
		prepare  string   // replaces ckpt's prepare-commit-msg ("none": removes it)
		windows  bool     // $OS says Windows_NT
		wantLog  []string
		wantOut  string
	}{
		{
			name:    "one ckpt for both hooks",
			ckpt:    true,
			wantLog: []string{"ckpt hook git prepare-commit-msg .git/COMMIT_EDITMSG message (pre-commit ran)"},
		},
		{
			name:    "--no-verify: no pre-commit, no checkpoint",
			ckpt:    true,
			args:    []string{"--no-verify"},
			wantLog: []string{"ckpt hook git prepare-commit-msg .git/COMMIT_EDITMSG message"},
		},
		{
			name:    "no prepare-commit-msg of ckpt's: pre-commit starts ckpt itself",
			ckpt:    true,
			prepare: "#!/bin/sh\necho theirs >>\"$LOG\"\n",
			wantLog: []string{"ckpt hook git pre-commit", "theirs"},
		},
		{
			name:    "no prepare-commit-msg at all",
			ckpt:    true,
			prepare: "none",
			wantLog: []string{"ckpt hook git pre-commit"},
		},
		{
			name:    "Windows: pre-commit starts ckpt itself",
			ckpt:    true,
			windows: true,
			wantLog: []string{"ckpt hook git pre-commit", "ckpt hook git prepare-commit-msg .git/COMMIT_EDITMSG message"},
		},
		{
			name:    "run by another tool's hook, pre-commit starts ckpt itself",
			ckpt:    true,
			wrap:    true,
			wantLog: []string{"ckpt hook git pre-commit", "ckpt hook git prepare-commit-msg .git/COMMIT_EDITMSG message"},
		},
		{
			name:    "original runs first with the same arguments",
			orig:    "#!/bin/sh\necho \"orig $#:$*\" >>\"$LOG\"\n",
			ckpt:    true,
			wantLog: []string{"orig 0:", "ckpt hook git prepare-commit-msg .git/COMMIT_EDITMSG message (pre-commit ran)"},
		},
		{
			name:     "husky directory",
			hooksDir: ".husky",
			orig:     "#!/bin/sh\necho husky >>\"$LOG\"\n",
			ckpt:     true,
			wantLog:  []string{"husky", "ckpt hook git prepare-commit-msg .git/COMMIT_EDITMSG message (pre-commit ran)"},
		},
		{
			name:    "a failing original stops the commit and ckpt",
			orig:    "#!/bin/sh\necho refused >>\"$LOG\"\nexit 3\n",
			ckpt:    true,
			wantErr: true,
			wantLog: []string{"refused"},
		},
		{
			name:    "no ckpt on PATH never breaks the commit",
			orig:    "#!/bin/sh\necho orig >>\"$LOG\"\n",
			wantLog: []string{"orig"},
			wantOut: "ckpt: pre-commit hook: ckpt is not on PATH, no checkpoint taken\nckpt: prepare-commit-msg hook: ckpt is not on PATH, no checkpoint taken\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			repo := newRepo(t)
			dir := filepath.Join(repo, ".git", "hooks")
			if tc.hooksDir != "" {
				git(t, repo, "config", "core.hooksPath", tc.hooksDir)
				dir = filepath.Join(repo, tc.hooksDir)
			}
			log := filepath.Join(t.TempDir(), "log")
			t.Setenv("LOG", log)
			if tc.orig != "" {
				write(t, filepath.Join(dir, "pre-commit"), tc.orig, 0o755)
			}
			if _, err := InstallGit(repo); err != nil {
				t.Fatal(err)
			}
			switch pcm := filepath.Join(dir, "prepare-commit-msg"); tc.prepare {
			case "":
			case "none":
				if err := os.Remove(pcm); err != nil {
					t.Fatal(err)
				}
			default:
				write(t, pcm, tc.prepare, 0o755)
			}
			if tc.windows {
				t.Setenv("OS", "Windows_NT")
			}
			if tc.wrap {
				pc := filepath.Join(dir, "pre-commit")
				if err := os.Rename(pc, pc+".wrapped"); err != nil {
					t.Fatal(err)
				}
				write(t, pc, "#!/bin/sh\n\"$0.wrapped\" \"$@\"\n", 0o755)
			}
			path := sysPath
			if tc.ckpt {
				path = fakeCkpt(t, log) + string(os.PathListSeparator) + sysPath
			}
			head := git(t, repo, "rev-parse", "HEAD")
			out, err := commit(t, repo, path, append(tc.args, "-m", "change")...)
			if (err != nil) != tc.wantErr {
				t.Fatalf("git commit err = %v, want error %v\n%s", err, tc.wantErr, out)
			}
			if moved := git(t, repo, "rev-parse", "HEAD") != head; moved == tc.wantErr {
				t.Errorf("HEAD moved = %v", moved)
			}
			if !tc.wantErr && out != tc.wantOut {
				t.Errorf("git commit output %q, want %q", out, tc.wantOut)
			}
			data, _ := os.ReadFile(log)
			if got := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n"); strings.Join(got, "|") != strings.Join(tc.wantLog, "|") {
				t.Errorf("hooks ran:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.wantLog, "\n"))
			}
		})
	}
}

// TestChainedHookGetsStdin feeds a hook by hand: git gives these two hooks no input, but
// the script promises the kept original the same standard input and status.
func TestChainedHookGetsStdin(t *testing.T) {
	isolateGit(t)
	repo := newRepo(t)
	dir := filepath.Join(repo, ".git", "hooks")
	out := filepath.Join(t.TempDir(), "seen")
	write(t, filepath.Join(dir, "pre-commit"), "#!/bin/sh\n{ echo \"$1|$2\"; cat; } >'"+out+"'\nexit 7\n", 0o755)
	if _, err := InstallGit(repo); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(dir, "pre-commit"), "a b", "c")
	cmd.Stdin = strings.NewReader("payload\n")
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 7 {
		t.Fatalf("hook err = %v, want exit status 7", err)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, []byte("a b|c\npayload\n")) {
		t.Errorf("original saw %q", got)
	}
}

// TestHookScriptReadsTheBoundList: the scripts start ckpt only for a work tree that
// state/bound.txt lists, reading a short list themselves and a long one with grep.
func TestHookScriptReadsTheBoundList(t *testing.T) {
	isolateGit(t)
	sysPath := systemPath(t)
	many := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "/elsewhere/%d\n", i)
		}
		return b.String()
	}
	tests := []struct {
		name   string
		list   func(top string) string // "-" for no list at all
		starts bool
	}{
		{"no list: ckpt decides", func(string) string { return "-" }, true},
		{"empty list", func(string) string { return "" }, false},
		{"listed first", func(top string) string { return top + "\n/elsewhere\n" }, true},
		{"listed last, no final newline", func(top string) string { return "/elsewhere\n" + top }, true},
		{"a longer path is not this one", func(top string) string { return top + "/sub\n" + top + "x\n" }, false},
		{"not listed, short list", func(string) string { return many(3) }, false},
		{"listed past the lines the shell reads", func(top string) string { return many(40) + top + "\n" }, true},
		{"not listed, long list", func(string) string { return many(40) }, false},
		{"listed as the 16th line", func(top string) string { return many(15) + top + "\n" }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			repo := newRepo(t)
			top, err := filepath.EvalSymlinks(repo)
			if err != nil {
				t.Fatal(err)
			}
			home := t.TempDir()
			t.Setenv("CKPT_HOME", home)
			if l := tc.list(top); l != "-" {
				write(t, filepath.Join(home, "state", "bound.txt"), l, 0o644)
			}
			if _, err := InstallGit(repo); err != nil {
				t.Fatal(err)
			}
			log := filepath.Join(t.TempDir(), "log")
			path := fakeCkpt(t, log) + string(os.PathListSeparator) + sysPath
			if out, err := commit(t, repo, path, "-m", "change"); err != nil {
				t.Fatalf("git commit: %v\n%s", err, out)
			}
			data, _ := os.ReadFile(log)
			if started := strings.Contains(string(data), "prepare-commit-msg"); started != tc.starts {
				t.Errorf("ckpt started = %v, want %v (log %q)", started, tc.starts, data)
			}
		})
	}
}
