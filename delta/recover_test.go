package delta

import (
	"fmt"
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
	if s, err := LoadState(st, "a"); err != nil || !s.Equal(State{}) {
		t.Fatalf("no state yet: %+v, %v", s, err)
	}
	want := State{}.Follow("/c1.jsonl", 42).Follow("/c2.jsonl", 7)
	if err := SaveState(st, "a", want); err != nil {
		t.Fatal(err)
	}
	if s, err := LoadState(st, "a"); err != nil || !s.Equal(want) || s.Transcript() != "/c2.jsonl" || s.Offset("/c1.jsonl") != 42 {
		t.Fatalf("LoadState = %+v, %v; want %+v", s, err, want)
	}
	// What older versions wrote and read: the followed transcript and its offset.
	b, _ := os.ReadFile(filepath.Join(st.StateDir(), "delta", "a.json"))
	if !strings.Contains(string(b), `"transcript":"/c2.jsonl","offset":7`) {
		t.Errorf("state file %s lacks the followed transcript's offset", b)
	}
	for name, tc := range map[string]struct {
		json string
		want State
		err  string
	}{
		"written before several transcripts": {`{"transcript":"/t.jsonl","offset":42}`, State{}.Follow("/t.jsonl", 42), ""},
		"only an offset":                     {`{"offset":0}`, State{}, ""},
		"not json":                           {"{", State{}, "corrupt state"},
		"negative offset":                    {`{"transcripts":[{"path":"/t","offset":-1}]}`, State{}, "corrupt state"},
		"no path":                            {`{"transcripts":[{"offset":3}]}`, State{}, "corrupt state"},
	} {
		if err := os.WriteFile(filepath.Join(st.StateDir(), "delta", "a.json"), []byte(tc.json), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := LoadState(st, "a")
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err = %v, want %q", name, err, tc.err)
			}
			continue
		}
		if err != nil || !s.Equal(tc.want) {
			t.Errorf("%s: LoadState = %+v, %v; want %+v", name, s, err, tc.want)
		}
	}
}

// TestStateFollowsManyTranscripts: each transcript keeps its offset; the oldest are forgotten
// past maxFollowed.
func TestStateFollowsManyTranscripts(t *testing.T) {
	s := State{}
	for i := range maxFollowed + 5 {
		s = s.Follow(fmt.Sprintf("/c%d.jsonl", i), int64(i))
	}
	s = s.Follow("/c10.jsonl", 100)
	if len(s.Followed) != maxFollowed || s.Transcript() != "/c10.jsonl" || s.Offset("/c10.jsonl") != 100 || s.Offset("/c11.jsonl") != 11 || s.Offset("/c0.jsonl") != 0 {
		t.Errorf("state after %d transcripts: %d kept, following %s", maxFollowed+5, len(s.Followed), s.Transcript())
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
	if next.Transcript() != path || next.Offset(path) != deltaSize(t, path) || rep.Entries == 0 || rep.To != "2026-04-02T00:00Z" {
		t.Errorf("first read: state %+v, report %+v", next, rep)
	}
	again, rep2, _, err := Recover(&doc.Sections[0], "", Sources{}, next, now)
	if err != nil || !again.Equal(next) || rep2.Entries != 0 {
		t.Errorf("nothing new: state %+v, report %+v, %v", again, rep2, err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	gone, _, warns, err := Recover(&doc.Sections[0], "", Sources{}, next, now)
	if err != nil || !gone.Equal(next) || len(warns) != 1 {
		t.Errorf("transcript gone: state %+v, warnings %q, %v", gone, warns, err)
	}
	other := filepath.Join(t.TempDir(), "other.jsonl")
	moved, _, _, err := Recover(nil, "", Sources{Transcript: other}, next, now)
	if err != nil || moved.Transcript() != other || moved.Offset(other) != 0 || moved.Offset(path) != next.Offset(path) {
		t.Errorf("another transcript, no section: state %+v, %v", moved, err)
	}
}

// TestRecoverKeepsAnOffsetPerTranscript: a session that receives two conversations, each with
// its own transcript, reads each from where its own last read stopped, also when it goes back
// to the first one; the transcript recorded for the session is followed when no sync named
// one.
func TestRecoverKeepsAnOffsetPerTranscript(t *testing.T) {
	dir := t.TempDir()
	c1, c2 := filepath.Join(dir, "conv-1.jsonl"), filepath.Join(dir, "conv-2.jsonl")
	line := func(min int, text string) string {
		return fmt.Sprintf(`{"type":"user","timestamp":"2026-05-12T09:%02d:00Z","message":{"role":"user","content":%q}}`+"\n", min, text)
	}
	appendTo := func(path, s string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	now := time.Date(2026, 5, 12, 10, 0, 0, 0, time.UTC)
	read := func(st State, src Sources) (State, string) {
		t.Helper()
		doc := sections.Parse([]byte("### 📡 Recovered Delta\n_delta_since_last: 2026-05-12T09:00Z → 2026-05-12T09:00Z_\n"), sections.Options{Level: 3})
		next, _, _, err := Recover(&doc.Sections[0], "", src, st, now)
		if err != nil {
			t.Fatal(err)
		}
		return next, string(doc.Sections[0].Body)
	}
	appendTo(c1, line(1, "bump versionCode")+line(2, "build the AAB"))
	st, body := read(State{}, Sources{Recorded: c1})
	if !strings.Contains(body, "bump versionCode") || st.Transcript() != c1 {
		t.Fatalf("the recorded transcript was not followed: %+v\n%s", st, body)
	}
	appendTo(c2, line(10, "second conversation starts"))
	st, body = read(st, Sources{Transcript: c2, Recorded: c1})
	if !strings.Contains(body, "second conversation") || strings.Contains(body, "versionCode") {
		t.Fatalf("second transcript:\n%s", body)
	}
	appendTo(c1, line(20, "back in the first conversation"))
	st, body = read(st, Sources{Transcript: c1})
	if !strings.Contains(body, "back in the first") || strings.Contains(body, "versionCode") || strings.Contains(body, "build the AAB") {
		t.Fatalf("going back to the first transcript read it again from the start:\n%s", body)
	}
	if st.Offset(c1) != deltaSize(t, c1) || st.Offset(c2) != deltaSize(t, c2) {
		t.Errorf("offsets %+v", st)
	}
	// Without a transcript named, the one followed last, not the recorded one.
	appendTo(c1, line(30, "still the first"))
	appendTo(c2, line(31, "more of the second"))
	_, body = read(st, Sources{Recorded: c2})
	if !strings.Contains(body, "still the first") || strings.Contains(body, "more of the second") {
		t.Errorf("no transcript named:\n%s", body)
	}
}
