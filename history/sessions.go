package history

import (
	"errors"
	"time"

	"github.com/ckpt-dev/ckpt/hooks"
	"github.com/ckpt-dev/ckpt/repo"
)

// Session is one session of the store at a glance.
type Session struct {
	ID       string `json:"id"`
	Template string `json:"template"`
	// Path is the session's repository; Worktree is where its files are (the same
	// directory unless the session was bound with --worktree).
	Path     string `json:"path"`
	Worktree string `json:"worktree"`
	// Bound is the git work tree whose hooks checkpoint the session ("" for none).
	Bound string `json:"bound,omitempty"`
	// Head is the newest commit; Time, Trigger, Full and Subject are its.
	Head    string    `json:"head"`
	Time    time.Time `json:"time"`
	Trigger string    `json:"trigger"`
	Full    bool      `json:"full"`
	Subject string    `json:"subject"`
	// PendingNotes counts the notes.md entries waiting for a full sync.
	PendingNotes int `json:"pending_notes"`
	// Breaker is the session's circuit breaker.
	Breaker Breaker `json:"breaker"`
}

// Breaker is the state of a session's circuit breaker: open after consecutive failed
// checkpoints, until a person resets it.
type Breaker struct {
	Open     bool   `json:"open"`
	Failures int    `json:"failures"`
	Reason   string `json:"reason,omitempty"`
}

// Sessions lists the sessions of the store, sorted by id. A session that cannot be read
// (a damaged repository) is listed with what could be read.
func (h *Reader) Sessions() ([]Session, error) {
	ids, err := h.svc.Store.SessionIDs()
	if err != nil {
		return nil, err
	}
	state, err := hooks.LoadState(h.svc.Store.Home)
	if err != nil && !errors.Is(err, hooks.ErrCorruptState) {
		return nil, err
	}
	out := make([]Session, 0, len(ids))
	for _, id := range ids {
		s := Session{ID: string(id)}
		if state != nil {
			if ss := state.Sessions[string(id)]; ss != nil {
				s.Bound = ss.Bound
				s.Breaker = Breaker{Open: ss.Breaker.Open, Failures: ss.Breaker.Failures, Reason: ss.Breaker.Reason}
			}
		}
		err := h.peek(id, func(src *source) error {
			s.Template, s.Path, s.Worktree = src.template(), src.dir(), src.workDir()
			head, err := src.head()
			if err != nil || head == repo.ZeroHash {
				return err
			}
			ci, err := src.commit(head)
			if err != nil {
				return err
			}
			c := toCommit(src.id(), ci)
			s.Head, s.Time, s.Trigger, s.Full, s.Subject = c.Hash, c.Time, c.Trigger, c.Full, c.Subject
			if n, err := src.pendingNotes(h.svc); err == nil {
				s.PendingNotes = n
			}
			return nil
		})
		if errors.Is(err, repo.ErrBusy) {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}
