package repo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		perm = fi.Mode().Perm()
	} else {
		perm &^= umask()
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
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
	if err := tmp.Chmod(perm); err != nil {
		return err
	}
	if sync {
		if err := tmp.Sync(); err != nil {
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(name, path); err != nil {
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
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, FilePerm)
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
	if err := os.Rename(lock, target); err != nil {
		_ = os.Remove(lock)
		return err
	}
	if sync {
		return syncDir(filepath.Dir(target))
	}
	return nil
}
