package sync

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/internal/config"
	"github.com/ckpt-dev/ckpt/internal/gittest"
	"github.com/ckpt-dev/ckpt/internal/golden"
	"github.com/ckpt-dev/ckpt/internal/hint"
	"github.com/ckpt-dev/ckpt/knowledge"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
)

func corpusFile(t testing.TB, name string) []byte {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "corpus", name))
	if err != nil {
		if t == nil {
			panic(err)
		}
		t.Fatal(err)
	}
	return b
}

func corpusPath(name string) string { return filepath.Join("..", "testdata", "corpus", name) }

// testService is a store in a temporary directory with a clock the test moves.
type testService struct {
	*Service
	cp    *checkpoint.Service
	Store *repo.Store
	clock time.Time
}

func newTestService(t testing.TB, cfg *config.Config) *testService {
	t.Helper()
	ts := &testService{clock: time.Date(2026, 4, 1, 22, 0, 0, 0, time.UTC)}
	opts := repo.DefaultOptions()
	opts.Fsync = false
	opts.LockTimeout = 2 * time.Second
	opts.Now = func() time.Time { return ts.clock }
	opts.Author = repo.Signature{Name: "ckpt test", Email: "test@example.com"}
	ts.cp = checkpoint.New(repo.NewStore(t.TempDir(), opts), cfg)
	ts.Store = ts.cp.Store
	ts.Service = New(ts.cp)
	return ts
}

// session creates a session from template and writes checkpoint (and notes) into it.
func (ts *testService) session(t testing.TB, id, template string, cp, notes []byte) *repo.Repo {
	t.Helper()
	r, _, err := ts.cp.InitSession(repo.SessionID(id), template, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if cp != nil {
		if _, err := ts.cp.Write(r, checkpoint.File, cp, checkpoint.CommitOptions{Trigger: checkpoint.TriggerWrite}); err != nil {
			t.Fatal(err)
		}
	}
	if notes != nil {
		if err := os.WriteFile(r.WorkPath(checkpoint.NotesFile), notes, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "golden", name), got)
}

func TestSyncGoldenSix(t *testing.T) {
	ts := newTestService(t, nil)
	r := ts.session(t, "six", "six", corpusFile(t, "six/checkpoint.md"), corpusFile(t, "six/notes.md"))
	ts.clock = ts.clock.Add(10 * time.Minute)
	rep, err := ts.Sync(r, Options{Mode: Full, Transcript: corpusPath("transcripts/claude-code.jsonl"), Logs: []string{corpusPath("logs/2026-04-01.md")}})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Changed || len(rep.Entries) != 6 {
		t.Fatalf("report: changed=%v entries=%d", rep.Changed, len(rep.Entries))
	}
	for name, path := range map[string]string{
		"six/checkpoint.md":      r.WorkPath(checkpoint.File),
		"six/notes.md":           r.WorkPath(checkpoint.NotesFile),
		"six/knowledge-graph.md": filepath.Join(ts.Store.KnowledgeDir(), knowledge.File),
		"six/MEMORY.md":          filepath.Join(ts.Store.KnowledgeDir(), knowledge.MemoryFile),
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, name, b)
	}
	notesTmpl, _ := ts.notesTemplate(mustTemplate(t, ts, "six"))
	if got, _ := os.ReadFile(r.WorkPath(checkpoint.NotesFile)); !bytes.Equal(got, notesTmpl) {
		t.Errorf("notes.md is not reset to its template byte for byte:\n%q", got)
	}
	gittest.Fsck(t, r.Dir)
	gittest.Clean(t, r.Dir)
	gittest.Fsck(t, ts.Store.KnowledgeDir())
	gittest.Clean(t, ts.Store.KnowledgeDir())
	// one commit for the sync, trailers naming the session and the checkpoint commit
	if n := gittest.Git(t, r.Dir, "rev-list", "--count", "HEAD"); strings.TrimSpace(n) != "3" {
		t.Errorf("session has %s commits, want 3 (init, write, sync)", n)
	}
	msg := gittest.Git(t, ts.Store.KnowledgeDir(), "log", "-1", "--format=%B")
	if !strings.Contains(msg, "Ckpt-Session: six") || !strings.Contains(msg, "Ckpt-Checkpoint: "+rep.Commit[:12]) {
		t.Errorf("knowledge commit trailers:\n%s", msg)
	}
}

func mustTemplate(t testing.TB, ts *testService, name string) *checkpoint.Template {
	t.Helper()
	tt, err := ts.cp.LoadTemplate(name)
	if err != nil {
		t.Fatal(err)
	}
	return tt
}

