package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
)

// ErrCorruptState is returned when sessions.json cannot be read; it is never reset
// silently, because it holds the breakers a person has to look at.
var ErrCorruptState = errors.New("corrupt state file")

// stateLockTimeout bounds the wait for another ckpt's read-modify-write of the state.
const stateLockTimeout = 10 * time.Second

// SessionState is what the triggers remember about one session between runs. Change
// detection compares sizes and modification times from os.Stat, never file contents.
type SessionState struct {
	Breaker Breaker `json:"breaker,omitzero"`
	// Transcript is the agent transcript the session follows ("" if none).
	Transcript string `json:"transcript,omitempty"`
	// TranscriptSize and TranscriptMtime are the transcript at the last checkpoint.
	TranscriptSize  int64     `json:"transcript_size,omitempty"`
	TranscriptMtime time.Time `json:"transcript_mtime,omitzero"`
	// SizeAtLastFull is the transcript size at the last full sync.
	SizeAtLastFull  int64 `json:"size_at_last_full,omitempty"`
	SparseSinceFull int   `json:"sparse_since_full,omitempty"`
	// NotesSize and NotesMtime are notes.md as the last full sync's reset left it: any
	// difference means entries are pending.
	NotesSize  int64     `json:"notes_size,omitempty"`
	NotesMtime time.Time `json:"notes_mtime,omitzero"`
	// NotesSeenSize and NotesSeenMtime are notes.md at the last checkpoint of any kind,
	// so that an open breaker does not take the same sparse checkpoint on every tick.
	NotesSeenSize  int64     `json:"notes_seen_size,omitempty"`
	NotesSeenMtime time.Time `json:"notes_seen_mtime,omitzero"`
	LastCheckpoint time.Time `json:"last_checkpoint,omitzero"`
	LastFull       time.Time `json:"last_full,omitzero"`
	// CheckpointSize and CheckpointMtime are checkpoint.md at the last checkpoint: a
	// harness that rewrites it in place calls for a sparse checkpoint that records it.
	CheckpointSize  int64     `json:"checkpoint_size,omitempty"`
	CheckpointMtime time.Time `json:"checkpoint_mtime,omitzero"`
	// WorkDir is the session's work tree, so a tick stats files without opening the
	// repository's config.
	WorkDir string `json:"workdir,omitempty"`
	// Bound is the git work tree the session is bound to ("" if none).
	Bound string `json:"bound,omitempty"`
}

// State is the trigger state of every session of a store, kept in one file so that a
// tick reads one file, not one per session.
type State struct {
	Sessions map[string]*SessionState `json:"sessions"`
}

// Session returns the state of id, creating an empty one.
func (st *State) Session(id string) *SessionState {
	s := st.Sessions[id]
	if s == nil {
		s = &SessionState{}
		st.Sessions[id] = s
	}
	return s
}

// StatePath is the state file of the store at home.
func StatePath(home string) string { return filepath.Join(stateDir(home), "sessions.json") }

// LoadState reads the state of the store at home; a store without one has empty state.
// It takes no lock: the file is only ever replaced whole by a rename.
func LoadState(home string) (*State, error) {
	st, _, err := loadState(home)
	return st, err
}

func loadState(home string) (*State, []byte, error) {
	path := StatePath(home)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &State{Sessions: map[string]*SessionState{}}, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, nil, fmt.Errorf("%s: %w: %v", path, ErrCorruptState, err)
	}
	if st.Sessions == nil {
		st.Sessions = map[string]*SessionState{}
	}
	for id, s := range st.Sessions {
		if s == nil {
			st.Sessions[id] = &SessionState{}
		}
	}
	return &st, data, nil
}

// UpdateState reads the state, lets fn change it and writes it back, all under the
// store's state lock so that a hook and a tick never lose each other's changes. When fn
// fails nothing is written; when it changes nothing, neither.
func UpdateState(home string, fn func(*State) error) error {
	dir := stateDir(home)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	lockPath := filepath.Join(dir, "state.lock")
	fl := flock.New(lockPath)
	ctx, cancel := context.WithTimeout(context.Background(), stateLockTimeout)
	defer cancel()
	ok, err := fl.TryLockContext(ctx, 5*time.Millisecond)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", lockPath, err)
	}
	if !ok {
		return fmt.Errorf("%s: %w: another ckpt holds it (waited %s)", lockPath, ErrBusy, stateLockTimeout)
	}
	defer func() { _ = fl.Unlock() }()

	st, old, err := loadState(home)
	if err != nil {
		return err
	}
	if err := fn(st); err != nil {
		return err
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", StatePath(home), err)
	}
	data = append(data, '\n')
	if bytes.Equal(data, old) {
		return nil
	}
	return writeFileAtomic(StatePath(home), data, 0o644)
}

// TryTickLock takes the store's tick lock without waiting. ok is false when another tick
// holds it: ticks never overlap, and the second one should exit at once.
func TryTickLock(home string) (unlock func(), ok bool, err error) {
	dir := stateDir(home)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, false, fmt.Errorf("%s: %w", dir, err)
	}
	path := filepath.Join(dir, "tick.lock")
	fl := flock.New(path)
	ok, err = fl.TryLock()
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	if !ok {
		return nil, false, nil
	}
	return func() { _ = fl.Unlock() }, true, nil
}
