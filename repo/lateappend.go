package repo

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Late appends. An agent that opened notes.md before ckpt replaced it can write into the
// old file after the rename, where nobody would read it. ckpt watches the old file for a
// moment after replacing it (applyWorkTree), but a kill -9 in that moment would lose what
// arrives. So before it replaces an appendable file, ckpt links the old file into
// state/late/<lock>/<n>/old, with the work path and the length already carried over in
// state/late/<lock>/<n>/to, and removes the guard when the watch ends; after a kill, the
// next command that takes the lock appends whatever the old file grew past that length to
// the work file, and removes the guard.

// lateGuard is one replaced file kept for its late appends.
type lateGuard struct {
	dir, target string
	sync        bool
}

func (st *Store) lateDir(lock string) string { return filepath.Join(st.StateDir(), "late", lock) }

// guardLate links the open file f, which is path's current file and whose first seen bytes
// are accounted for, into the lock's late directory. It returns no guard where the file
// system cannot link (the watch alone covers those), and ErrWorkTreeChanged when path is no
// longer the file f is: someone replaced it after it was read, and replacing it again
// would discard their bytes.
func (st *Store) guardLate(lock, path string, f *os.File, seen int64) (*lateGuard, error) {
	if f == nil {
		return nil, nil
	}
	base := st.lateDir(lock)
	if err := os.MkdirAll(base, DirPerm); err != nil {
		return nil, nil
	}
	dir, err := os.MkdirTemp(base, strconv.FormatInt(time.Now().UnixNano(), 10)+"-")
	if err != nil {
		return nil, nil
	}
	g := &lateGuard{dir: dir, target: path, sync: st.Opts.Fsync}
	if err := g.advance(seen); err != nil {
		_ = os.RemoveAll(dir)
		return nil, nil
	}
	old := filepath.Join(dir, "old")
	if err := os.Link(path, old); err != nil {
		_ = os.RemoveAll(dir)
		return nil, nil
	}
	fi, err1 := f.Stat()
	li, err2 := os.Stat(old)
	if err1 != nil || err2 != nil {
		_ = os.RemoveAll(dir)
		return nil, nil
	}
	if !os.SameFile(fi, li) {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("%s: %w", path, ErrWorkTreeChanged)
	}
	return g, nil
}

// advance records that the old file's first seen bytes are in the work file. Called after
// they were carried over, so that a kill in between can only repeat an append, never lose it.
func (g *lateGuard) advance(seen int64) error {
	if g == nil {
		return nil
	}
	return WriteFileAtomic(filepath.Join(g.dir, "to"), []byte(g.target+"\n"+strconv.FormatInt(seen, 10)+"\n"), FilePerm, g.sync)
}

// drop removes the guard: the watch ended, or the replacement did not happen.
func (g *lateGuard) drop() {
	if g != nil {
		_ = os.RemoveAll(g.dir)
	}
}

// recoverLate appends to their work files the bytes that replaced files of the lock grew
// after ckpt last looked, and removes their guards. It runs under the lock.
func (st *Store) recoverLate(lock string) error {
	base := st.lateDir(lock)
	ents, err := os.ReadDir(base)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", base, err)
	}
	for _, e := range ents {
		dir := filepath.Join(base, e.Name())
		if rerr := recoverGuard(dir, st.Opts.Fsync); rerr != nil {
			err = errors.Join(err, rerr) // keep the guard: its bytes stay where they are
			continue
		}
		if rerr := os.RemoveAll(dir); rerr != nil {
			err = errors.Join(err, fmt.Errorf("%s: %w", dir, rerr))
		}
	}
	return err
}

func recoverGuard(dir string, sync bool) error {
	to, err := os.ReadFile(filepath.Join(dir, "to"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // made but never linked: nothing was guarded
	}
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	target, rest, ok := bytes.Cut(to, []byte("\n"))
	seen, err := strconv.ParseInt(string(bytes.TrimSpace(rest)), 10, 64)
	if !ok || err != nil || seen < 0 || len(target) == 0 {
		return nil // a torn record: the guard was being made when the process died
	}
	f, err := os.Open(filepath.Join(dir, "old"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() <= seen {
		return nil
	}
	if ti, err := os.Stat(string(target)); err == nil && os.SameFile(fi, ti) {
		// Killed before the replacement: the guarded file is still the work file, and
		// whatever it grew is already where the agent meant it.
		return nil
	}
	extra, err := io.ReadAll(io.NewSectionReader(f, seen, fi.Size()-seen))
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	p := string(target)
	af, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, FilePerm)
	if err != nil {
		return fmt.Errorf("%s: put back appends that came late: %w", p, err)
	}
	if _, err := af.Write(extra); err != nil {
		af.Close()
		return fmt.Errorf("%s: put back appends that came late: %w", p, err)
	}
	if sync {
		if err := af.Sync(); err != nil {
			af.Close()
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	if err := af.Close(); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	// Recorded before the guard goes, so that a kill in between does not append them twice.
	g := &lateGuard{dir: dir, target: p, sync: sync}
	return g.advance(seen + int64(len(extra)))
}

// DropLate removes the lock's late-append guards without putting anything back: a
// redaction removes every copy of what it redacts.
func (st *Store) DropLate(lock string) error {
	if err := os.RemoveAll(st.lateDir(lock)); err != nil {
		return fmt.Errorf("%s: %w", st.lateDir(lock), err)
	}
	return nil
}