func TestSyncGoldenEleven(t *testing.T) {
	ts := newTestService(t, nil)
	r := ts.session(t, "eleven", "eleven", corpusFile(t, "eleven/checkpoint.md"), corpusFile(t, "eleven/notes.md"))
	if err := os.MkdirAll(ts.Store.KnowledgeDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ts.Store.KnowledgeDir(), knowledge.MemoryFile), corpusFile(t, "eleven/MEMORY.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	ts.clock = ts.clock.Add(10 * time.Minute)
	rep, err := ts.Sync(r, Options{Mode: Full, Tasks: corpusPath("tasks/tasks.json")})
	if err != nil {
		t.Fatal(err)
	}
	for name, path := range map[string]string{
		"eleven/checkpoint.md":      r.WorkPath(checkpoint.File),
		"eleven/notes.md":           r.WorkPath(checkpoint.NotesFile),
		"eleven/MEMORY.md":          filepath.Join(ts.Store.KnowledgeDir(), knowledge.MemoryFile),
		"eleven/knowledge-graph.md": filepath.Join(ts.Store.KnowledgeDir(), knowledge.File),
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, name, b)
	}
	want := map[string]sections.ID{
		"rule": "§3", "fact": "§7", "bug": "§8", "decision": "§10", "file": "§6", "literal": "§3", "status": "§5", "open": "§11",
	}
	for _, e := range rep.Entries {
		if e.Dest.Section != want[e.Tag] {
			t.Errorf("[%s] %s went to %s, want %s", e.Tag, e.Text, e.Dest.Section, want[e.Tag])
		}
	}
	if len(rep.Moved) != 1 || !strings.Contains(rep.Moved[0].Line, "D3:") || rep.Moved[0].To != "" {
		t.Errorf("moved = %+v, want the D3 line removed from §3", rep.Moved)
	}
	gittest.Fsck(t, ts.Store.KnowledgeDir())
	gittest.Clean(t, ts.Store.KnowledgeDir())
	// the user's MEMORY.md, put there before the first sync, is the first commit
	first := gittest.Git(t, ts.Store.KnowledgeDir(), "show", "HEAD~1:MEMORY.md")
	if first != string(corpusFile(t, "eleven/MEMORY.md")) {
		t.Errorf("the knowledge repository did not adopt the existing MEMORY.md")
	}
}

func TestSyncTwiceMakesNoCommit(t *testing.T) {
	for _, tmpl := range []string{"six", "eleven"} {
		t.Run(tmpl, func(t *testing.T) {
			ts := newTestService(t, nil)
			r := ts.session(t, "s", tmpl, corpusFile(t, tmpl+"/checkpoint.md"), corpusFile(t, tmpl+"/notes.md"))
			if _, err := ts.Sync(r, Options{Mode: Full, Transcript: corpusPath("transcripts/generic.jsonl")}); err != nil {
				t.Fatal(err)
			}
			h1, _ := r.Head()
			kr, _ := ts.Store.OpenKnowledge()
			k1, _ := kr.Head()
			ts.clock = ts.clock.Add(time.Hour)
			rep, err := ts.Sync(r, Options{Mode: Full, Transcript: corpusPath("transcripts/generic.jsonl")})
			if err != nil {
				t.Fatal(err)
			}
			h2, _ := r.Head()
			k2, _ := kr.Head()
			if rep.Changed || h1 != h2 || k1 != k2 {
				t.Errorf("second sync committed: changed=%v session %s→%s knowledge %s→%s", rep.Changed, h1, h2, k1, k2)
			}
		})
	}
}

func TestSyncDryRunWritesNothing(t *testing.T) {
	ts := newTestService(t, nil)
	notes := corpusFile(t, "six/notes.md")
	r := ts.session(t, "s", "six", corpusFile(t, "six/checkpoint.md"), notes)
	h1, _ := r.Head()
	rep, err := ts.Sync(r, Options{Mode: Full, DryRun: true, Transcript: corpusPath("transcripts/claude-code.jsonl")})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Changes) == 0 || len(rep.Files) == 0 {
		t.Errorf("dry run reports no change")
	}
	h2, _ := r.Head()
	got, _ := os.ReadFile(r.WorkPath(checkpoint.NotesFile))
	if h1 != h2 || !bytes.Equal(got, notes) {
		t.Errorf("dry run wrote something")
	}
	if _, err := os.Stat(ts.Store.KnowledgeDir()); err == nil {
		t.Errorf("dry run created the knowledge repository")
	}
	if _, err := os.Stat(filepath.Join(ts.Store.StateDir(), "delta", "s.json")); err == nil {
		t.Errorf("dry run saved the transcript offset")
	}
}

