// Package home finds the store and the project a command runs in, from a directory and the
// file system alone (no git process): the store is --home (or $CKPT_HOME), else the .ckpt
// directory the working directory is inside, else an existing .ckpt/ at the top of the
// enclosing git work tree or of its main work tree (a linked `git worktree` shares its
// repository's store), else the user store when it holds sessions of this project, else
// .ckpt/ at the top of the main work tree (./.ckpt outside git).
package home

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Dir is the name of a project's store directory.
const Dir = ".ckpt"

// Find returns the store's directory, absolute, without the user store (FindWith).
func Find(flag, cwd string) string { return FindWith(flag, cwd, "") }

// FindWith returns the store's directory, absolute: flag when it is set (relative to cwd),
// else Existing(cwd), else userStore when its state lists this project's work tree (hooks
// installed for the user keep every project's sessions there), else .ckpt at the top of
// the main work tree, else cwd/.ckpt.
func FindWith(flag, cwd, userStore string) string {
	if flag != "" {
		if filepath.IsAbs(flag) {
			return filepath.Clean(flag)
		}
		return filepath.Join(cwd, flag)
	}
	if dir := Existing(cwd); dir != "" {
		return dir
	}
	project := Project(cwd)
	if userStore != "" && Lists(userStore, project) {
		return userStore
	}
	return filepath.Join(project, Dir)
}

// Existing returns the store found from cwd that is there: the .ckpt directory cwd is
// inside, else .ckpt at the top of the git work tree, else .ckpt at the top of the main
// work tree when cwd is in a linked one; "" when there is none.
func Existing(cwd string) string {
	for d := cwd; ; d = filepath.Dir(d) {
		if filepath.Base(d) == Dir {
			return d
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	top := GitTop(cwd)
	if top == "" {
		return ""
	}
	for _, t := range []string{top, MainWorkTree(top)} {
		if fi, err := os.Stat(filepath.Join(t, Dir)); err == nil && fi.IsDir() {
			return filepath.Join(t, Dir)
		}
	}
	return ""
}

// Project is the project dir belongs to: the main work tree of its git repository (a
// linked worktree's too), else dir itself.
func Project(dir string) string {
	if top := GitTop(dir); top != "" {
		return MainWorkTree(top)
	}
	return dir
}

// GitTop walks up from dir to the nearest directory holding .git (a directory, or the file
// of a linked work tree), and returns it; "" when there is none.
func GitTop(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// MainWorkTree returns the main work tree of the repository whose work tree is top: top
// itself, unless top is a linked work tree (`git worktree add`), whose .git file names a
// directory under the main repository's .git (what `git rev-parse --git-common-dir`
// answers). A submodule, a bare main repository or anything unreadable keeps top.
func MainWorkTree(top string) string {
	b, err := os.ReadFile(filepath.Join(top, ".git"))
	if err != nil {
		return top // a directory (os.ReadFile fails on it), or unreadable
	}
	gitDir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return top
	}
	gitDir = strings.TrimSpace(gitDir)
	if !filepath.IsAbs(gitDir) {
		gitDir = filepath.Join(top, gitDir)
	}
	common, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if err != nil {
		return top // not a linked work tree (a submodule's .git file, say)
	}
	dir := strings.TrimSpace(string(common))
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(gitDir, dir)
	}
	dir = filepath.Clean(dir)
	if filepath.Base(dir) != ".git" {
		return top // the main repository is bare: it has no work tree
	}
	return filepath.Dir(dir)
}

// UserStore is the store of hooks installed for the user (every project's sessions, each
// keyed by its project): $XDG_DATA_HOME/ckpt, else ~/.local/share/ckpt; "" without a home.
func UserStore(getenv func(string) string) string {
	if d := getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "ckpt")
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "share", "ckpt")
	}
	return ""
}

// Lists reports whether the store at store has sessions bound to the work tree project:
// one line of its state/bound.txt, which the hooks keep.
func Lists(store, project string) bool {
	f, err := os.Open(filepath.Join(store, "state", "bound.txt"))
	if err != nil {
		return false
	}
	defer f.Close()
	want := project
	if p, err := filepath.EvalSymlinks(project); err == nil {
		want = p
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if sc.Text() == want {
			return true
		}
	}
	return false
}

// gitignore keeps a store out of the git work tree it sits in.
var gitignore = []byte("# the ckpt store: its repositories are versioned on their own\n*\n")

// Ensure creates the store directory dir (mode 0700) with the .gitignore that keeps it, and
// everything later written in it, out of the enclosing repository's status. Every path that
// creates a store goes through here; a store that lacks the file gets it.
func Ensure(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create store %s: %w", dir, err)
	}
	p := filepath.Join(dir, ".gitignore")
	if _, err := os.Lstat(p); err == nil {
		return nil // there already: the user may have made it their own
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", p, err)
	}
	if err := os.WriteFile(p, gitignore, 0o600); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	return nil
}
