package ui

import (
	"net/http"
	"strings"
	"time"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/knowledge"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/search"
)

// searchLimit bounds one page of hits.
const searchLimit = 200

type snippetPart struct {
	Text  string
	Match bool
}

type hitView struct {
	Session, Commit, Short, File, Section string
	Line                                  int
	Time                                  time.Time
	Current                               bool
	Knowledge                             bool
	URL                                   string
	Parts                                 []snippetPart
}

type searchBody struct {
	Query, Session, Section string
	History                 bool
	Searched                bool
	Hits                    []hitView
	Limited                 bool
}

// searchPage runs the search package: every word of ?q= in a line (a "quoted phrase" is
// one word), in the current files or with ?history=1 in every version; ?s= keeps one
// session and ?section= one section. Hits link to the commit that wrote the line.
func (s *Server) searchPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	body := searchBody{Query: q.Get("q"), Session: q.Get("s"), Section: q.Get("section")}
	switch q.Get("history") {
	case "", "0":
	case "1", "on", "true":
		body.History = true
	default:
		s.fail(w, badInput("history %q: want 1 or 0", cut(q.Get("history"), 10)))
		return
	}
	for _, p := range []struct{ name, v string }{{"q", body.Query}, {"section", body.Section}} {
		if err := checkParam(p.name, p.v); err != nil {
			s.fail(w, err)
			return
		}
	}
	sq := search.Query{Terms: queryTerms(body.Query), Section: body.Section, History: body.History, Limit: searchLimit + 1}
	if body.Session != "" {
		id, err := repo.ParseSessionID(body.Session)
		if err != nil {
			s.fail(w, err)
			return
		}
		sq.Session = id
	}
	p := page{Title: "Search", Nav: "search", Query: body.Query}
	if len(sq.Terms) > 0 {
		hits, err := search.New(s.opts.Store).Search(sq)
		if err != nil {
			s.fail(w, err)
			return
		}
		body.Searched = true
		if len(hits) > searchLimit {
			hits, body.Limited = hits[:searchLimit], true
		}
		for _, h := range hits {
			body.Hits = append(body.Hits, hitOf(h))
		}
		p.Title = body.Query + " · search"
	}
	p.Body = body
	s.render(w, http.StatusOK, "search", p)
}

func hitOf(h search.Hit) hitView {
	v := hitView{Session: h.Session, Commit: h.Commit.String(), Short: repo.ShortHash(h.Commit), File: h.File,
		Section: string(h.Section), Line: h.Line, Time: h.Time, Current: h.Current}
	v.Knowledge = h.Session == search.KnowledgeSession && (h.File == knowledge.File || h.File == knowledge.MemoryFile)
	switch {
	case v.Knowledge:
		v.URL = "/knowledge"
	default:
		v.URL = commitURL(h.Session, v.Commit)
		if h.File != checkpoint.File {
			v.URL = withQuery(v.URL, "file", h.File)
		}
		if h.Section != "" {
			v.URL += "#" + sectionAnchor(string(h.Section))
		}
	}
	last := 0
	for _, m := range h.Matches {
		if m[0] < last || m[1] > len(h.Snippet) || m[0] > m[1] {
			continue
		}
		if m[0] > last {
			v.Parts = append(v.Parts, snippetPart{Text: h.Snippet[last:m[0]]})
		}
		v.Parts = append(v.Parts, snippetPart{Text: h.Snippet[m[0]:m[1]], Match: true})
		last = m[1]
	}
	if last < len(h.Snippet) {
		v.Parts = append(v.Parts, snippetPart{Text: h.Snippet[last:]})
	}
	return v
}

// queryTerms splits a search box's text into terms: words, or "quoted phrases".
func queryTerms(q string) []string {
	var args []string
	for {
		q = strings.TrimSpace(q)
		if q == "" {
			break
		}
		if rest, ok := strings.CutPrefix(q, `"`); ok {
			phrase, after, _ := strings.Cut(rest, `"`)
			args, q = append(args, phrase), after
			continue
		}
		i := strings.IndexAny(q, " \t\"")
		if i < 0 {
			i = len(q)
		}
		args, q = append(args, q[:i]), q[i:]
	}
	return search.Terms(args)
}