// TestSupersededIntentKeepsItsLiteral: two [intent] entries used to abort every full sync
// ("literal would be lost") until a person edited notes.md. The last committing one takes
// the intent section; the first goes to the catch-all, its literal intact (seed 000 puts
// superseded content and quotes in §11).
func TestSupersededIntentKeepsItsLiteral(t *testing.T) {
	for _, tc := range []struct{ template, intent, catchAll string }{
		{"six", "🎯", "⚠️"},
		{"eleven-en", "§1", "§11"},
	} {
		t.Run(tc.template, func(t *testing.T) {
			ts := newTestService(t, nil)
			notes := []byte("# Notes\n\n- [intent] Build the 4.18 AAB with `./gradlew :app:bundleRelease -PversionCode=41800`\n- [intent] Stage 4.18 to 5% on the Play Console\n")
			r := ts.session(t, "droid", tc.template, nil, notes)
			rep, err := ts.Sync(r, Options{Mode: Full})
			if err != nil {
				t.Fatal(err)
			}
			doc := mustTemplate(t, ts, tc.template).Parse(mustRead(t, r.WorkPath(checkpoint.File)))
			intent, catchAll := string(doc.Section(sections.ID(tc.intent)).Body), string(doc.Section(sections.ID(tc.catchAll)).Body)
			if !strings.Contains(intent, "Stage 4.18 to 5%") || strings.Contains(intent, "gradlew") {
				t.Errorf("%s:\n%s", tc.intent, intent)
			}
			if !strings.Contains(catchAll, "`./gradlew :app:bundleRelease -PversionCode=41800`") {
				t.Errorf("%s lacks the superseded intent's literal:\n%s", tc.catchAll, catchAll)
			}
			if why := rep.Entries[0].Dest.Why; why != "superseded by the entry at line 4" {
				t.Errorf("first entry: %+v", rep.Entries[0].Dest)
			}
		})
	}
}

