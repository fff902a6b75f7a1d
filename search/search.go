// Package search finds text in what sessions wrote: the current checkpoints, notes and spill
// files of every session and the knowledge repository's knowledge-graph.md and MEMORY.md,
// and with History every line any commit introduced, so a hit says when the line was
// written.
//
// Current files are read straight from the work trees. History goes through one index file
// per repository under <home>/state/search/, a cache that git can always rebuild: it is
// brought up to date on demand, indexing only the commits since the head it covers, and a
// missing or damaged index is rebuilt, never an error. Nothing takes a lock: git objects are
// immutable, refs and work-tree files and index files are all replaced atomically.
//
// The package never prints.
package search

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
)

// Sentinel errors, compared with errors.Is.
var (
	ErrEmptyQuery = errors.New("empty query")
	ErrNoSection  = errors.New("no such section")
)

// KnowledgeSession is the session name hits in the knowledge repository carry.
const KnowledgeSession = "knowledge"

// Query is what to look for and where.
type Query struct {
	// Terms must all appear in a line, in any case (see Terms).
	Terms []string
	// Session limits the search to one session; "" searches every session and the
	// knowledge repository.
	Session repo.SessionID
	// Section keeps hits in that section: an id (🎯, §3) or heading text, resolved against
	// each repository's templates.
	Section string
	// History searches every committed version as well as the current files.
	History bool
	// Limit keeps the first Limit hits; 0 keeps all.
	Limit int
}

// Hit is one matching line.
type Hit struct {
	Session string
	// Commit is the commit that introduced the line; for a current hit, the session's head.
	Commit repo.Hash
	// Time is the commit's time; for a current hit, when the file was last written.
	Time    time.Time
	File    string
	Section sections.ID // "" outside any section (preamble, notes.md)
	Line    int         // 1-based, in that version of the file
	// Snippet is the line, trimmed, cut to about 160 characters around the first match.
	Snippet string
	// Matches are the byte ranges of the terms in Snippet, sorted, not overlapping.
	Matches [][2]int
	// Current is true for a hit in the work tree, false for one in history.
	Current bool
}

