package delta

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
)

// State is what delta recovery remembers of a session between syncs: the transcripts it has
// read and, for each, the offset where its last read stopped. One session may follow several
// transcripts (each Claude Code conversation writes its own file), and each is read on from
// its own offset, so going back to an earlier conversation reads only what it gained. It
// lives in <home>/state/delta/<id>.json.
type State struct {
	// Followed are the transcripts, least recently followed first: the last is the one the
	// session follows now. At most maxFollowed are kept.
	Followed []Followed
}

// Followed is one transcript a session has read, and where its last read stopped.
type Followed struct {
	Path   string `json:"path"`
	Offset int64  `json:"offset"`
}

// maxFollowed bounds how many transcripts a state remembers; one forgotten and followed
// again is read from its start, and the delta keeps each line once.
const maxFollowed = 64

// Transcript is the transcript the session follows now, "" when none.
func (s State) Transcript() string {
	if len(s.Followed) == 0 {
		return ""
	}
	return s.Followed[len(s.Followed)-1].Path
}

// Offset is where the last read of the transcript at path stopped (0 when never read).
func (s State) Offset(path string) int64 {
	for _, f := range s.Followed {
		if f.Path == path {
			return f.Offset
		}
	}
	return 0
}

// Follow returns the state that follows the transcript at path (an absolute path), read up
// to offset; the other transcripts keep theirs.
func (s State) Follow(path string, offset int64) State {
	out := State{Followed: make([]Followed, 0, len(s.Followed)+1)}
	for _, f := range s.Followed {
		if f.Path != path {
			out.Followed = append(out.Followed, f)
		}
	}
	out.Followed = append(out.Followed, Followed{Path: path, Offset: offset})
	if n := len(out.Followed); n > maxFollowed {
		out.Followed = out.Followed[n-maxFollowed:]
	}
	return out
}

// Equal reports whether two states remember the same.
func (s State) Equal(o State) bool { return slices.Equal(s.Followed, o.Followed) }

// stateFile is the state on disk. Transcript and Offset are the followed transcript and its
// offset, as every ckpt has written them; Transcripts, added later, lists them all.
type stateFile struct {
	Transcript  string     `json:"transcript,omitempty"`
	Offset      int64      `json:"offset"`
	Transcripts []Followed `json:"transcripts,omitempty"`
}

func statePath(st *repo.Store, id string) string {
	return filepath.Join(st.StateDir(), "delta", id+".json")
}

// LoadState reads a session's state; a session that never recovered a delta has none. A
// state written before sessions followed several transcripts reads as one transcript.
func LoadState(st *repo.Store, id string) (State, error) {
	var s State
	b, err := os.ReadFile(statePath(st, id))
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, err
	}
	var f stateFile
	if err := json.Unmarshal(b, &f); err != nil {
		return s, fmt.Errorf("%s: corrupt state: %w", statePath(st, id), err)
	}
	for _, t := range f.Transcripts {
		if t.Path == "" || t.Offset < 0 {
			return s, fmt.Errorf("%s: corrupt state: a transcript without a path or with a negative offset", statePath(st, id))
		}
		s = s.Follow(t.Path, t.Offset)
	}
	if f.Transcript != "" {
		s = s.Follow(f.Transcript, f.Offset)
	}
	return s, nil
}

// SaveState replaces a session's state atomically.
func SaveState(st *repo.Store, id string, s State) error {
	p := statePath(st, id)
	if err := os.MkdirAll(filepath.Dir(p), repo.DirPerm); err != nil {
		return err
	}
	f := stateFile{Transcripts: s.Followed}
	if cur := s.Transcript(); cur != "" {
		f.Transcript, f.Offset = cur, s.Offset(cur)
	}
	b, _ := json.Marshal(f)
	return repo.WriteFileAtomic(p, b, repo.FilePerm, st.Opts.Fsync)
}

// Sources are what a recovery reads: a transcript and daily logs.
type Sources struct {
	// Transcript is followed from now on (and remembered). Empty, the recovery follows the
	// transcript the state follows, else Recorded.
	Transcript string
	// Recorded is the transcript recorded for the session when it was made or bound (ckpt
	// init --transcript, an agent hook): followed when neither Transcript nor the state
	// names one.
	Recorded string
	Logs     []string
}

// Report says what a recovery took in.
type Report struct {
	Entries int    `json:"entries"`
	From    string `json:"from,omitempty"`
	To      string `json:"to,omitempty"`
}

// Recover reads the transcript (from where the last recovery stopped, per prev) and the
// daily logs' entries newer than lastUpdated (the checkpoint's _last_updated_), and merges
// them into sec, the delta section (nil: the checkpoint has none, and only the state
// moves). It returns the state to save, what it took in and its warnings.
//
// The offset, not the clock, says what is new in a transcript: the first read takes all
// of it (the 2 KB limit keeps the newest), so a session created at PreCompact keeps the
// conversation that led there, and later reads take every line past the saved offset, even
// one older than _last_updated_ (a write moved it meanwhile). A transcript that is gone,
// unreadable or not a regular file costs the delta, never the checkpoint: hooks and ticks
// keep committing, and the offset stays.
func Recover(sec *sections.Section, lastUpdated string, src Sources, prev State, now time.Time) (next State, rep Report, warnings []string, err error) {
	next = prev
	path := src.Transcript
	if path == "" && prev.Transcript() == "" {
		path = src.Recorded
	}
	if path != "" {
		abs, err := filepath.Abs(path)
		if err != nil {
			return prev, rep, nil, err
		}
		if abs != prev.Transcript() {
			next = prev.Follow(abs, prev.Offset(abs))
		}
	}
	cur := next.Transcript()
	if sec == nil || (cur == "" && len(src.Logs) == 0) {
		return next, rep, nil, nil
	}
	since, _ := time.Parse(checkpoint.TimeFormat, lastUpdated)
	var entries []entry
	if cur != "" {
		tr, err := readTranscript(cur, next.Offset(cur), time.Time{})
		if err != nil {
			warnings = append(warnings, err.Error()+"; checkpoint taken without a delta from it")
		} else {
			entries = append(entries, tr.Entries...)
			warnings = append(warnings, tr.Warnings...)
			next = next.Follow(cur, tr.Next)
		}
	}
	for _, l := range src.Logs {
		es, warns, err := readDailyLog(l, since)
		if err != nil {
			return prev, rep, warnings, err
		}
		entries = append(entries, es...)
		warnings = append(warnings, warns...)
	}
	if len(entries) == 0 {
		return next, rep, warnings, nil
	}
	from := since
	if from.IsZero() {
		from = entries[0].Time
		for _, e := range entries {
			if e.Time.Before(from) {
				from = e.Time
			}
		}
	}
	*sec = updateSection(*sec, entries, from, now, sectionLimit)
	return next, Report{Entries: len(entries), From: checkpoint.FormatTime(from), To: checkpoint.FormatTime(now)}, warnings, nil
}
