package hooks

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
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
	path := indexFile + PreCommitMarkSuffix
	exists, regular, err := lstatRegular(path)
	if !exists || err != nil {
		return false, err
	}
	if !regular {
		return false, fmt.Errorf("%s: not a regular file, so not a mark ckpt wrote", path)
	}
	data, err := readMark(path)
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

// readMark reads at most the bytes a mark holds (a process id and a date): a mark is
// written by a hook script, so anything longer is not one.
func readMark(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 128))
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
