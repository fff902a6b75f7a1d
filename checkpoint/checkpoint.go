// Package checkpoint is the one path to a commit on a session's main history. Every write,
// commit from disk and restore, and every sync and pull built on them, goes through it:
// uncommitted bytes in the work tree are recorded first (autosave), then the command's
// change gets metadata upkeep (_last_updated_, _session_id_), the template's check and the
// shrink guard; a checkpoint check refuses is kept under refs/ckpt/rejected/N and nothing
// else changes. The commit message and its Ckpt-* trailers are written here, and gc's
// squash of old sparse checkpoints is decided here.
//
// It never prints: results come back as values for cmd/ckpt to show.
package checkpoint

import (
	"errors"
	"fmt"
	"time"

	"github.com/ckpt-dev/ckpt/internal/config"
	"github.com/ckpt-dev/ckpt/internal/hint"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
)

// File is the checkpoint's file name in a session's work tree.
const File = "checkpoint.md"

// NotesFile is the scratch notes file.
const NotesFile = "notes.md"

// TimeFormat is how ckpt writes times in metadata lines: 2026-04-01T22:00Z.
const TimeFormat = "2006-01-02T15:04Z"

// FormatTime formats t for a metadata line.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// Service carries what every commit needs: the store and its configuration.
type Service struct {
	Store  *repo.Store
	Config *config.Config
	// FinishPull finishes, or takes back, a pull that was killed half way through writing a
	// work tree (remote.Service.FinishPull), before a command reads that work tree: its
	// files would otherwise be taken for new work. The caller holds the lock. Whoever
	// builds a Service for a store that may pull sets it.
	FinishPull func(r *repo.Repo) error
	// Conversation, when set, is the agent conversation this process commits for (an agent
	// hook's): every commit names it in a Ckpt-Conversation trailer.
	Conversation string
}

// New returns a Service.
func New(st *repo.Store, cfg *config.Config) *Service {
	if cfg == nil {
		cfg = &config.Config{}
	}
	return &Service{Store: st, Config: cfg}
}

func (s *Service) now() time.Time { return s.Store.Opts.Now() }

// Recover runs FinishPull, when set, and words its failure.
func (s *Service) Recover(r *repo.Repo) error {
	if s.FinishPull == nil {
		return nil
	}
	if err := s.FinishPull(r); err != nil {
		return fmt.Errorf("%s: finish the interrupted pull: %w", r.ID, err)
	}
	return nil
}

// ErrRejected is wrapped by every RejectedError.
var ErrRejected = errors.New("checkpoint rejected")

// RejectedError is a write that failed check: nothing was committed on the main history,
// and the bytes are kept under Ref ("" for a dry run, which keeps nothing).
type RejectedError struct {
	File     string
	Ref      string
	Commit   repo.Hash
	Findings []sections.Finding
}

func (e *RejectedError) Error() string {
	n := 0
	for _, f := range e.Findings {
		if f.Severity == sections.Error {
			n++
		}
	}
	return fmt.Sprintf("%s: %s with %d error(s); nothing committed, the bytes are kept as %s", e.File, ErrRejected, n, e.Ref)
}

func (e *RejectedError) Unwrap() error { return ErrRejected }

// maxPlans bounds how often a command plans again because a file it was about to replace
// changed underneath (an agent writing while ckpt commits).
const maxPlans = 20

// Retry runs one attempt of a command again while the work tree changes underneath it
// (repo.ErrWorkTreeChanged), up to 20 times.
func Retry[T any](attempt func() (T, error)) (T, error) {
	for i := 1; ; i++ {
		res, err := attempt()
		if !errors.Is(err, repo.ErrWorkTreeChanged) || i == maxPlans {
			if errors.Is(err, repo.ErrWorkTreeChanged) {
				err = hint.New(err, "something keeps writing it; nothing was lost, try again")
			}
			return res, err
		}
		time.Sleep(time.Duration(i) * time.Millisecond)
	}
}

// HeadFiles returns main's head and its files (none before the first commit).
func HeadFiles(r *repo.Repo) (repo.Hash, map[string][]byte, error) {
	head, err := r.Head()
	if err != nil {
		return head, nil, err
	}
	if head == repo.ZeroHash {
		return head, map[string][]byte{}, nil
	}
	files, err := r.Files(head)
	return head, files, err
}

// ValidSessionFile accepts the files a session versions: checkpoint.md, notes.md and spill
// files checkpoint-<topic>.md.
func ValidSessionFile(name string) error {
	if name == "MEMORY.md" || name == "knowledge-graph.md" {
		return fmt.Errorf("%w: %s lives in the knowledge repository, not in a session", repo.ErrInvalidName, name)
	}
	return repo.ValidFileName(name)
}
