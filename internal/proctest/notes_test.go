package proctest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestNotesAppendedDuringSync has an agent append a notes entry every millisecond, the way
// an agent appends to notes.md (open with O_APPEND, write, close, no lock), while full syncs
// and writes of checkpoint.md run one after the other, then one last sync with the agent
// stopped. Every entry the agent wrote must be on disk or in the history of the session or
// the knowledge repository: a sync removes from notes.md only the entries it routed.
func TestNotesAppendedDuringSync(t *testing.T) {
	runs := 30
	if testing.Short() {
		runs = 8
	}
	s := newStore(t)
	const id = "notes"
	s.mustRun(t, nil, "init", "-s", id)
	s.mustRun(t, checkpoint("Route the agent's notes"), "write", "-s", id, "--allow-shrink")
	notes := filepath.Join(s.sessionDir(id), "notes.md")

	var (
		stop    atomic.Bool
		written []string
		wg      sync.WaitGroup
		failed  error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			tok := fmt.Sprintf("agent-note-%05d", i)
			f, err := os.OpenFile(notes, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err != nil {
				failed = err
				return
			}
			_, err = f.WriteString("- [note] " + tok + "\n")
			f.Close()
			if err != nil {
				failed = err
				return
			}
			written = append(written, tok)
			time.Sleep(time.Millisecond)
		}
	}()
	for i := range runs {
		if i%3 == 2 {
			s.mustRun(t, checkpoint(fmt.Sprintf("Route the agent's notes, round %d", i)), "write", "-s", id, "--allow-shrink")
			continue
		}
		s.mustRun(t, nil, "sync", "-s", id)
	}
	stop.Store(true)
	wg.Wait()
	if failed != nil {
		t.Fatal(failed)
	}
	s.mustRun(t, nil, "sync", "-s", id)

	var seen strings.Builder
	seen.WriteString(s.git(t, s.sessionDir(id), "log", "-p", "--all"))
	if _, err := os.Stat(filepath.Join(s.home, "knowledge", ".git")); err == nil {
		seen.WriteString(s.git(t, filepath.Join(s.home, "knowledge"), "log", "-p", "--all"))
	}
	entries, _ := os.ReadDir(s.sessionDir(id))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".md") {
			b, _ := os.ReadFile(filepath.Join(s.sessionDir(id), e.Name()))
			seen.Write(b)
		}
	}
	all := seen.String()
	lost := 0
	for _, tok := range written {
		if !strings.Contains(all, tok) {
			lost++
			if lost <= 5 {
				t.Errorf("%s was appended to notes.md and is neither on disk nor in history", tok)
			}
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d notes entries lost", lost, len(written))
	} else {
		t.Logf("%d entries appended during %d commands, none lost", len(written), runs)
	}
	s.requireHealthy(t, s.sessionDir(id))
}
