package hooks

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Action is what a trigger does for a session.
type Action string

const (
	ActionNone   Action = "none"
	ActionSparse Action = "sparse"
	ActionFull   Action = "full"
)

// Observation is what two os.Stat calls tell about a session's notes.md and transcript.
// A missing file has size 0 and a zero time.
type Observation struct {
	NotesSize       int64
	NotesMtime      time.Time
	TranscriptSize  int64
	TranscriptMtime time.Time
	// CheckpointSize and CheckpointMtime are set by ObserveSession; Observe leaves them
	// zero, which Decide reads as "not observed".
	CheckpointSize  int64
	CheckpointMtime time.Time
}

// ObserveSession stats a session's notes.md and checkpoint.md in workDir, and the
// transcript: three os.Stat calls.
func ObserveSession(workDir, transcriptPath string) (Observation, error) {
	obs, err := Observe(filepath.Join(workDir, "notes.md"), transcriptPath)
	if err != nil {
		return obs, err
	}
	obs.CheckpointSize, obs.CheckpointMtime, err = statFile(filepath.Join(workDir, "checkpoint.md"))
	return obs, err
}

// Observe stats notes.md and the transcript (skipped when transcriptPath is "").
func Observe(notesPath, transcriptPath string) (Observation, error) {
	var obs Observation
	var err error
	if obs.NotesSize, obs.NotesMtime, err = statFile(notesPath); err != nil {
		return obs, err
	}
	if transcriptPath != "" {
		if obs.TranscriptSize, obs.TranscriptMtime, err = statFile(transcriptPath); err != nil {
			return obs, err
		}
	}
	return obs, nil
}

func statFile(path string) (int64, time.Time, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, time.Time{}, nil
	}
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("%s: %w", path, err)
	}
	return fi.Size(), fi.ModTime(), nil
}

// Decide says what a tick or hook should do for a session, and why:
//   - full when notes.md is not empty and not as the last full sync left it (entries are
//     pending; cmd should record a baseline when it creates a session), when
//     the transcript grew by at least fullTokens tokens (bytes/4) since the last full, or
//     when it grew and fullEvery sparse checkpoints were taken since the last full;
//   - sparse when the transcript changed since the last checkpoint;
//   - none otherwise.
//
// An open breaker turns full into sparse, and only when something changed since the
// last checkpoint. fullTokens or fullEvery below 1 disable their rule.
func Decide(s *SessionState, obs Observation, fullTokens, fullEvery int) (Action, string) {
	transcriptChanged := obs.TranscriptSize != s.TranscriptSize || !obs.TranscriptMtime.Equal(s.TranscriptMtime)
	// An empty (or missing) notes.md has no entries, whatever the state remembers.
	notesPending := obs.NotesSize > 0 && (obs.NotesSize != s.NotesSize || !obs.NotesMtime.Equal(s.NotesMtime))

	var full string
	switch grown := growth(obs.TranscriptSize, s.SizeAtLastFull); {
	case notesPending:
		full = "notes.md has pending entries"
	case fullTokens > 0 && grown/4 >= int64(fullTokens):
		full = fmt.Sprintf("transcript grew by ~%d tokens since the last full sync (threshold %d)", grown/4, fullTokens)
	case transcriptChanged && fullEvery > 0 && s.SparseSinceFull >= fullEvery:
		full = fmt.Sprintf("%d sparse checkpoints since the last full sync", s.SparseSinceFull)
	}

	if full != "" && !s.Breaker.Open {
		return ActionFull, full
	}
	if full != "" {
		notesChanged := obs.NotesSize != s.NotesSeenSize || !obs.NotesMtime.Equal(s.NotesSeenMtime)
		if transcriptChanged || notesChanged {
			return ActionSparse, "breaker open, full sync skipped (" + full + "): " + s.Breaker.Reason
		}
		return ActionNone, "breaker open, nothing changed since the last checkpoint"
	}
	if transcriptChanged {
		return ActionSparse, "transcript changed since the last checkpoint"
	}
	if !obs.CheckpointMtime.IsZero() && !s.CheckpointMtime.IsZero() &&
		(obs.CheckpointSize != s.CheckpointSize || !obs.CheckpointMtime.Equal(s.CheckpointMtime)) {
		return ActionSparse, "checkpoint.md changed on disk since the last checkpoint"
	}
	return ActionNone, "nothing changed"
}

// growth is how much the transcript grew since a size; a smaller file is a new transcript.
func growth(size, since int64) int64 {
	if size < since {
		return size
	}
	return size - since
}

// Recorded updates the state after a successful checkpoint of kind action. obs is the
// transcript as Decide saw it and notes.md as the checkpoint left it: after a full sync,
// stat notes.md again, since its reset changed it.
func (s *SessionState) Recorded(action Action, obs Observation, now time.Time) {
	if action == ActionNone {
		return
	}
	s.TranscriptSize, s.TranscriptMtime = obs.TranscriptSize, obs.TranscriptMtime
	s.NotesSeenSize, s.NotesSeenMtime = obs.NotesSize, obs.NotesMtime
	s.CheckpointSize, s.CheckpointMtime = obs.CheckpointSize, obs.CheckpointMtime
	s.LastCheckpoint = now
	switch action {
	case ActionSparse:
		s.SparseSinceFull++
	case ActionFull:
		s.SizeAtLastFull = obs.TranscriptSize
		s.SparseSinceFull = 0
		s.NotesSize, s.NotesMtime = obs.NotesSize, obs.NotesMtime
		s.LastFull = now
	}
}
