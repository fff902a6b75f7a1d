package ui

import (
	"errors"
	"html/template"
	"net/http"

	"github.com/ckpt-dev/ckpt/history"
)

// versionsPerPage is the section history's page: each version is a section diff, so a
// page stays a few dozen blob reads however long the history.
const versionsPerPage = 10

type version struct {
	Commit  history.Commit
	URL     string // the section in the commit's rendered checkpoint
	Changes []changeView
}

type sectionBody struct {
	Session    sessionInfo
	Section    string
	Label      string
	Current    template.HTML
	Missing    bool // the section is not in the checkpoint at HEAD
	Versions   []version
	Next       string
	First      string
	Scanned    int
	Split      bool
	SplitURL   string
	UnifiedURL string
	BlameURL   string
}

// sectionPage shows one section across time: its current text, then each commit that
// changed it, newest first, with what changed (?cursor= pages, ?view= split or unified).
func (s *Server) sectionPage(w http.ResponseWriter, r *http.Request) {
	id, ok := s.sessionID(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	split, err := viewParam(q.Get("view"))
	if err == nil {
		err = checkParam("section", r.PathValue("section"))
	}
	if err == nil {
		err = checkParam("cursor", q.Get("cursor"))
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	info, titles, err := s.session(id)
	if err != nil {
		s.fail(w, err)
		return
	}
	sid, err := s.hist.ResolveSection(string(id), r.PathValue("section"))
	if err != nil {
		s.fail(w, err)
		return
	}
	sec := string(sid)
	body := sectionBody{Session: info, Section: sec, Label: sectionLabel(sec, titles[sec]), Split: split}
	cur, err := s.hist.Show(string(id), "", "", sec)
	switch {
	case errors.Is(err, history.ErrNoSection):
		body.Missing = true
	case err != nil:
		s.fail(w, err)
		return
	default:
		body.Current = renderMarkdown([]byte(cur.Content))
	}
	lp, err := s.hist.Log(string(id), history.LogQuery{Section: sec, Cursor: q.Get("cursor"), Limit: versionsPerPage, Scan: scanLimit})
	if err != nil {
		s.fail(w, err)
		return
	}
	body.Scanned = lp.Scanned
	for _, c := range lp.Commits {
		d, err := s.hist.Diff(string(id), history.DiffQuery{To: c.Hash, Section: sec})
		if err != nil && !errors.Is(err, history.ErrNoSection) {
			s.fail(w, err)
			return
		}
		body.Versions = append(body.Versions, version{Commit: c,
			URL:     commitURL(string(id), c.Hash) + "#" + sectionAnchor(sec),
			Changes: changeViews(string(id), d.Changes, split)})
	}
	self := sectionURL(string(id), sec)
	view := q.Get("view")
	if lp.Next != "" {
		body.Next = withQuery(self, "cursor", lp.Next, "view", view)
	}
	if q.Get("cursor") != "" {
		body.First = withQuery(self, "view", view)
	}
	body.SplitURL = withQuery(self, "cursor", q.Get("cursor"), "view", "split")
	body.UnifiedURL = withQuery(self, "cursor", q.Get("cursor"))
	body.BlameURL = blameURL(string(id), sec)
	s.render(w, http.StatusOK, "section", page{
		Title:  body.Label + " · " + string(id),
		Nav:    "sessions",
		Crumbs: []crumb{{"Sessions", "/"}, {string(id), sessionURL(string(id))}, {body.Label, ""}},
		Next:   body.Next,
		Prev:   body.First,
		Body:   body,
	})
}

type blameRow struct {
	history.BlameLine
	First bool // the first of a run of lines from the same commit
	URL   string
}

type blameBody struct {
	Session    sessionInfo
	Section    string
	Label      string
	Rev        string
	Result     history.BlameResult
	Rows       []blameRow
	HistoryURL string
}

// blamePage shows which commit, at what time and by which trigger, added each line of a
// section (at ?rev=, HEAD by default).
func (s *Server) blamePage(w http.ResponseWriter, r *http.Request) {
	id, ok := s.sessionID(w, r)
	if !ok {
		return
	}
	rev := r.URL.Query().Get("rev")
	err := checkParam("section", r.PathValue("section"))
	if err == nil {
		err = checkParam("rev", rev)
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	info, titles, err := s.session(id)
	if err != nil {
		s.fail(w, err)
		return
	}
	sid, err := s.hist.ResolveSection(string(id), r.PathValue("section"))
	if err != nil {
		s.fail(w, err)
		return
	}
	sec := string(sid)
	res, err := s.hist.Blame(string(id), sec, rev)
	if err != nil {
		s.fail(w, err)
		return
	}
	body := blameBody{Session: info, Section: sec, Label: sectionLabel(sec, titles[sec]), Rev: rev, Result: res,
		HistoryURL: sectionURL(string(id), sec)}
	prev := ""
	for _, l := range res.Lines {
		body.Rows = append(body.Rows, blameRow{BlameLine: l, First: l.Commit != prev, URL: commitURL(string(id), l.Commit)})
		prev = l.Commit
	}
	s.render(w, http.StatusOK, "blame", page{
		Title:  "blame " + body.Label + " · " + string(id),
		Nav:    "sessions",
		Crumbs: []crumb{{"Sessions", "/"}, {string(id), sessionURL(string(id))}, {body.Label, body.HistoryURL}, {"blame", ""}},
		Body:   body,
	})
}
