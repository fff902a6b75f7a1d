package hooks

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDecide(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Minute)
	// base is a session whose last checkpoint was a full sync and that is idle since.
	base := SessionState{
		TranscriptSize: 1000, TranscriptMtime: t0, SizeAtLastFull: 1000,
		NotesSize: 40, NotesMtime: t0, NotesSeenSize: 40, NotesSeenMtime: t0,
	}
	idle := Observation{NotesSize: 40, NotesMtime: t0, TranscriptSize: 1000, TranscriptMtime: t0}
	open := Breaker{Open: true, Failures: 3, Reason: "3 consecutive failed checkpoints, last: boom"}
	tests := []struct {
		name       string
		edit       func(s *SessionState, o *Observation)
		want       Action
		wantReason string
	}{
		{"idle", func(s *SessionState, o *Observation) {}, ActionNone, "nothing changed"},
		{"new session without files", func(s *SessionState, o *Observation) { *s, *o = SessionState{}, Observation{} }, ActionNone, "nothing changed"},
		{"transcript grew a little", func(s *SessionState, o *Observation) { o.TranscriptSize, o.TranscriptMtime = 1400, t1 }, ActionSparse, "transcript changed"},
		{"transcript touched, same size", func(s *SessionState, o *Observation) { o.TranscriptMtime = t1 }, ActionSparse, "transcript changed"},
		{"notes size changed", func(s *SessionState, o *Observation) { o.NotesSize = 90 }, ActionFull, "pending"},
		{"notes rewritten, same size", func(s *SessionState, o *Observation) { o.NotesMtime = t1 }, ActionFull, "pending"},
		{"notes deleted", func(s *SessionState, o *Observation) { o.NotesSize, o.NotesMtime = 0, time.Time{} }, ActionNone, "nothing changed"},
		{"notes emptied", func(s *SessionState, o *Observation) { o.NotesSize, o.NotesMtime = 0, t1 }, ActionNone, "nothing changed"},
		{"new session with notes", func(s *SessionState, o *Observation) { *s = SessionState{} }, ActionFull, "pending"},
		{"transcript grew by the token threshold", func(s *SessionState, o *Observation) {
			o.TranscriptSize, o.TranscriptMtime = 1000+4*20000, t1
		}, ActionFull, "20000 tokens"},
		{"just under the token threshold", func(s *SessionState, o *Observation) {
			o.TranscriptSize, o.TranscriptMtime = 1000+4*20000-1, t1
		}, ActionSparse, "transcript changed"},
		{"token growth counts since the last full, not the last sparse", func(s *SessionState, o *Observation) {
			s.TranscriptSize, s.TranscriptMtime, s.SparseSinceFull = 1000+4*19000, t1, 1
			o.TranscriptSize, o.TranscriptMtime = 1000+4*20000, t1.Add(time.Minute)
		}, ActionFull, "tokens"},
		{"a new, shorter transcript counts from zero", func(s *SessionState, o *Observation) {
			s.SizeAtLastFull, s.TranscriptSize = 500000, 500000
			o.TranscriptSize, o.TranscriptMtime = 100, t1
		}, ActionSparse, "transcript changed"},
		{"full after fullEvery sparse checkpoints", func(s *SessionState, o *Observation) {
			s.SparseSinceFull = 4
			o.TranscriptSize, o.TranscriptMtime = 1100, t1
		}, ActionFull, "4 sparse"},
		{"fullEvery waits for a change", func(s *SessionState, o *Observation) { s.SparseSinceFull = 4 }, ActionNone, "nothing changed"},
		{"open breaker: full becomes sparse", func(s *SessionState, o *Observation) {
			s.Breaker = open
			o.NotesSize = 90
		}, ActionSparse, "breaker open, full sync skipped (notes.md has pending entries): 3 consecutive"},
		{"open breaker: sparse stays sparse", func(s *SessionState, o *Observation) {
			s.Breaker = open
			o.TranscriptSize, o.TranscriptMtime = 1400, t1
		}, ActionSparse, "transcript changed"},
		{"open breaker: pending notes already checkpointed", func(s *SessionState, o *Observation) {
			s.Breaker = open
			s.NotesSeenSize, s.NotesSeenMtime = 90, t1
			o.NotesSize, o.NotesMtime = 90, t1
		}, ActionNone, "breaker open, nothing changed"},
		{"open breaker: idle", func(s *SessionState, o *Observation) { s.Breaker = open }, ActionNone, "nothing changed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, o := base, idle
			tc.edit(&s, &o)
			got, reason := Decide(&s, o, 20000, 4)
			if got != tc.want || !strings.Contains(reason, tc.wantReason) {
				t.Errorf("Decide = %s (%s), want %s (…%s…)", got, reason, tc.want, tc.wantReason)
			}
		})
	}
	t.Run("zero thresholds disable their rules", func(t *testing.T) {
		s, o := base, idle
		s.SparseSinceFull = 100
		o.TranscriptSize, o.TranscriptMtime = 1<<30, t1
		if got, reason := Decide(&s, o, 0, 0); got != ActionSparse {
			t.Errorf("Decide = %s (%s), want sparse", got, reason)
		}
	})
}

