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

	"github.com/ckpt-dev/ckpt/internal/failpoint"
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
	type write struct {
		id   string
		data []byte
	}
	var writes []write
	moved := map[string]string{}
	for id, s := range st.Sessions {
		data, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return fmt.Errorf("%s: %w", SessionStatePath(home, id), err)
		}
		data = append(data, '\n')
		if bytes.Equal(data, raw[id]) {
			continue
		}
		writes = append(writes, write{id, data})
		if s.Bound != oldBound[id] {
			moved[id] = s.Bound
		}
	}
	// The index of bindings (bound.json, bound.txt) never misses a binding the sessions'
	// files hold, so that a kill -9 anywhere in here cannot hide a bound session from a
	// hook: before the files change it lists the old and the new bindings, after them the
	// new ones only. Readers drop what it lists beyond the files (BoundSessions).
	var index map[string][]string
	if len(moved) > 0 {
		var ok bool
		if index, ok, err = readBoundIndex(home); err != nil {
			return err
		}
		if !ok {
			if index, err = indexFromSessions(home); err != nil {
				return err
			}
		}
		if err := writeBoundIndex(home, moveBound(index, oldBound, moved, true)); err != nil {
			return err
		}
		if err := failpoint.Check("bindings-listed"); err != nil {
			return err
		}
	}
	for _, w := range writes {
		if err := repo.WriteFileAtomic(SessionStatePath(home, w.id), w.data, repo.FilePerm, true); err != nil {
			return err
		}
	}
	if len(moved) > 0 {
		if err := failpoint.Check("bindings-written"); err != nil {
			return err
		}
		return writeBoundIndex(home, moveBound(index, oldBound, moved, false))
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

// moveBound returns a copy of the index m with the sessions of changed bound to their new
// work trees; keep leaves them under their old ones too (the superset update writes first).
func moveBound(m map[string][]string, old, changed map[string]string, keep bool) map[string][]string {
	out := make(map[string][]string, len(m)+len(changed))
	for k, ids := range m {
		out[k] = slices.Clone(ids)
	}
	for id, to := range changed {
		if from := old[id]; from != "" && !keep {
			k := boundKey(from)
			out[k] = slices.DeleteFunc(out[k], func(x string) bool { return x == id })
			if len(out[k]) == 0 {
				delete(out, k)
			}
		}
		if to != "" {
			k := boundKey(to)
			if !slices.Contains(out[k], id) {
				out[k] = append(out[k], id)
				slices.Sort(out[k])
			}
		}
	}
	return out
}

// indexFromSessions builds the index of bindings from every session's state file.
func indexFromSessions(home string) (map[string][]string, error) {
	st, _, err := loadSessions(home, nil)
	if err != nil {
		return nil, err
	}
	m := map[string][]string{}
	for id, s := range st.Sessions {
		if s.Bound != "" {
			k := boundKey(s.Bound)
			m[k] = append(m[k], id)
		}
	}
	for _, ids := range m {
		slices.Sort(ids)
	}
	return m, nil
}

// readBoundIndex reads bound.json; ok is false when there is none, or none that parses (it
// is derived data: the sessions' files rebuild it).
func readBoundIndex(home string) (m map[string][]string, ok bool, err error) {
	data, err := os.ReadFile(boundPath(home))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", boundPath(home), err)
	}
	if err := json.Unmarshal(data, &m); err != nil || m == nil {
		return nil, false, nil
	}
	return m, true, nil
}