// TestCheckPlacedNamesTheEntry: the abort that remains (a loss the sync could not place)
// names the notes entry, with a hint to fix it in one step.
func TestCheckPlacedNamesTheEntry(t *testing.T) {
	tmpl := mustTemplate(t, newTestService(t, nil), "eleven-en")
	doc := tmpl.Parse(tmpl.Source)
	entries := parseNotes([]byte("# Notes\n- [resource] staging DSN `postgres://ro@db:5433/billing`\n"), nil)
	rep := &Report{Entries: []EntryReport{{Dest: Destination{Repo: "session", Section: "§9"}}}}
	err := checkPlaced(tmpl, doc, map[string][]byte{}, nil, entries, rep, "store/sessions/b/notes.md")
	if !errors.Is(err, ErrLiteralLost) || !strings.Contains(err.Error(), "store/sessions/b/notes.md:2: literal would be lost: `postgres://ro@db:5433/billing` (entry \"- [resource] staging DSN") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v", err)
	}
	if h := hint.Of(err); !strings.Contains(h, "edit or remove that entry in store/sessions/b/notes.md (line 2)") {
		t.Errorf("hint %q", h)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSyncIsAllOrNothingAcrossRepositories(t *testing.T) {
	ts := newTestService(t, nil)
	r := ts.session(t, "s", "six", corpusFile(t, "six/checkpoint.md"), corpusFile(t, "six/notes.md"))
	// a first sync creates the knowledge repository
	if _, err := ts.Sync(r, Options{Mode: Full}); err != nil {
		t.Fatal(err)
	}
	kr, _ := ts.Store.OpenKnowledge()
	notes := []byte("# Notes\n\n_Append one entry per line. `ckpt sync` routes every entry into the checkpoint and resets this file._\n\n- [decision] use `zstd` for spill files\n")
	os.WriteFile(r.WorkPath(checkpoint.NotesFile), notes, 0o644)
	h1, _ := r.Head()
	k1, _ := kr.Head()
	kg1, _ := os.ReadFile(filepath.Join(kr.WorkDir, knowledge.File))
	cp1, _ := os.ReadFile(r.WorkPath(checkpoint.File))
	t.Setenv("CKPT_FAILPOINT", "sync-between-repositories")
	if _, err := ts.Sync(r, Options{Mode: Full}); err == nil {
		t.Fatal("sync with an injected failure succeeded")
	}
	h2, _ := r.Head()
	k2, _ := kr.Head()
	kg2, _ := os.ReadFile(filepath.Join(kr.WorkDir, knowledge.File))
	cp2, _ := os.ReadFile(r.WorkPath(checkpoint.File))
	n2, _ := os.ReadFile(r.WorkPath(checkpoint.NotesFile))
	if h1 != h2 || k1 != k2 || !bytes.Equal(kg1, kg2) || !bytes.Equal(cp1, cp2) || !bytes.Equal(n2, notes) {
		t.Errorf("a failure between the repositories left a change: session %v knowledge %v kg %v checkpoint %v notes %v",
			h1 != h2, k1 != k2, !bytes.Equal(kg1, kg2), !bytes.Equal(cp1, cp2), !bytes.Equal(n2, notes))
	}
	gittest.Fsck(t, kr.Dir)
	gittest.Clean(t, kr.Dir)
	// and without the failure, the same sync goes through
	t.Setenv("CKPT_FAILPOINT", "")
	if rep, err := ts.Sync(r, Options{Mode: Full}); err != nil || !rep.Changed || rep.Knowledge == "" {
		t.Fatalf("sync after the failure: %v %+v", err, rep)
	}
}

// TestSyncKeepsEveryEntry is the property test: whatever the notes hold, after a sync every
// entry's text is in the checkpoint, a spill file or MEMORY.md, and every literal byte for
// byte.
func TestSyncKeepsEveryEntry(t *testing.T) {
	pool := []string{}
	for _, f := range []string{"six/notes.md", "eleven/notes.md"} {
		for _, l := range strings.Split(string(corpusFile(t, f)), "\n") {
			if strings.HasPrefix(l, "- ") {
				pool = append(pool, l)
			}
		}
	}
	tags := []string{"", "[decision] ", "[task] ", "[done] ", "[blocker] ", "[note] ", "[next] ", "[rule] ", "[fact] ", "[bug] ", "[file] ", "[resource] ", "[literal] ", "[status] ", "[open] ", "[rule!] ", "[fact!] ", "[decision!] "}
	lits := []string{"`DB_URL=postgres://u@h:1/d`", "--workers=8", "/var/lib/ckpt/data.db", "https://example.com/a?b=c", "TOKEN_TTL=3600", "`make test`"}
	rng := rand.New(rand.NewSource(1))
	for i := range 40 {
		tmpl := []string{"six", "eleven"}[i%2]
		var b strings.Builder
		b.WriteString("# Notes\n\n")
		var texts []string
		for range 1 + rng.Intn(12) {
			var text string
			if rng.Intn(2) == 0 {
				text = strings.TrimPrefix(pool[rng.Intn(len(pool))], "- ")
				text = strings.TrimPrefix(text, text[:strings.Index(text, " ")+1]) // drop the original tag
			} else {
				text = fmt.Sprintf("entry %d-%d keeps %s safe", i, rng.Intn(1000), lits[rng.Intn(len(lits))])
			}
			if rng.Intn(5) == 0 {
				text += "\n  continued with " + lits[rng.Intn(len(lits))]
			}
			tag := tags[rng.Intn(len(tags))]
			if tag == "[intent] " || tag == "[next] " {
				tag = "[note] "
			}
			b.WriteString("- " + tag + text + "\n")
			texts = append(texts, text)
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			ts := newTestService(t, &config.Config{Budgets: map[string]map[string]int{tmpl: {"⚠️": 600, "§11": 400, "§3": 500}}})
			r := ts.session(t, "p", tmpl, corpusFile(t, tmpl+"/checkpoint.md"), []byte(b.String()))
			if _, err := ts.Sync(r, Options{Mode: Full}); err != nil {
				t.Fatalf("%v\nnotes:\n%s", err, b.String())
			}
			var all bytes.Buffer
			files, _ := r.WorkFiles()
			for name, data := range files {
				if name != checkpoint.NotesFile {
					all.Write(data)
				}
			}
			if mem, err := os.ReadFile(filepath.Join(ts.Store.KnowledgeDir(), knowledge.MemoryFile)); err == nil {
				all.Write(mem)
			}
			hay := knowledge.NormText(all.String())
			for _, text := range texts {
				if !strings.Contains(hay, knowledge.NormText(strings.SplitN(text, "\n", 2)[0])) {
					t.Errorf("entry lost: %q\nnotes:\n%s", text, b.String())
				}
				for _, lit := range literals(text) {
					if !bytes.Contains(all.Bytes(), []byte(lit)) {
						t.Errorf("literal lost: %q", lit)
					}
				}
			}
		})
	}
}
