// Package hooks installs and runs the triggers that take checkpoints without being asked:
// git hooks, Claude Code hooks and a cron or systemd schedule. It also keeps the unversioned
// state those triggers need under <home>/state/: per-session change detection, the circuit
// breaker, the tick lock and the append-only receipts of every action.
//
// The package touches only files it owns or edits with care (hook scripts, a settings
// file, the user's crontab); it never imports the other ckpt packages, so cmd composes it
// with sync and repo.
package hooks

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrBusy is returned when the state lock could not be taken in time.
var ErrBusy = errors.New("busy")

// stateDir is where every unversioned file of a store lives.
func stateDir(home string) string { return filepath.Join(home, "state") }

// writeFileAtomic replaces path with data so that a reader (or a crash) sees either the
// old or the new content, never a mix: temp file in the same directory, fsync, rename.
func writeFileAtomic(path string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		_ = f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	// CreateTemp makes 0600 files; the caller's mode (the old file's, if any) wins.
	if err = f.Chmod(perm); err != nil {
		_ = f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	syncDir(dir)
	return nil
}

// syncDir makes a rename durable; failure only weakens durability, so it is ignored.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}
