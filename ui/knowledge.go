package ui

import (
	"errors"
	"html/template"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"

	"github.com/ckpt-dev/ckpt/knowledge"
	"github.com/ckpt-dev/ckpt/repo"
)

type provLink struct {
	knowledge.Provenance
	URL string
}

type entryView struct {
	ID, State    string
	HTML         template.HTML
	Provenance   []provLink
	Supersedes   []string
	SupersededBy []string
}

type knowledgeBody struct {
	State   string
	Counts  map[string]int
	Total   int
	Entries []entryView
	Graph   template.HTML
	Memory  template.HTML
}

// knowledgePage shows the knowledge graph: every entry with its state and provenance (each
// session commit linked), the graph as SVG, and MEMORY.md. ?state= keeps one state.
func (s *Server) knowledgePage(w http.ResponseWriter, r *http.Request) {
	state := r.URL.Query().Get("state")
	if state != "" && state != knowledge.StatePending && state != knowledge.StateAccepted && state != knowledge.StateRejected {
		s.fail(w, badInput("state %q: want pending, accepted or rejected", cut(state, 20)))
		return
	}
	// The shared lock, when there is a knowledge repository to read: taking it creates the
	// lock file, and a store without one stays as it is.
	unlock := func() {}
	if _, err := os.Stat(s.opts.Store.KnowledgeDir()); err == nil {
		if unlock, err = s.opts.Store.Lock(repo.KnowledgeLock, false); err != nil {
			s.fail(w, err)
			return
		}
	}
	kg, err := knowledge.Load(s.opts.Store)
	var memory []byte
	if err == nil {
		memory, err = os.ReadFile(filepath.Join(s.opts.Store.KnowledgeDir(), knowledge.MemoryFile))
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
	}
	unlock()
	if err != nil {
		s.fail(w, err)
		return
	}
	body := knowledgeBody{State: state, Counts: map[string]int{}, Total: len(kg.Entries), Memory: renderMarkdown(memory)}
	if len(memory) == 0 {
		body.Memory = ""
	}
	by := map[string][]string{}
	for _, e := range kg.Entries {
		body.Counts[e.State]++
		for _, old := range e.Supersedes {
			by[old] = append(by[old], e.ID)
		}
	}
	shown := kg.Entries
	if state != "" {
		shown = nil
		for _, e := range kg.Entries {
			if e.State == state {
				shown = append(shown, e)
			}
		}
	}
	for _, e := range shown {
		v := entryView{ID: e.ID, State: e.State, HTML: renderMarkdown([]byte(e.Text)), Supersedes: e.Supersedes, SupersededBy: by[e.ID]}
		for _, p := range e.Provenance {
			l := provLink{Provenance: p}
			if _, err := repo.ParseSessionID(p.Session); err == nil && p.Commit != "" {
				l.URL = commitURL(p.Session, p.Commit)
			}
			v.Provenance = append(v.Provenance, l)
		}
		body.Entries = append(body.Entries, v)
	}
	body.Graph = graphSVG(shown)
	s.render(w, http.StatusOK, "knowledge", page{
		Title: "Knowledge graph",
		Nav:   "knowledge",
		Body:  body,
	})
}