// Terms turns command-line arguments into query terms: each argument is one term, so a
// phrase quoted for the shell stays one, with runs of white space inside it made one space.
// Empty arguments are dropped.
func Terms(args []string) []string {
	var out []string
	for _, a := range args {
		if t := strings.Join(strings.Fields(a), " "); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// Searcher searches one store.
type Searcher struct {
	store *repo.Store
	// Workers is how many repositories are searched at once; 0 means GOMAXPROCS.
	Workers int
}

// New returns a Searcher over st.
func New(st *repo.Store) *Searcher { return &Searcher{store: st} }

// target is one repository to search.
type target struct {
	id        string
	knowledge bool
}

func (s *Searcher) targets(session repo.SessionID) ([]target, error) {
	if session != "" {
		if _, err := s.store.Open(session); err != nil {
			return nil, err
		}
		return []target{{id: string(session)}}, nil
	}
	ids, err := s.store.SessionIDs()
	if err != nil {
		return nil, err
	}
	out := make([]target, 0, len(ids)+1)
	for _, id := range ids {
		out = append(out, target{id: string(id)})
	}
	if _, err := os.Stat(filepath.Join(s.store.KnowledgeDir(), ".git")); err == nil {
		out = append(out, target{id: KnowledgeSession, knowledge: true})
	}
	return out, nil
}

func (s *Searcher) open(t target) (*repo.Repo, error) {
	if t.knowledge {
		return s.store.OpenKnowledge()
	}
	return s.store.Open(repo.SessionID(t.id))
}

func (tc *templateCache) layoutOf(t target, r *repo.Repo) *layout {
	if t.knowledge {
		return tc.knowledgeLayout()
	}
	return tc.sessionLayout(r.Template())
}

// Search returns the hits of q: repository by repository (sessions by id, the knowledge
// repository last), each with its current hits first (by file and line), then its history
// hits newest first.
func (s *Searcher) Search(q Query) ([]Hit, error) {
	terms := foldTerms(q.Terms)
	if len(terms) == 0 {
		return nil, ErrEmptyQuery
	}
	targets, err := s.targets(q.Session)
	if err != nil || len(targets) == 0 {
		return nil, err
	}
	tc := &templateCache{home: s.store.Home}
	type result struct {
		hits     []Hit
		resolved bool
		tmpls    []*tmpl
		err      error
	}
	results := make([]result, len(targets))
	s.each(len(targets), func(i int, sc *scratch) {
		t := targets[i]
		res := &results[i]
		r, err := s.open(t)
		if errors.Is(err, repo.ErrNotFound) && q.Session == "" {
			return // removed since the sessions were listed
		}
		if err != nil {
			res.err = err
			return
		}
		l := tc.layoutOf(t, r)
		var keep func(file string, id sections.ID) bool
		if q.Section != "" {
			ids, ok := l.resolve(q.Section)
			res.resolved, res.tmpls = ok, l.templates()
			if !ok {
				return
			}
			keep = func(file string, id sections.ID) bool {
				want, ok := ids[kindOf(file)]
				return ok && id == want
			}
		}
		head, err := r.Head()
		if err != nil {
			res.err = err
			return
		}
		m := &matcher{target: t, terms: terms, keep: keep}
		if err := m.current(r, l, head, sc); err != nil {
			res.err = fmt.Errorf("search %s: %w", t.id, err)
			return
		}
		if q.History {
			ix, _, err := freshIndex(s.store, t, r, l, head, sc)
			if err == nil && !m.history(ix) {
				ix.close()
				_ = os.Remove(indexPath(s.store, t))
				if ix, _, err = freshIndex(s.store, t, r, l, head, sc); err == nil && !m.history(ix) {
					err = fmt.Errorf("index %s: %w", t.id, errCorrupt)
				}
			}
			ix.close()
			if err != nil {
				res.err = err
				return
			}
		}
		res.hits = m.hits
	})
	var out []Hit
	resolved := q.Section == ""
	var tmpls []*tmpl
	for _, res := range results {
		if res.err != nil {
			return nil, res.err
		}
		resolved = resolved || res.resolved
		tmpls = append(tmpls, res.tmpls...)
		out = append(out, res.hits...)
	}
	if !resolved {
		return nil, noSection(q.Section, tmpls)
	}
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

// SectionError is a --section that names no section of any template searched.
type SectionError struct {
	Query     string
	Templates []string      // the templates looked in, sorted
	Sections  []sections.ID // their sections, in template order
}

func (e *SectionError) Error() string {
	if len(e.Templates) == 1 {
		return fmt.Sprintf("no section %q in template %s", e.Query, e.Templates[0])
	}
	return fmt.Sprintf("no section %q in templates %s", e.Query, strings.Join(e.Templates, ", "))
}

// Unwrap makes a SectionError an ErrNoSection.
func (e *SectionError) Unwrap() error { return ErrNoSection }

func noSection(query string, ts []*tmpl) error {
	e := &SectionError{Query: query}
	seen := map[sections.ID]bool{}
	for _, t := range ts {
		e.Templates = append(e.Templates, t.name)
		for _, id := range t.doc.IDs() {
			if !seen[id] {
				seen[id] = true
				e.Sections = append(e.Sections, id)
			}
		}
	}
	slices.Sort(e.Templates)
	e.Templates = slices.Compact(e.Templates)
	return e
}

// Stats describe the history indexes after Index.
type Stats struct {
	Repos   int   // repositories indexed
	Rebuilt int   // indexes built from nothing
	Commits int   // commits indexed by this call
	Lines   int   // lines indexed by this call
	Bytes   int64 // total size of the index files
}

// Index brings the history index of every repository (or of one session) up to date, as a
// history search would, and says what it did.
func (s *Searcher) Index(session repo.SessionID) (Stats, error) {
	targets, err := s.targets(session)
	if err != nil {
		return Stats{}, err
	}
	tc := &templateCache{home: s.store.Home}
	stats := make([]updateStats, len(targets))
	errs := make([]error, len(targets))
	s.each(len(targets), func(i int, sc *scratch) {
		r, err := s.open(targets[i])
		if errors.Is(err, repo.ErrNotFound) && session == "" {
			return // removed since the sessions were listed
		}
		if err != nil {
			errs[i] = err
			return
		}
		head, err := r.Head()
		if err != nil {
			errs[i] = err
			return
		}
		var ix *index
		ix, stats[i], errs[i] = freshIndex(s.store, targets[i], r, tc.layoutOf(targets[i], r), head, sc)
		ix.close()
	})
	var out Stats
	for i, st := range stats {
		if errs[i] != nil {
			return Stats{}, errs[i]
		}
		if st.bytes == 0 {
			continue // removed since the sessions were listed
		}
		out.Repos++
		out.Commits += st.commits
		out.Lines += st.lines
		out.Bytes += int64(st.bytes)
		if st.rebuilt {
			out.Rebuilt++
		}
	}
	return out, nil
}

// scratch is a worker's buffers, reused from one repository to the next so that a search
// of a thousand sessions does not allocate (and collect) a thousand copies of each.
type scratch struct {
	index  []byte // the folded text of an index file
	rest   []byte // the rest of it, when a line matched
	file   []byte // a work-tree file
	folded []byte // its folded form
}

// each runs fn for 0..n-1 on the searcher's workers, each with its own scratch.
func (s *Searcher) each(n int, fn func(i int, sc *scratch)) {
	workers := s.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, n)
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var sc scratch
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				fn(i, &sc)
			}
		}()
	}
	wg.Wait()
}

