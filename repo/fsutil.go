package repo

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Modes of what ckpt creates in a store. Checkpoints, notes and state hold whatever the
// agent wrote, so a store is private to its owner: directories 0700, files 0600, and the
// umask can take bits away from these, never add them. A file that already exists keeps its
// mode when ckpt replaces it.
const (
	DirPerm  fs.FileMode = 0o700
	FilePerm fs.FileMode = 0o600
)

// WriteFileAtomic writes data to path through a temporary file in the same directory that is
// fsynced (when sync is set) and renamed over path, so a reader sees the old bytes or the new,
// never a mix, and a crash leaves one or the other. A new file gets perm less the umask; a
// file replaced keeps its mode.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode, sync bool) error {
	fi, err := os.Stat(path)
	if err != nil {
		fi = nil
	}
	return replaceFile(path, fi, data, perm, sync)
}

// replaceFile is WriteFileAtomic for a caller that has stat'ed path already: old is what
// it found (nil: nothing).
func replaceFile(path string, old fs.FileInfo, data []byte, perm fs.FileMode, sync bool) error {
	exact := false // perm is the replaced file's mode, which the umask must not change
	if old != nil && old.Mode().IsRegular() {
		perm, exact = old.Mode().Perm(), true
	} else {
		perm &^= umask()
	}
	dir := filepath.Dir(path)
	tmp, err := createTemp(dir, "."+filepath.Base(path)+".tmp-", perm)
	if err != nil {
		return err
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			_ = tmp.Close()
			_ = os.Remove(name)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if exact && perm&umask() != 0 {
		if err := tmp.Chmod(perm); err != nil {
			return err
		}
	}
	if sync {
		if err := tmp.Sync(); err != nil {
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := rename(name, path); err != nil {
		return err
	}
	ok = true
	if sync {
		return syncDir(dir)
	}
	return nil
}

// syncDir makes a rename or create in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// staleLockAge is how old a `.lock` file must be before ckpt removes it. ckpt takes these
// locks only while it holds the session's flock, so a lock file found then was left by a
// killed process or is held by the git CLI, which holds a ref or index lock for
// milliseconds, never seconds.
const staleLockAge = 2 * time.Second

// createLockFile creates path exclusively (git's `<file>.lock` protocol), retrying until
// deadline while someone else holds it. A lock file older than staleLockAge is removed.
func createLockFile(path string, deadline time.Time) (*os.File, error) {
	delay := time.Millisecond
	for {
		f, err := openFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, FilePerm)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if fi, err := os.Stat(path); err == nil && time.Since(fi.ModTime()) > staleLockAge {
			_ = os.Remove(path)
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s: %w (if no git or ckpt process is running, remove the stale lock)", path, ErrBusy)
		}
		time.Sleep(delay)
		delay = min(2*delay, 50*time.Millisecond)
	}
}

// commitLockFile writes data to an open lock file, syncs it and renames it over target.
func commitLockFile(f *os.File, target string, data []byte, sync bool) error {
	lock := f.Name()
	fail := func(err error) error {
		_ = f.Close()
		_ = os.Remove(lock)
		return err
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			return fail(err)
		}
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(lock)
		return err
	}
	if err := rename(lock, target); err != nil {
		_ = os.Remove(lock)
		return err
	}
	if sync {
		return syncDir(filepath.Dir(target))
	}
	return nil
}

// readFile is os.ReadFile through openFile.
func readFile(name string) ([]byte, error) {
	f, err := openFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f)
}

// readAll reads an open file to its end, into a buffer of the size it has (as os.ReadFile
// does), not one grown read after read.
func readAll(f *os.File) ([]byte, error) {
	fi, _ := f.Stat()
	return readAllSized(f, fi)
}

// readAllSized is readAll for a file whose fs.FileInfo the caller has (nil: not known).
func readAllSized(f *os.File, fi fs.FileInfo) ([]byte, error) {
	size := 512
	if fi != nil && fi.Size() > 0 && fi.Size() < 1<<30 {
		size = int(fi.Size()) + 1 // one more byte, to see the end in one read
	}
	b := make([]byte, 0, size)
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// createTemp creates a new file in dir named prefix and a random number, with perm (less
// the umask), as os.CreateTemp does through openFile.
func createTemp(dir, prefix string, perm fs.FileMode) (*os.File, error) {
	for range 100 {
		f, err := openFile(filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36)), os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("temporary file in %s: too many collisions", dir)
}

// ReadRegularFile reads a file that must be a regular file of at most max bytes: a path
// from outside (config, a subagent's progress file) can name a FIFO or a device, which
// would block or never end. A missing file is fs.ErrNotExist, as os.ReadFile says.
func ReadRegularFile(path string, max int64) ([]byte, error) {
	// Stat first: opening a FIFO to look at it would block.
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: larger than %d MiB", path, max>>20)
	}
	return b, nil
}
