package ui

import (
	"net/http"

	"github.com/ckpt-dev/ckpt/history"
)

type compareBody struct {
	Session    sessionInfo
	From, To   string
	Section    string
	File       string
	Result     *history.DiffResult
	Changes    []changeView
	Split      bool
	SplitURL   string
	UnifiedURL string
}

// comparePage compares any two revisions of a file (?from=, ?to=, checkpoint.md unless
// ?file=), section by section; ?section= keeps one. Without from and to it shows the form.
func (s *Server) comparePage(w http.ResponseWriter, r *http.Request) {
	id, ok := s.sessionID(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	body := compareBody{From: q.Get("from"), To: q.Get("to"), Section: q.Get("section")}
	var err error
	body.Split, err = viewParam(q.Get("view"))
	for _, p := range []struct{ name, v string }{{"from", body.From}, {"to", body.To}, {"section", body.Section}} {
		if err == nil {
			err = checkParam(p.name, p.v)
		}
	}
	if err == nil {
		body.File, err = fileParam(q.Get("file"))
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	info, _, err := s.session(id)
	if err != nil {
		s.fail(w, err)
		return
	}
	body.Session = info
	if body.From != "" || body.To != "" {
		if body.From == "" || body.To == "" {
			s.fail(w, badInput("compare needs both from and to"))
			return
		}
		d, err := s.hist.Diff(string(id), history.DiffQuery{From: body.From, To: body.To, Section: body.Section, File: body.File})
		if err != nil {
			s.fail(w, err)
			return
		}
		body.Result = &d
		body.Changes = changeViews(string(id), d.Changes, body.Split)
	}
	file := q.Get("file")
	base := "/s/" + pathEscape(string(id)) + "/compare"
	body.SplitURL = withQuery(base, "from", body.From, "to", body.To, "section", body.Section, "file", file, "view", "split")
	body.UnifiedURL = withQuery(base, "from", body.From, "to", body.To, "section", body.Section, "file", file)
	s.render(w, http.StatusOK, "compare", page{
		Title:  "compare · " + string(id),
		Nav:    "sessions",
		Crumbs: []crumb{{"Sessions", "/"}, {string(id), sessionURL(string(id))}, {"compare", ""}},
		Body:   body,
	})
}
