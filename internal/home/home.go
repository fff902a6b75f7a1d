// Package home finds the store and the git work tree a command runs in, from a directory
// and the file system alone (no git process): the store is --home (or $CKPT_HOME), else the
// .ckpt directory the working directory is inside, else .ckpt/ at the top of the enclosing
// git work tree, else ./.ckpt.
package home

import (
	"os"
	"path/filepath"
)

// Find returns the store's directory, absolute: flag when it is set (relative to cwd),
// else the .ckpt directory cwd is inside, else .ckpt at GitTop(cwd), else cwd/.ckpt.
func Find(flag, cwd string) string {
	if flag != "" {
		if filepath.IsAbs(flag) {
			return filepath.Clean(flag)
		}
		return filepath.Join(cwd, flag)
	}
	for d := cwd; ; d = filepath.Dir(d) {
		if filepath.Base(d) == ".ckpt" {
			return d
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	top := GitTop(cwd)
	if top == "" {
		top = cwd
	}
	return filepath.Join(top, ".ckpt")
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
