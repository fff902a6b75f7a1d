package repo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
)

// Unlock releases a lock taken with Lock.
type Unlock func()

// lockPath is the lock file of a session (or "knowledge"). Locks live in state/, outside
// the repositories, so that the session directory stays an ordinary git repository and so
// that init can lock a session that does not exist yet.
func (st *Store) lockPath(name string) string {
	return filepath.Join(st.StateDir(), "locks", name+".lock")
}

// Lock takes the lock of a session (or of the knowledge repository, name "knowledge"):
// exclusive to write, shared to read. It waits up to Opts.LockTimeout, then returns ErrBusy.
// An exclusive lock first puts back notes an agent appended to a replaced notes.md while a
// kill cut ckpt's watch short (lateappend.go): the one write a dry run may see, and the
// agent's own bytes.
func (st *Store) Lock(name string, exclusive bool) (Unlock, error) {
	path := st.lockPath(name)
	if err := os.MkdirAll(filepath.Dir(path), DirPerm); err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	fl := flock.New(path)
	ctx, cancel := context.WithTimeout(context.Background(), st.Opts.LockTimeout)
	defer cancel()
	var ok bool
	var err error
	if exclusive {
		ok, err = fl.TryLockContext(ctx, 5*time.Millisecond)
	} else {
		ok, err = fl.TryRLockContext(ctx, 5*time.Millisecond)
	}
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	if !ok {
		return nil, fmt.Errorf("%s: %w: another ckpt holds its lock (waited %s)", name, ErrBusy, st.Opts.LockTimeout)
	}
	if exclusive {
		// Best effort: a guard that cannot be put back stays for the next command.
		_ = st.recoverLate(name)
	}
	return func() { _ = fl.Unlock() }, nil
}
