package delta

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
)

func TestState(t *testing.T) {
	opts := repo.DefaultOptions()
	opts.Fsync = false
	st := repo.NewStore(t.TempDir(), opts)
	if s, err := LoadState(st, "a"); err != nil || s != (State{}) {
		t.Fatalf("no state yet: %+v, %v", s, err)
	}
	want := State{Transcript: "/t.jsonl", Offset: 42}
	if err := SaveState(st, "a", want); err != nil {
		t.Fatal(err)
	}
	if s, err := LoadState(st, "a"); err != nil || s != want {
		t.Fatalf("LoadState = %+v, %v; want %+v", s, err, want)
	}
	if err := os.WriteFile(filepath.Join(st.StateDir(), "delta", "a.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadState(st, "a"); err == nil || !strings.Contains(err.Error(), "corrupt state") {
		t.Errorf("corrupt state: %v", err)
	}
}

// TestRecover: a transcript is read from the saved offset and remembered; one that is gone
// costs a warning and keeps the offset; without a delta section only the state moves.
func TestRecover(t *testing.T) {
	path := deltaCopy(t, deltaClaudeCode)
	doc := sections.Parse([]byte("### 📡 Recovered Delta\n_delta_since_last: 2026-04-01T00:00Z → 2026-04-01T00:00Z_\n"), sections.Options{Level: 3})
	now := time.Date(2026, 4, 2, 0, 0, 0, 0, time.UTC)
	next, rep, _, err := Recover(&doc.Sections[0], "", Sources{Transcript: path}, State{}, now)
	if err != nil {
		t.Fatal(err)
	}
	if next.Transcript != path || next.Offset != deltaSize(t, path) || rep.Entries == 0 || rep.To != "2026-04-02T00:00Z" {
		t.Errorf("first read: state %+v, report %+v", next, rep)
	}
	again, rep2, _, err := Recover(&doc.Sections[0], "", Sources{}, next, now)
	if err != nil || again != next || rep2.Entries != 0 {
		t.Errorf("nothing new: state %+v, report %+v, %v", again, rep2, err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	gone, _, warns, err := Recover(&doc.Sections[0], "", Sources{}, next, now)
	if err != nil || gone != next || len(warns) != 1 {
		t.Errorf("transcript gone: state %+v, warnings %q, %v", gone, warns, err)
	}
	other := filepath.Join(t.TempDir(), "other.jsonl")
	moved, _, _, err := Recover(nil, "", Sources{Transcript: other}, next, now)
	if err != nil || moved != (State{Transcript: other}) {
		t.Errorf("another transcript, no section: state %+v, %v", moved, err)
	}
}
