package search

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/internal/golden"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
	ckptsync "github.com/ckpt-dev/ckpt/sync"
)

// fixture is a store in a temporary directory with a clock that moves a minute per write,
// so commit hashes, and with them the golden files, are stable.
type fixture struct {
	svc   *checkpoint.Service
	clock time.Time
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	return newFixtureIn(t, t.TempDir())
}

func newFixtureIn(t testing.TB, home string) *fixture {
	f := &fixture{clock: time.Date(2026, 4, 1, 22, 0, 0, 0, time.UTC)}
	opts := repo.DefaultOptions()
	opts.Fsync = false
	opts.LockTimeout = 2 * time.Second
	opts.Now = func() time.Time { return f.clock }
	opts.Author = repo.Signature{Name: "ckpt test", Email: "test@example.com"}
	f.svc = checkpoint.New(repo.NewStore(home, opts), nil)
	return f
}

func (f *fixture) store() *repo.Store { return f.svc.Store }

func (f *fixture) session(t testing.TB, id, template string) *repo.Repo {
	t.Helper()
	r, _, err := f.svc.InitSession(repo.SessionID(id), template, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// write commits content as file and returns the commit.
func (f *fixture) write(t testing.TB, r *repo.Repo, file string, content []byte) repo.Hash {
	t.Helper()
	f.clock = f.clock.Add(time.Minute)
	res, err := f.svc.Write(r, file, content, checkpoint.CommitOptions{Trigger: checkpoint.TriggerWrite})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Changed {
		t.Fatalf("write %s: nothing changed", file)
	}
	return res.Commit
}

func (f *fixture) sync(t testing.TB, r *repo.Repo) {
	t.Helper()
	f.clock = f.clock.Add(time.Minute)
	if _, err := ckptsync.New(f.svc).Sync(r, ckptsync.Options{Mode: ckptsync.Full}); err != nil {
		t.Fatal(err)
	}
}

func corpus(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "corpus", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func replace(b []byte, old, new string) []byte {
	return []byte(strings.Replace(string(b), old, new, 1))
}

// corpusStore builds two sessions from the corpus with a few versions each, syncs them (so
// the knowledge repository exists) and leaves uncommitted notes in one work tree.
func corpusStore(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	six := f.session(t, "six", "six")
	cp := corpus(t, "six/checkpoint.md")
	f.write(t, six, "checkpoint.md", cp)
	cp = replace(cp, "xxhash", "blake3")
	f.write(t, six, "checkpoint.md", cp)
	cp = replace(cp, "- [ ] (P2) End-to-end tests", "- [ ] (P2) End-to-end tests\n- [ ] (P2) Benchmark the Circuit Breaker under load")
	f.write(t, six, "checkpoint.md", cp)
	if err := os.WriteFile(six.WorkPath("notes.md"), corpus(t, "six/notes.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.sync(t, six)
	notes, err := os.ReadFile(six.WorkPath("notes.md"))
	if err != nil {
		t.Fatal(err)
	}
	notes = append(notes, "- [note] uncommitted: compare BLAKE3 with xxhash on ARM\n"...)
	if err := os.WriteFile(six.WorkPath("notes.md"), notes, 0o644); err != nil {
		t.Fatal(err)
	}

	eleven := f.session(t, "eleven", "eleven")
	f.write(t, eleven, "checkpoint.md", corpus(t, "eleven/checkpoint.md"))
	if err := os.WriteFile(eleven.WorkPath("notes.md"), corpus(t, "eleven/notes.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.sync(t, eleven)
	// Mtimes of current files are part of a hit; pin them.
	for _, r := range []*repo.Repo{six, eleven} {
		pinMtimes(t, r.WorkDir)
	}
	pinMtimes(t, f.store().KnowledgeDir())
	return f
}

var pinned = time.Date(2026, 4, 2, 9, 0, 0, 0, time.UTC)

func pinMtimes(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Type().IsRegular() {
			if err := os.Chtimes(filepath.Join(dir, e.Name()), pinned, pinned); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// format renders hits one per line, the way the golden files hold them.
func format(hits []Hit) []byte {
	var b bytes.Buffer
	for _, h := range hits {
		where := "history"
		if h.Current {
			where = "current"
		}
		sec := ""
		if h.Section != "" {
			sec = " [" + string(h.Section) + "]"
		}
		snip := h.Snippet
		for i := len(h.Matches) - 1; i >= 0; i-- {
			m := h.Matches[i]
			snip = snip[:m[0]] + "«" + snip[m[0]:m[1]] + "»" + snip[m[1]:]
		}
		fmt.Fprintf(&b, "%s %s %s %s %s:%d%s  %s\n", h.Session, repo.ShortHash(h.Commit),
			h.Time.UTC().Format(time.RFC3339), where, h.File, h.Line, sec, snip)
	}
	return b.Bytes()
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "golden", name), got)
}

func TestSearchGolden(t *testing.T) {
	f := corpusStore(t)
	s := New(f.store())
	for _, tc := range []struct {
		name string
		q    Query
	}{
		{"current-blake3", Query{Terms: []string{"blake3"}}},
		{"history-blake3", Query{Terms: []string{"blake3"}, History: true}},
		{"history-circuit-breaker-phrase", Query{Terms: []string{"circuit breaker"}, History: true}},
		{"history-and", Query{Terms: []string{"circuit", "degrad"}, History: true}},
		{"history-chinese", Query{Terms: []string{"测试"}, History: true}},
		{"history-section-decisions", Query{Terms: []string{"-"}, Section: "🔑", History: true}},
		{"history-section-eleven", Query{Terms: []string{"决"}, Section: "§10", History: true}},
		{"history-session-knowledge", Query{Terms: []string{"md5"}, History: true}},
		{"history-one-session", Query{Terms: []string{"sections"}, Session: "eleven", History: true}},
		{"current-limit", Query{Terms: []string{"-"}, Limit: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := s.Search(tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) == 0 {
				t.Fatal("no hits: a golden query should find something")
			}
			checkGolden(t, tc.name+".txt", format(hits))
		})
	}
}

// oneLine is a store with one session whose checkpoint's 🎯 section is each of lines in turn.
func oneLine(t *testing.T, lines ...string) (*fixture, *repo.Repo, []repo.Hash) {
	t.Helper()
	f := newFixture(t)
	r := f.session(t, "s", "six")
	base := corpus(t, "six/checkpoint.md")
	var commits []repo.Hash
	for _, l := range lines {
		cp := replace(base, "Implement Phase 2 of session persistence in `checkpoint_manager.py`: SPARSE/FULL triggers and Circuit Breaker protection.", l)
		commits = append(commits, f.write(t, r, "checkpoint.md", cp))
	}
	return f, r, commits
}

func TestTermsAndMatching(t *testing.T) {
	f, _, _ := oneLine(t, "Ship the Ωmega 测试 build on Straße 5 with ＡＢＣ and the KELVIN sign K")
	s := New(f.store())
	for _, tc := range []struct {
		name  string
		terms []string
		want  int // hits in 🎯 (current)
	}{
		{"one word", []string{"ship"}, 1},
		{"case", []string{"SHIP"}, 1},
		{"all words in any order", []string{"build", "ship"}, 1},
		{"one word missing", []string{"ship", "absent"}, 0},
		{"phrase", []string{"the ωmega"}, 1},
		{"phrase out of order", []string{"ωmega the"}, 0},
		{"white space in a phrase collapses", []string{"  the \t  Ωmega  "}, 1},
		{"chinese", []string{"测试"}, 1},
		{"chinese and latin", []string{"测试", "BUILD"}, 1},
		{"greek upper", []string{"ΩMEGA"}, 1},
		{"fullwidth", []string{"ａｂｃ"}, 1},
		{"kelvin sign folds to k", []string{"kelvin sign k"}, 1},
		{"sharp s", []string{"STRASSE"}, 0}, // simple folding: ß is not ss
	} {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := s.Search(Query{Terms: tc.terms, Section: "🎯"})
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) != tc.want {
				t.Fatalf("%d hits, want %d:\n%s", len(hits), tc.want, format(hits))
			}
		})
	}
	if _, err := s.Search(Query{Terms: []string{" ", ""}}); !errors.Is(err, ErrEmptyQuery) {
		t.Errorf("blank query: %v, want ErrEmptyQuery", err)
	}
}

func TestKeptLineIsOneHit(t *testing.T) {
	kept := "- Use xxhash instead of md5 for file hashing: 10-20x faster"
	f, _, commits := oneLine(t, "version one", "version two", "version three", "version four")
	s := New(f.store())
	hits, err := s.Search(Query{Terms: []string{"md5"}, History: true})
	if err != nil {
		t.Fatal(err)
	}
	var hist []Hit
	for _, h := range hits {
		if !h.Current {
			hist = append(hist, h)
		}
	}
	if len(hist) != 1 || hist[0].Commit != commits[0] || hist[0].Snippet != kept || hist[0].Line != 22 || hist[0].Section != "🔑" {
		t.Fatalf("want one history hit at %s checkpoint.md:22 [🔑]:\n%s", repo.ShortHash(commits[0]), format(hits))
	}
	// A line that changes every version is a hit per version, each with its own commit.
	hits, err = s.Search(Query{Terms: []string{"version"}, History: true, Section: "Current Task"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"current four", "history four", "history three", "history two", "history one"}
	var got []string
	for i, h := range hits {
		where := "history"
		if h.Current {
			where = "current"
		}
		got = append(got, where+" "+strings.TrimPrefix(h.Snippet, "version "))
		if !h.Current && h.Commit != commits[len(commits)-i] {
			t.Errorf("hit %d: commit %s, want %s", i, repo.ShortHash(h.Commit), repo.ShortHash(commits[len(commits)-i]))
		}
	}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("hits %q, want %q", got, want)
	}
}

func TestIntroducedIsAMultiset(t *testing.T) {
	for _, tc := range []struct {
		name, old, cur string
		want           []string // "line:text"
	}{
		{"new file", "", "a\nb\n", []string{"1:a", "2:b"}},
		{"same", "a\nb\n", "a\nb\n", nil},
		{"moved line is not new", "a\nb\n", "b\na\n", nil},
		{"added", "a\n", "a\nc\n", []string{"2:c"}},
		{"duplicate is new", "a\n", "a\na\n", []string{"2:a"}},
		{"blank lines skipped", "a\n", "a\n\n  \nd", []string{"4:d"}},
		{"crlf", "a\r\n", "a\r\nb\r\n", []string{"2:b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			introduced([]byte(tc.old), []byte(tc.cur), func(line int, text []byte) {
				got = append(got, fmt.Sprintf("%d:%s", line, text))
			})
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSnippet(t *testing.T) {
	long := strings.Repeat("α", 200) + " needle " + strings.Repeat("β", 200)
	for _, tc := range []struct {
		name, line string
		terms      []string
		want       string // matches marked with «»
	}{
		{"short line kept whole, trimmed", "  - Use Blake3 here  ", []string{"blake3"}, "- Use «Blake3» here"},
		{"every occurrence marked", "ab AB aB", []string{"ab"}, "«ab» «AB» «aB»"},
		{"overlapping terms merged", "circuit breaker", []string{"circuit b", "t breaker"}, "«circuit breaker»"},
		{"folded length differs", "x \u212A y", []string{"k"}, "x «\u212A» y"},
		{"long line cut around the match", long, []string{"needle"},
			"…" + strings.Repeat("α", 76) + " «needle» " + strings.Repeat("β", 76) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var terms [][]byte
			for _, x := range tc.terms {
				terms = append(terms, appendFold(nil, []byte(x)))
			}
			s, ms := snippet(tc.line, terms)
			for i := len(ms) - 1; i >= 0; i-- {
				s = s[:ms[i][0]] + "«" + s[ms[i][0]:ms[i][1]] + "»" + s[ms[i][1]:]
			}
			if s != tc.want {
				t.Errorf("got  %q\nwant %q", s, tc.want)
			}
		})
	}
}

func TestSection(t *testing.T) {
	f := corpusStore(t)
	s := New(f.store())
	for _, tc := range []struct {
		name, section, term string
		want                []sections.ID // the sections the hits are in
	}{
		{"emoji id", "🔑", "e", []sections.ID{"🔑"}},
		{"heading text", "Key Decisions", "e", []sections.ID{"🔑"}},
		{"heading with id", "🔑 Key Decisions", "e", []sections.ID{"🔑"}},
		{"eleven id", "§10", "决", []sections.ID{"§10"}},
		{"eleven heading", "设计决策和讨论结果", "决", []sections.ID{"§10"}},
		{"knowledge graph", "Pending review", "e", []sections.ID{"pending review"}},
		{"memory", "Architecture Decisions", "#", []sections.ID{"architecture decisions", "架构决策"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := s.Search(Query{Terms: []string{tc.term}, Section: tc.section, History: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) == 0 {
				t.Fatal("no hits")
			}
			for _, h := range hits {
				if !contains(tc.want, h.Section) {
					t.Errorf("hit in section %q, want %q: %s:%d %s", h.Section, tc.want, h.File, h.Line, h.Snippet)
				}
			}
		})
	}
	var se *SectionError
	_, err := s.Search(Query{Terms: []string{"e"}, Section: "no such heading"})
	if !errors.As(err, &se) || !errors.Is(err, ErrNoSection) {
		t.Fatalf("unknown section: %v, want a SectionError", err)
	}
	if got := strings.Join(se.Templates, " "); got != "eleven knowledge memory memory-en six" {
		t.Errorf("templates %q", got)
	}
	// Known in one session's template only: the other session has no hits, and no error.
	hits, err := s.Search(Query{Terms: []string{"e"}, Section: "§3"})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.Session != "eleven" {
			t.Errorf("hit in %s for a section only eleven has", h.Session)
		}
	}
}

func contains(ids []sections.ID, id sections.ID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func TestIncrementalIndex(t *testing.T) {
	f, r, commits := oneLine(t, "first wording of the task")
	s := New(f.store())
	st, err := s.Index("")
	if err != nil {
		t.Fatal(err)
	}
	if st.Repos != 1 || st.Rebuilt != 1 || st.Commits != 2 {
		t.Fatalf("first index: %+v, want 1 repository rebuilt with 2 commits", st)
	}
	path := indexPath(f.store(), target{id: "s"})
	before, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close()
	oldInfo, _ := before.Stat()

	cp, err := os.ReadFile(r.WorkPath("checkpoint.md"))
	if err != nil {
		t.Fatal(err)
	}
	c2 := f.write(t, r, "checkpoint.md", replace(cp, "first wording", "second wording"))
	c3 := f.write(t, r, "checkpoint.md", replace(replace(cp, "first wording", "second wording"), "- [ ] (P2) End-to-end tests", "- [ ] (P2) End-to-end tests\n- [ ] (P3) third item"))
	st, err = s.Index("")
	if err != nil {
		t.Fatal(err)
	}
	if st.Rebuilt != 0 || st.Commits != 2 || st.Lines < 3 {
		t.Fatalf("update: %+v, want the 2 new commits indexed without a rebuild", st)
	}
	if st, _ := s.Index(""); st.Commits != 0 || st.Rebuilt != 0 {
		t.Errorf("up-to-date index was updated again: %+v", st)
	}
	// Replaced by rename: the file opened before still holds the old index, whole.
	old := make([]byte, oldInfo.Size())
	if _, err := before.ReadAt(old, 0); err != nil {
		t.Fatal(err)
	}
	if ix, err := parseIndex(old); err != nil || ix.head != commits[0] {
		t.Errorf("the old index file was written in place: %v", err)
	}
	newInfo, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(oldInfo, newInfo) {
		t.Error("the index file was rewritten in place, not replaced")
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	// Old records are kept and new ones added, each with the commit that introduced it.
	hits, err := s.Search(Query{Terms: []string{"wording"}, History: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]repo.Hash{"history first": commits[0], "history second": c2, "current second": c2}
	for _, h := range hits {
		k := "history " + strings.Fields(h.Snippet)[0]
		if h.Current {
			k = "current " + strings.Fields(h.Snippet)[0]
		}
		head := want[k]
		if k == "current second" {
			head = c3
		}
		if h.Commit != head {
			t.Errorf("%s: commit %s, want %s", k, repo.ShortHash(h.Commit), repo.ShortHash(head))
		}
		delete(want, k)
	}
	if len(want) > 0 {
		t.Errorf("missing hits %v:\n%s", want, format(hits))
	}
}

func TestDamagedIndexIsRebuilt(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(b []byte) []byte
	}{
		{"empty", func([]byte) []byte { return nil }},
		{"truncated", func(b []byte) []byte { return b[:len(b)-10] }},
		{"garbage", func(b []byte) []byte { return bytes.Repeat([]byte("x"), len(b)) }},
		{"flipped byte in the folded text", func(b []byte) []byte { b[headerSize+3] ^= 0x20; return b }},
		{"flipped byte in the lines, read only on a match", func(b []byte) []byte { b[len(b)-5] ^= 0x20; return b }},
		{"other version", func(b []byte) []byte { b[8]++; return b }},
		{"longer than it says", func(b []byte) []byte { return append(b, 0) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, commits := oneLine(t, "a line to find")
			s := New(f.store())
			q := Query{Terms: []string{"find"}, History: true}
			want, err := s.Search(q)
			if err != nil {
				t.Fatal(err)
			}
			path := indexPath(f.store(), target{id: "s"})
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, tc.damage(b), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := s.Search(q)
			if err != nil {
				t.Fatalf("damaged index: %v, want it rebuilt", err)
			}
			if !bytes.Equal(format(got), format(want)) {
				t.Errorf("after rebuild:\n%s\nwant:\n%s", format(got), format(want))
			}
			b, _ = os.ReadFile(path)
			if ix, err := parseIndex(b); err != nil || ix.head != commits[0] {
				t.Errorf("index not rewritten: %v", err)
			}
		})
	}
}

// An index whose head is not in the session's history (another session's, or one from
// before history was rewritten) is rebuilt rather than extended.
func TestForeignIndexIsRebuilt(t *testing.T) {
	f, _, _ := oneLine(t, "alpha wording")
	other := f.session(t, "t", "eleven")
	f.write(t, other, "checkpoint.md", corpus(t, "eleven/checkpoint.md"))
	s := New(f.store())
	if _, err := s.Index(""); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(indexPath(f.store(), target{id: "t"}))
	if err != nil {
		t.Fatal(err)
	}
	// Given the level of s's template (six: ###), the heads alone differ.
	if err := os.WriteFile(indexPath(f.store(), target{id: "s"}), withLevel(b, 3), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := s.Index("s")
	if err != nil {
		t.Fatal(err)
	}
	if st.Rebuilt != 1 {
		t.Fatalf("%+v: want a rebuild", st)
	}
	hits, err := s.Search(Query{Terms: []string{"当前意图"}, Session: "s", History: true})
	if err != nil || len(hits) != 0 {
		t.Errorf("lines of the other session leaked: %v\n%s", err, format(hits))
	}
}

// withLevel rewrites an index file's level field (and its checksum).
func withLevel(b []byte, level uint32) []byte {
	ix, err := parseIndex(b)
	if err != nil {
		panic(err)
	}
	nb := builderFrom(ix)
	nb.level = int(level)
	out, err := nb.bytes(ix.head)
	if err != nil {
		panic(err)
	}
	return out
}

// A merge brings in commits from another line of history: they are indexed too.
func TestMergeIsIndexed(t *testing.T) {
	f, r, commits := oneLine(t, "base wording", "ours wording")
	s := New(f.store())
	if _, err := s.Index(""); err != nil {
		t.Fatal(err)
	}
	unlock, err := f.store().Lock(r.LockName, true)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ours, err := r.Files(commits[1])
	if err != nil {
		t.Fatal(err)
	}
	theirs := map[string][]byte{}
	for k, v := range ours {
		theirs[k] = v
	}
	theirs["checkpoint.md"] = replace(ours["checkpoint.md"], "ours wording", "theirs wording")
	// theirs: a sibling of ours, then a merge of both; main ends at the merge.
	f.clock = f.clock.Add(time.Minute)
	side, _, err := r.Commit(repo.CommitRequest{Files: theirs, Message: "theirs\n", Parents: []repo.Hash{commits[0]}})
	if err != nil {
		t.Fatal(err)
	}
	merged := map[string][]byte{}
	for k, v := range ours {
		merged[k] = v
	}
	merged["checkpoint.md"] = replace(ours["checkpoint.md"], "ours wording", "ours wording and theirs too")
	f.clock = f.clock.Add(time.Minute)
	merge, _, err := r.Commit(repo.CommitRequest{Files: merged, Message: "merge\n", Parents: []repo.Hash{commits[1], side}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Index("")
	if err != nil {
		t.Fatal(err)
	}
	if st.Rebuilt != 0 || st.Commits != 2 {
		t.Fatalf("%+v: want the side commit and the merge indexed incrementally", st)
	}
	hits, err := s.Search(Query{Terms: []string{"theirs"}, History: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hits {
		if !h.Current {
			got = append(got, repo.ShortHash(h.Commit)+" "+h.Snippet)
		}
	}
	want := []string{repo.ShortHash(merge) + " ours wording and theirs too", repo.ShortHash(side) + " theirs wording"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestNoSessions(t *testing.T) {
	s := New(newFixture(t).store())
	hits, err := s.Search(Query{Terms: []string{"x"}, History: true, Section: "🔑"})
	if err != nil || len(hits) != 0 {
		t.Errorf("empty store: %v %v", hits, err)
	}
	if _, err := s.Search(Query{Terms: []string{"x"}, Session: "nope"}); !errors.Is(err, repo.ErrNotFound) {
		t.Errorf("unknown session: %v, want ErrNotFound", err)
	}
}

func TestSectionsOf(t *testing.T) {
	tc := &templateCache{}
	six, eleven, kn := tc.sessionLayout("six"), tc.sessionLayout("eleven"), tc.knowledgeLayout()
	for _, c := range []struct {
		name string
		l    *layout
		file string
		src  string
		want []sections.ID // by line
	}{
		{"six checkpoint", six, "checkpoint.md", "# Session Checkpoint\n\n### 🎯 Current Task\ntask\n## not a section\n### 🔑 Key Decisions\n- d\n",
			[]sections.ID{"", "", "🎯", "🎯", "🎯", "🔑", "🔑"}},
		{"heading in a code fence is text", six, "checkpoint.md", "### 🎯 Current Task\n```\n### 🔑 Key Decisions\n```\n",
			[]sections.ID{"🎯", "🎯", "🎯", "🎯"}},
		{"six spill", six, "checkpoint-decisions.md", "# 🔑 Key Decisions (spilled)\n\n_Older entries…_\n- d\n",
			[]sections.ID{"🔑", "🔑", "🔑", "🔑"}},
		{"eleven spill", eleven, "checkpoint-s10.md", "# §10 设计决策和讨论结果 (spilled)\n- d\n",
			[]sections.ID{"§10", "§10"}},
		{"eleven checkpoint", eleven, "checkpoint.md", "## §1 当前意图\n_逐字_\n> q\n## §2 下一个具体行动\n",
			[]sections.ID{"§1", "§1", "§1", "§2"}},
		{"notes have no section", six, "notes.md", "# Notes\n\n- [decision] x\n", []sections.ID{"", "", ""}},
		{"memory", kn, "MEMORY.md", "# MEMORY\n\n## 规则\n- D1\n", []sections.ID{"", "", "规则", "规则"}},
		{"knowledge graph", kn, "knowledge-graph.md", "# Knowledge Graph\n## Accepted\n### K-1\ntext\n## Rejected\n",
			[]sections.ID{"", "accepted", "accepted", "accepted", "rejected"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := c.l.sectionsOf(c.file, []byte(c.src))
			var got []sections.ID
			for i := range strings.Count(c.src, "\n") {
				got = append(got, m.at(i+1))
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestAppendFold(t *testing.T) {
	// ref folds rune by rune, the obvious way.
	ref := func(s string) string {
		var b strings.Builder
		for i, r := range s {
			if r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD") {
				b.WriteByte(s[i])
				continue
			}
			b.WriteRune(foldRune(r))
		}
		return b.String()
	}
	for _, tc := range []struct{ name, in, want string }{
		{"ascii", "Hello WORLD 42", "hello world 42"},
		{"chinese unchanged", "当前意图 §1", "当前意图 §1"},
		{"greek final sigma", "ΟΔΟΣ οδος", "οδοσ οδοσ"},
		{"kelvin sign", "\u212A", "k"},
		{"fullwidth", "ＡＢＣ", "ａｂｃ"},
		{"fold grows the text", "ȺȺȺ then ASCII AFTER", "ⱥⱥⱥ then ascii after"},
		{"folds outgrow the room made", strings.Repeat("Ⱥ", 100) + strings.Repeat("A", 1000), strings.Repeat("ⱥ", 100) + strings.Repeat("a", 1000)},
		{"invalid utf-8 kept", "A\xffB\xe4\xb8", "a\xffb\xe4\xb8"},
		{"newlines stay", "A\r\nÄ\nb", "a\r\nä\nb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := string(appendFold([]byte("prefix:"), []byte(tc.in)))
			if got != "prefix:"+tc.want {
				t.Errorf("appendFold(%q) = %q, want %q", tc.in, got, "prefix:"+tc.want)
			}
			if r := ref(tc.in); r != tc.want {
				t.Errorf("reference fold %q, want %q", r, tc.want)
			}
		})
	}
}

func TestFinder(t *testing.T) {
	for _, tc := range []struct {
		name, text, term string
		want             int
	}{
		{"rare byte in the middle", "aaa xyz aaa", "xyz", 4},
		{"rare byte first", "zebra", "zeb", 0},
		{"rare byte last", "abcq", "bcq", 1},
		{"rare byte before the term's room", "q xq", "xq", 2},
		{"rare byte seen without the term", "xa xb xc", "xc", 6},
		{"term runs past the end", "aax", "axy", -1},
		{"absent", "hello", "world", -1},
		{"only common bytes", "the tea eats", "eat", 8},
		{"cjk", "当前意图和任务", "意图", 6},
		{"empty text", "", "a", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := newFinder([]byte(tc.term)).index([]byte(tc.text)); got != tc.want {
				t.Errorf("index(%q, %q) = %d, want %d", tc.text, tc.term, got, tc.want)
			}
			if got := bytes.Index([]byte(tc.text), []byte(tc.term)); got != tc.want {
				t.Errorf("bytes.Index disagrees with the table: %d", got)
			}
		})
	}
}

// lowerWord must lower exactly A-Z, whatever their neighbours.
func TestLowerWordAllASCII(t *testing.T) {
	var in []byte
	for c := range 128 {
		in = append(in, byte(c))
	}
	for shift := range 8 { // every byte in every lane
		s := append(bytes.Repeat([]byte{'Z'}, shift), in...)
		want := strings.ToLower(string(s))
		if got := string(appendFold(nil, s)); got != want {
			t.Fatalf("shift %d: got %q, want %q", shift, got, want)
		}
	}
}

// Searches running while a session is written, and while each other rewrite the same index
// file, never fail and never see a torn index.
func TestConcurrentSearches(t *testing.T) {
	f, r, _ := oneLine(t, "version 0")
	cp, err := os.ReadFile(r.WorkPath("checkpoint.md"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			s := New(f.store())
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				if _, err := s.Search(Query{Terms: []string{"version"}, History: true}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := 1; i <= 10; i++ {
		f.write(t, r, "checkpoint.md", replace(cp, "version 0", fmt.Sprintf("version %d", i)))
	}
	close(done)
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	hits, err := New(f.store()).Search(Query{Terms: []string{"version"}, History: true, Section: "🎯"})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 12 { // the current line, and versions 0 to 10
		t.Errorf("%d hits, want 12:\n%s", len(hits), format(hits))
	}
}
