package hooks

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// markAncestors bounds how far up from its parent prepare-commit-msg looks for the git
// process that ran pre-commit: a hook of another tool (the pre-commit framework's, which
// runs the hook it replaced as its own child) sits in between.
const markAncestors = 4

// TakePreCommitMark reports whether ckpt's pre-commit hook ran for the commit whose
// prepare-commit-msg hook this is, and left its checkpoint to be taken here: the mark
// next to indexFile ($GIT_INDEX_FILE) names a git process that is this one's parent (or a
// near ancestor) and authorDate ($GIT_AUTHOR_DATE) is this commit's. The mark is removed
// either way: it is this commit's, or left by one that was aborted before this hook (git
// commit with nothing to commit), which must not make a later commit take a checkpoint
// that git commit --no-verify asked it to skip.
func TakePreCommitMark(indexFile, authorDate string) (bool, error) {
	if indexFile == "" {
		return false, nil
	}
	path := filepath.Join(filepath.Dir(indexFile), PreCommitMark)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	pid, date, ok := strings.Cut(strings.TrimSuffix(string(data), "\n"), " ")
	n, err := strconv.Atoi(pid)
	if !ok || err != nil || n <= 1 || date != authorDate {
		return false, nil
	}
	return isAncestor(n, os.Getppid(), markAncestors), nil
}

// isAncestor reports whether pid is p or one of the next n-1 processes above it. Without
// /proc (not Linux) only p itself is known.
func isAncestor(pid, p, n int) bool {
	for i := 0; i < n && p > 1; i++ {
		if p == pid {
			return true
		}
		p = parentOf(p)
	}
	return false
}

// parentOf is the parent of process p from /proc/p/stat, 0 when unknown.
func parentOf(p int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat")
	if err != nil {
		return 0
	}
	// pid (comm) state ppid …; comm may hold spaces and parentheses: the last ")" ends it.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0
	}
	pp, err := strconv.Atoi(f[1])
	if err != nil {
		return 0
	}
	return pp
}