// TestTickCycle runs the decisions of successive ticks through Recorded and the breaker,
// with an injected failure of full syncs, the way cmd's tick will.
func TestTickCycle(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.md")
	transcript := filepath.Join(dir, "transcript.jsonl")
	write(t, notes, "", 0o644)
	write(t, transcript, "", 0o644)
	s := &SessionState{Transcript: transcript}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// The baseline cmd records when it creates a session.
	obs, err := Observe(notes, transcript)
	if err != nil {
		t.Fatal(err)
	}
	s.Recorded(ActionFull, obs, now)
	appendTo := func(path, text string) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(text)
		f.Close()
	}
	failFull := true
	// tick decides and "checkpoints": a full sync resets notes.md (or fails), a sparse one
	// always succeeds.
	tick := func() (Action, string) {
		t.Helper()
		now = now.Add(15 * time.Minute)
		obs, err := Observe(notes, s.Transcript)
		if err != nil {
			t.Fatal(err)
		}
		action, reason := Decide(s, obs, 100, 3)
		switch action {
		case ActionFull:
			if failFull {
				s.Breaker.Record(false, "merge: injected failure", 3, now)
				return action, reason
			}
			if err := os.WriteFile(notes, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			after, err := Observe(notes, "")
			if err != nil {
				t.Fatal(err)
			}
			obs.NotesSize, obs.NotesMtime = after.NotesSize, after.NotesMtime
		case ActionNone:
			return action, reason
		}
		s.Breaker.Record(true, "", 3, now)
		s.Recorded(action, obs, now)
		return action, reason
	}
	expect := func(want Action) {
		t.Helper()
		if got, reason := tick(); got != want {
			t.Fatalf("tick = %s (%s), want %s", got, reason, want)
		}
	}

	expect(ActionNone)
	appendTo(transcript, "line\n")
	expect(ActionSparse)
	expect(ActionNone)
	appendTo(notes, "- [decision] use flock\n")
	for i := 1; i <= 3; i++ {
		expect(ActionFull) // fails
		if s.Breaker.Open != (i == 3) {
			t.Fatalf("after %d failures breaker open = %v", i, s.Breaker.Open)
		}
	}
	// Open: the pending notes get one sparse checkpoint, then nothing until a change.
	expect(ActionSparse)
	if !s.Breaker.Open {
		t.Fatal("a successful sparse checkpoint closed the breaker")
	}
	expect(ActionNone)
	appendTo(transcript, strings.Repeat("x", 1000))
	expect(ActionSparse)
	if !s.Breaker.Open {
		t.Fatal("breaker closed by itself")
	}

	s.Breaker.Reset()
	failFull = false
	expect(ActionFull)
	if s.SparseSinceFull != 0 || s.SizeAtLastFull != 1005 {
		t.Errorf("after full: %+v", s)
	}
	expect(ActionNone)
}

