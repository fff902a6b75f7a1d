package delta

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
)

// State is what delta recovery remembers of a session between syncs: the transcript it
// follows and where it stopped reading it. It lives in <home>/state/delta/<id>.json.
type State struct {
	Transcript string `json:"transcript,omitempty"`
	Offset     int64  `json:"offset"`
}

func statePath(st *repo.Store, id string) string {
	return filepath.Join(st.StateDir(), "delta", id+".json")
}

// LoadState reads a session's state; a session that never recovered a delta has none.
func LoadState(st *repo.Store, id string) (State, error) {
	var s State
	b, err := os.ReadFile(statePath(st, id))
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("%s: corrupt state: %w", statePath(st, id), err)
	}
	return s, nil
}

// SaveState replaces a session's state atomically.
func SaveState(st *repo.Store, id string, s State) error {
	p := statePath(st, id)
	if err := os.MkdirAll(filepath.Dir(p), repo.DirPerm); err != nil {
		return err
	}
	b, _ := json.Marshal(s)
	return repo.WriteFileAtomic(p, b, repo.FilePerm, st.Opts.Fsync)
}

// Sources are what a recovery reads: a transcript (remembered for later recoveries once
// named) and daily logs.
type Sources struct {
	Transcript string
	Logs       []string
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
	if src.Transcript != "" {
		abs, err := filepath.Abs(src.Transcript)
		if err != nil {
			return prev, rep, nil, err
		}
		if abs != prev.Transcript {
			next = State{Transcript: abs}
		}
	}
	if sec == nil || (next.Transcript == "" && len(src.Logs) == 0) {
		return next, rep, nil, nil
	}
	since, _ := time.Parse(checkpoint.TimeFormat, lastUpdated)
	var entries []entry
	if next.Transcript != "" {
		tr, err := readTranscript(next.Transcript, next.Offset, time.Time{})
		if err != nil {
			warnings = append(warnings, err.Error()+"; checkpoint taken without a delta from it")
		} else {
			entries = append(entries, tr.Entries...)
			warnings = append(warnings, tr.Warnings...)
			next.Offset = tr.Next
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