// foldTerms folds the terms and puts first the one whose rarest byte is rarest (the
// longest among equals): scanLines looks for it and checks the others on the lines found.
func foldTerms(terms []string) [][]byte {
	var out [][]byte
	for _, t := range Terms(terms) {
		out = append(out, appendFold(nil, []byte(t)))
	}
	rank := func(t []byte) int { return int(byteRank[t[rarest(t)]]) }
	slices.SortStableFunc(out, func(a, b []byte) int {
		if c := cmp.Compare(rank(a), rank(b)); c != 0 {
			return c
		}
		return cmp.Compare(len(b), len(a))
	})
	return out
}

// matcher collects the hits of one repository.
type matcher struct {
	target target
	terms  [][]byte
	keep   func(file string, id sections.ID) bool // nil keeps every section
	hits   []Hit
}

func (m *matcher) add(h Hit, line string) {
	if m.keep != nil && !m.keep(h.File, h.Section) {
		return
	}
	h.Session = m.target.id
	h.Snippet, h.Matches = snippet(line, m.terms)
	m.hits = append(m.hits, h)
}

// current searches the versioned files of the work tree as they are now.
func (m *matcher) current(r *repo.Repo, l *layout, head repo.Hash, sc *scratch) error {
	entries, err := os.ReadDir(r.WorkDir)
	if err != nil {
		return fmt.Errorf("read work tree %s: %w", r.WorkDir, err)
	}
	for _, e := range entries { // sorted by name
		name := e.Name()
		if !e.Type().IsRegular() || repo.ValidFileName(name) != nil {
			continue
		}
		path := filepath.Join(r.WorkDir, name)
		err := readFile(path, &sc.file)
		if errors.Is(err, os.ErrNotExist) {
			continue // removed since the directory was listed
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		src := sc.file
		sc.folded = appendFold(sc.folded[:0], src)
		folded := sc.folded
		var (
			secs     *sectionMap
			when     time.Time
			lineNo   = 1
			counted  = 0 // folded[:counted] holds lineNo-1 newlines
			origLine = 0 // src[origLine:] starts line origNo
			origNo   = 1
		)
		scanLines(folded, m.terms, func(start, end int) bool {
			lineNo += bytes.Count(folded[counted:start], nl)
			counted = start
			for ; origNo < lineNo; origNo++ {
				origLine += bytes.IndexByte(src[origLine:], '\n') + 1
			}
			text := src[origLine:]
			if i := bytes.IndexByte(text, '\n'); i >= 0 {
				text = text[:i]
			}
			if secs == nil {
				mp := l.sectionsOf(name, src)
				secs = &mp
				if fi, err := e.Info(); err == nil {
					when = fi.ModTime()
				}
			}
			m.add(Hit{Commit: head, Time: when, File: name, Section: secs.at(lineNo), Line: lineNo, Current: true},
				strings.TrimSuffix(string(text), "\r"))
			return true
		})
	}
	return nil
}

// history searches an index and appends its hits newest first. It returns false, and
// adds nothing, when the part of the index read only on a match is damaged, or a record
// does not fit: the index is then rebuilt.
func (m *matcher) history(ix *index) bool {
	type found struct {
		rec  record
		when time.Time
		gen  uint32
	}
	var recs []found
	bad := false
	scanLines(ix.folded, m.terms, func(start, end int) bool {
		if ix.loadRest() != nil {
			bad = true
			return false
		}
		r, ok := ix.recordAt(start)
		if !ok {
			bad = true
			return false
		}
		c := ix.commit(r.commit)
		recs = append(recs, found{r, c.when, c.gen})
		return true
	})
	if bad {
		return false
	}
	slices.SortStableFunc(recs, func(a, b found) int {
		if c := b.when.Compare(a.when); c != 0 {
			return c
		}
		if c := cmp.Compare(b.gen, a.gen); c != 0 {
			return c
		}
		if c := cmp.Compare(ix.strs[a.rec.file], ix.strs[b.rec.file]); c != 0 {
			return c
		}
		return cmp.Compare(a.rec.line, b.rec.line)
	})
	for _, f := range recs {
		m.add(Hit{
			Commit:  ix.commit(f.rec.commit).hash,
			Time:    f.when,
			File:    ix.strs[f.rec.file],
			Section: sections.ID(ix.strs[f.rec.section]),
			Line:    f.rec.line,
		}, ix.lineText(f.rec.lineOff))
	}
	return true
}

var nl = []byte{'\n'}

// readFile reads a file into buf, reusing its array.
func readFile(path string, buf *[]byte) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	b := bytes.NewBuffer((*buf)[:0])
	_, err = b.ReadFrom(f)
	*buf = b.Bytes()
	return err
}