func TestObserve(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.md")
	write(t, notes, "hello", 0o644)
	obs, err := Observe(notes, filepath.Join(dir, "missing.jsonl"))
	if err != nil || obs.NotesSize != 5 || obs.NotesMtime.IsZero() || obs.TranscriptSize != 0 || !obs.TranscriptMtime.IsZero() {
		t.Errorf("Observe = %+v, %v", obs, err)
	}
	// A path through a regular file is an error, not a missing file.
	if _, err := Observe(filepath.Join(notes, "x"), ""); err == nil || errors.Is(err, os.ErrNotExist) {
		t.Errorf("Observe through a file: %v", err)
	}
}

// idleStore makes a store of n idle sessions: notes.md and a transcript per session, and
// a state file that has seen them all.
func idleStore(tb testing.TB, n int) (home string, paths map[string][2]string) {
	tb.Helper()
	home = tb.TempDir()
	paths = map[string][2]string{}
	now := time.Now()
	err := UpdateState(home, func(st *State) error {
		for i := range n {
			id := fmt.Sprintf("session-%04d", i)
			dir := filepath.Join(home, "sessions", id)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			notes := filepath.Join(dir, "notes.md")
			transcript := filepath.Join(home, "transcripts", id+".jsonl")
			if err := os.MkdirAll(filepath.Dir(transcript), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(notes, []byte("# notes\n"), 0o644); err != nil {
				return err
			}
			if err := os.WriteFile(transcript, []byte(strings.Repeat("{}\n", i%50+1)), 0o644); err != nil {
				return err
			}
			obs, err := Observe(notes, transcript)
			if err != nil {
				return err
			}
			s := st.Session(id)
			s.Transcript = transcript
			s.Bound = "/src/project"
			s.Recorded(ActionFull, obs, now)
			paths[id] = [2]string{notes, transcript}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return home, paths
}

// tickDecide is the hot path of a cron tick: one state read, two stats per session.
func tickDecide(home string, paths map[string][2]string) (int, error) {
	st, err := LoadState(home)
	if err != nil {
		return 0, err
	}
	busy := 0
	for id, s := range st.Sessions {
		obs, err := Observe(paths[id][0], s.Transcript)
		if err != nil {
			return 0, err
		}
		if a, _ := Decide(s, obs, 20000, 4); a != ActionNone {
			busy++
		}
	}
	return busy, nil
}

// BenchmarkTickDecide1000 is the budget for a tick over 1,000 idle sessions
// (≤ 300 ms), in-process; internal/proctest measures the whole ckpt cron tick process.
func BenchmarkTickDecide1000(b *testing.B) {
	home, paths := idleStore(b, 1000)
	for b.Loop() {
		busy, err := tickDecide(home, paths)
		if err != nil || busy != 0 {
			b.Fatalf("busy %d, err %v", busy, err)
		}
	}
}

func TestDecideSeesACheckpointRewrittenOnDisk(t *testing.T) {
	dir := t.TempDir()
	cp := filepath.Join(dir, "checkpoint.md")
	os.WriteFile(cp, []byte("a\n"), 0o644)
	obs, err := ObserveSession(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	s := &SessionState{}
	s.Recorded(ActionSparse, obs, time.Now())
	if a, _ := Decide(s, obs, 0, 0); a != ActionNone {
		t.Fatalf("unchanged checkpoint: %s", a)
	}
	os.WriteFile(cp, []byte("a harness rewrote it\n"), 0o644)
	obs2, _ := ObserveSession(dir, "")
	if a, why := Decide(s, obs2, 0, 0); a != ActionSparse || !strings.Contains(why, "checkpoint.md changed") {
		t.Fatalf("rewritten checkpoint: %s (%s)", a, why)
	}
}