// writeBoundIndex replaces bound.json, then bound.txt. The caller holds the state lock.
func writeBoundIndex(home string, m map[string][]string) error {
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

// boundLookup is boundIndex for the work trees keys only: a store's index names every work
// tree its thousand sessions are bound to, and a hook needs one.
func boundLookup(home string, keys []string) (map[string][]string, error) {
	data, err := os.ReadFile(boundPath(home))
	if err != nil {
		return boundIndex(home) // missing, or unreadable: boundIndex says which
	}
	var raw map[string]json.RawMessage
	if json.Unmarshal(data, &raw) != nil || raw == nil {
		return boundIndex(home)
	}
	m := map[string][]string{}
	for _, k := range keys {
		if v, ok := raw[k]; ok {
			var ids []string
			if json.Unmarshal(v, &ids) != nil {
				return boundIndex(home)
			}
			m[k] = ids
		}
	}
	return m, nil
}

// boundIndex is the index of bindings: bound.json, or, when it is missing or unreadable (a
// store from before it, a file deleted by hand), the one rebuilt from the sessions' files,
// which is written back when no other ckpt holds the state lock.
func boundIndex(home string) (map[string][]string, error) {
	m, ok, err := readBoundIndex(home)
	if err != nil || ok {
		return m, err
	}
	if _, err := os.Stat(filepath.Join(stateDir(home), "sessions")); errors.Is(err, fs.ErrNotExist) {
		return map[string][]string{}, nil // no session has state: nothing is bound, and no store is made
	}
	fl := flock.New(filepath.Join(stateDir(home), "state.lock"))
	locked, err := fl.TryLock()
	if err != nil || !locked {
		return indexFromSessions(home) // another ckpt is updating: read, do not write
	}
	defer func() { _ = fl.Unlock() }()
	if m, ok, err := readBoundIndex(home); err != nil || ok {
		return m, err // rebuilt meanwhile
	}
	if m, err = indexFromSessions(home); err != nil {
		return nil, err
	}
	return m, writeBoundIndex(home, m)
}

// boundTextPath lists the bound work trees one per line (see GitHookScript).
func boundTextPath(home string) string { return filepath.Join(stateDir(home), "bound.txt") }

// BoundTo lists the sessions bound to a git work tree (BoundSessions without its main
// work tree).
func BoundTo(home, workTree string) ([]string, error) {
	ids, _, err := boundSessions(home, []string{boundKey(workTree)})
	return ids, err
}

// BoundToProject lists the sessions bound to the git work tree top or to its main work
// tree (top being a linked `git worktree`): a project's sessions follow all its work trees.
func BoundToProject(home, top string) ([]string, error) {
	ids, _, err := BoundSessions(home, top)
	return ids, err
}

// BoundSessions is BoundToProject with the state of the sessions it lists: the index names
// them (one small file read, which is all a git hook in a repository without sessions
// costs) and their own state files confirm it, so that an index left with more than the
// files say never makes a hook take or name a session bound elsewhere.
func BoundSessions(home, top string) ([]string, *State, error) {
	keys := []string{boundKey(top)}
	if main := homepkg.MainWorkTree(top); main != top {
		if k := boundKey(main); k != keys[0] {
			keys = append(keys, k)
		}
	}
	return boundSessions(home, keys)
}

func boundSessions(home string, keys []string) ([]string, *State, error) {
	m, err := boundLookup(home, keys)
	if err != nil {
		return nil, nil, err
	}
	var listed []string
	for _, k := range keys {
		for _, id := range m[k] {
			if _, err := repo.ParseSessionID(id); err != nil {
				continue // not an id ckpt makes: its state path could lead anywhere
			}
			if !slices.Contains(listed, id) {
				listed = append(listed, id)
			}
		}
	}
	if len(listed) == 0 {
		return nil, &State{Sessions: map[string]*SessionState{}}, nil
	}
	st, err := LoadSessions(home, listed)
	if err != nil {
		return nil, nil, err
	}
	var ids []string
	for _, id := range listed {
		if b := st.Session(id).Bound; b != "" && slices.Contains(keys, boundKey(b)) {
			ids = append(ids, id)
		}
	}
	if len(ids) < len(listed) {
		repairBoundIndex(home)
	}
	slices.Sort(ids)
	return ids, st, nil
}

// repairBoundIndex rebuilds the index from the sessions' files when it lists more than they
// say, unless another ckpt holds the state lock (it may be the update that will).
func repairBoundIndex(home string) {
	fl := flock.New(filepath.Join(stateDir(home), "state.lock"))
	if locked, err := fl.TryLock(); err != nil || !locked {
		return
	}
	defer func() { _ = fl.Unlock() }()
	if m, err := indexFromSessions(home); err == nil {
		_ = writeBoundIndex(home, m)
	}
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
