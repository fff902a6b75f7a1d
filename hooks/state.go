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
	"slices"
	"strings"
	"time"

	"github.com/gofrs/flock"

	homepkg "github.com/ckpt-dev/ckpt/internal/home"
	"github.com/ckpt-dev/ckpt/repo"
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
	// Free marks a tracked memory directory (template free): every *.md file is committed
	// as it is, and DirSig (names, sizes and times of those files) says when they changed.
	Free   bool   `json:"free,omitempty"`
	DirSig string `json:"dir_sig,omitempty"`
	// Archived sessions keep their history but no trigger takes their checkpoints, and no
	// agent hook picks them.
	Archived bool `json:"archived,omitempty"`
}

// State is the trigger state of the sessions of a store. Each session's state is a file of
// its own, state/sessions/<id>.json, so that a git hook reads the one or two sessions bound
// to its repository (found through state/bound.json) instead of a thousand; a tick reads
// them all, which is still one small file per session.
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

// SessionStatePath is the state file of one session.
func SessionStatePath(home, id string) string {
	return filepath.Join(stateDir(home), "sessions", id+".json")
}

// boundPath maps git work trees to the sessions bound to them.
func boundPath(home string) string { return filepath.Join(stateDir(home), "bound.json") }

// LoadState reads the state of every session of the store at home; a store without any
// has empty state. It takes no lock: each file is only ever replaced whole by a rename.
func LoadState(home string) (*State, error) {
	st, _, err := loadSessions(home, nil)
	return st, err
}

// LoadSessions reads the state of the given sessions only.
func LoadSessions(home string, ids []string) (*State, error) {
	st, _, err := loadSessions(home, ids)
	if ids != nil && err == nil {
		for _, id := range ids {
			st.Session(id)
		}
	}
	return st, err
}

// loadSessions reads the named sessions' files (all when ids is nil) and returns their raw
// bytes too, so an update writes only what changed.
func loadSessions(home string, ids []string) (*State, map[string][]byte, error) {
	st := &State{Sessions: map[string]*SessionState{}}
	raw := map[string][]byte{}
	if ids == nil {
		entries, err := os.ReadDir(filepath.Join(stateDir(home), "sessions"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, err
		}
		for _, e := range entries {
			if id, ok := strings.CutSuffix(e.Name(), ".json"); ok && !e.IsDir() && !strings.HasPrefix(id, ".") {
				ids = append(ids, id)
			}
		}
	}
	for _, id := range ids {
		path := SessionStatePath(home, id)
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		var s SessionState
		if err := json.Unmarshal(data, &s); err != nil {
			return nil, nil, fmt.Errorf("%s: %w: %v", path, ErrCorruptState, err)
		}
		st.Sessions[id] = &s
		raw[id] = data
	}
	return st, raw, nil
}

// UpdateState reads every session's state, lets fn change it and writes back what changed,
// under the store's state lock so that a hook and a tick never lose each other's changes.
// When fn fails nothing is written; when it changes nothing, neither.
func UpdateState(home string, fn func(*State) error) error {
	return update(home, nil, fn)
}

// UpdateSessions is UpdateState for the named sessions only.
func UpdateSessions(home string, ids []string, fn func(*State) error) error {
	if ids == nil {
		ids = []string{}
	}
	return update(home, ids, fn)
}

func update(home string, ids []string, fn func(*State) error) error {
	dir := stateDir(home)
	if err := os.MkdirAll(filepath.Join(dir, "sessions"), repo.DirPerm); err != nil {
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

	st, raw, err := loadSessions(home, ids)
	if err != nil {
		return err
	}
	oldBound := map[string]string{}
	for id, s := range st.Sessions {
		oldBound[id] = s.Bound
	}
	if err := fn(st); err != nil {
		return err
	}
	boundChanged := map[string]string{}
	for id, s := range st.Sessions {
		data, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return fmt.Errorf("%s: %w", SessionStatePath(home, id), err)
		}
		data = append(data, '\n')
		if bytes.Equal(data, raw[id]) {
			continue
		}
		if err := repo.WriteFileAtomic(SessionStatePath(home, id), data, repo.FilePerm, true); err != nil {
			return err
		}
		if s.Bound != oldBound[id] {
			boundChanged[id] = s.Bound
		}
	}
	if len(boundChanged) > 0 {
		return updateBound(home, oldBound, boundChanged)
	}
	return nil
}

// boundKey is how a work tree is named in bound.json: its real path when it exists.
func boundKey(dir string) string {
	if p, err := filepath.EvalSymlinks(dir); err == nil {
		return p
	}
	return filepath.Clean(dir)
}

// updateBound moves sessions between work trees in bound.json. The caller holds the lock.
func updateBound(home string, old, changed map[string]string) error {
	m := map[string][]string{}
	if data, err := os.ReadFile(boundPath(home)); err == nil {
		if err := json.Unmarshal(data, &m); err != nil {
			return fmt.Errorf("%s: %w: %v", boundPath(home), ErrCorruptState, err)
		}
	}
	for id, to := range changed {
		if from := old[id]; from != "" {
			k := boundKey(from)
			m[k] = slices.DeleteFunc(m[k], func(x string) bool { return x == id })
			if len(m[k]) == 0 {
				delete(m, k)
			}
		}
		if to != "" {
			k := boundKey(to)
			if !slices.Contains(m[k], id) {
				m[k] = append(m[k], id)
				slices.Sort(m[k])
			}
		}
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := repo.WriteFileAtomic(boundPath(home), append(data, '\n'), repo.FilePerm, true); err != nil {
		return err
	}
	// The same list as plain lines, for the git hook scripts to grep before starting ckpt.
	keys := make([]string, 0, len(m))
	for k := range m {
		if strings.ContainsAny(k, "\n\r") {
			// A line-based list cannot name this work tree: without the list, the hooks
			// always start ckpt, which is slower but never skips a session.
			if err := os.Remove(boundTextPath(home)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			return nil
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var txt bytes.Buffer
	for _, k := range keys {
		txt.WriteString(k + "\n")
	}
	return repo.WriteFileAtomic(boundTextPath(home), txt.Bytes(), repo.FilePerm, true)
}

// boundTextPath lists the bound work trees one per line (see GitHookScript).
func boundTextPath(home string) string { return filepath.Join(stateDir(home), "bound.txt") }

// BoundTo lists the sessions bound to a git work tree: one small file read, which is all a
// git hook in a repository without sessions costs.
func BoundTo(home, workTree string) ([]string, error) {
	data, err := os.ReadFile(boundPath(home))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	m := map[string][]string{}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", boundPath(home), ErrCorruptState, err)
	}
	return m[boundKey(workTree)], nil
}

// BoundToProject lists the sessions bound to the git work tree top or to its main work
// tree (top being a linked `git worktree`): a project's sessions follow all its work trees.
func BoundToProject(home, top string) ([]string, error) {
	ids, err := BoundTo(home, top)
	if err != nil {
		return nil, err
	}
	if main := homepkg.MainWorkTree(top); main != top {
		more, err := BoundTo(home, main)
		if err != nil {
			return nil, err
		}
		for _, id := range more {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
	}
	return ids, nil
}

// TryTickLock takes the store's tick lock without waiting. ok is false when another tick
// holds it: ticks never overlap, and the second one should exit at once.
func TryTickLock(home string) (unlock func(), ok bool, err error) {
	dir := stateDir(home)
	if err := os.MkdirAll(dir, repo.DirPerm); err != nil {
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
