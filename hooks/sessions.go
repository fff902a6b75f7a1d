package hooks

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ckpt-dev/ckpt/repo"
)

// Unbind forgets the git work tree session id is bound to, and returns it ("" when it was
// bound to none): git hooks no longer checkpoint it or name it in trailers, and agent hooks
// no longer pick it as their project's session. Its history and files stay.
func Unbind(home, id string) (was string, err error) {
	err = UpdateSessions(home, []string{id}, func(st *State) error {
		s := st.Session(id)
		was, s.Bound = s.Bound, ""
		return nil
	})
	return was, err
}

// Archive retires session id: it keeps its history and files (log, show, search, push
// still see it) but is unbound, and no tick, git hook or agent hook takes its checkpoints
// or picks it again. Archiving twice changes nothing.
func Archive(home, id string) error {
	return UpdateSessions(home, []string{id}, func(st *State) error {
		s := st.Session(id)
		s.Bound, s.Archived = "", true
		return nil
	})
}

// RemoveSession deletes session r from the store: its repository (for a session bound to
// a directory with --worktree, only its git directory: the files of the directory are the
// harness's and stay), then its trigger state and binding. It takes the session's lock, so
// no hook is committing meanwhile. A remote keeps its copy.
func (rn *Runner) RemoveSession(r *repo.Repo) error {
	unlock, err := rn.CP.Store.Lock(r.LockName, true)
	if err != nil {
		return err
	}
	defer unlock()
	// Renamed out of the sessions' namespace first: a kill -9 during the removal leaves a
	// directory no command takes for a session, not half of one.
	gone := filepath.Join(filepath.Dir(r.Dir), ".rm-"+filepath.Base(r.Dir))
	if err := os.RemoveAll(gone); err != nil {
		return fmt.Errorf("%s: %w", gone, err)
	}
	if err := os.Rename(r.Dir, gone); err != nil {
		return fmt.Errorf("%s: %w", r.Dir, err)
	}
	if err := os.RemoveAll(gone); err != nil {
		return fmt.Errorf("%s: %w", gone, err)
	}
	if _, err := Unbind(rn.home(), r.ID); err != nil {
		return err
	}
	// Its trigger state, the status's cache of its secret scan, and the transcript offsets
	// of its recovered delta (state/delta/<id>.json, docs/architecture.md), which a new
	// session of the same name must not take for its own.
	st := stateDir(rn.home())
	for _, p := range []string{SessionStatePath(rn.home(), r.ID), filepath.Join(st, "secrets", r.ID+".json"), filepath.Join(st, "delta", r.ID+".json")} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	return nil
}
