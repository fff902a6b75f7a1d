package ui

import (
	"net/http"
	"slices"
	"strings"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/history"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
)

// commitsPerPage is the timeline's page: the first page of a 10,000-commit session reads
// 50 commits, not 10,000.
const commitsPerPage = 50

// scanLimit bounds the commits one filtered page reads: a section changed once in
// 10,000 commits gives a short page with a link to go on, not a slow one.
const scanLimit = 2000

type sessionInfo struct {
	ID       string
	Template string
	Worktree string // "" when the work tree is the session directory
	Sections []sectionOption
}

type sectionOption struct {
	ID, Title, Label string
	Selected         bool
}

// chip is a section a commit changed.
type chip struct {
	ID, Label, URL string
}

// sectionLabel names a section for people: its heading's text, which starts with the id
// (🎯 Current Task, §3 Directives) in the built-in templates.
func sectionLabel(id, title string) string {
	switch {
	case title == "":
		return id
	case strings.HasPrefix(title, id), sections.Normalize(title) == id:
		return title
	}
	return id + " " + title
}

type commitRow struct {
	history.Commit
	URL   string
	Chips []chip
	Code  []codeLink
}

type timelineBody struct {
	Session  sessionInfo
	Commits  []commitRow
	Section  string
	Trigger  string
	Triggers []string
	Filtered bool
	Cursor   string
	Scanned  int
	Next     string
	First    string
}

// session reads what pages show about a session besides its history: its template (for
// section titles) and work tree. An unknown session is repo.ErrNotFound.
func (s *Server) session(id repo.SessionID) (sessionInfo, map[string]string, error) {
	r, err := s.opts.Store.Open(id)
	if err != nil {
		return sessionInfo{}, nil, err
	}
	info := sessionInfo{ID: string(id), Template: r.Template()}
	if r.Bound != "" {
		info.Worktree = r.WorkDir
	}
	titles := map[string]string{}
	if t, err := s.svc.LoadTemplate(r.Template()); err == nil {
		for _, sec := range t.Doc.Sections {
			titles[string(sec.ID)] = sec.Title()
			info.Sections = append(info.Sections, sectionOption{ID: string(sec.ID), Title: sec.Title(), Label: sectionLabel(string(sec.ID), sec.Title())})
		}
	}
	return info, titles, nil
}

func chips(session string, ids []string, titles map[string]string) []chip {
	out := make([]chip, 0, len(ids))
	for _, id := range ids {
		out = append(out, chip{ID: id, Label: sectionLabel(id, titles[id]), URL: sectionURL(session, id)})
	}
	return out
}

// timelinePage lists a session's commits newest first, a page at a time (?cursor=),
// optionally only those that changed ?section= or carry ?trigger=.
func (s *Server) timelinePage(w http.ResponseWriter, r *http.Request) {
	id, ok := s.sessionID(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	body := timelineBody{Section: q.Get("section"), Trigger: q.Get("trigger"), Cursor: q.Get("cursor"), Triggers: triggerNames}
	if body.Trigger != "" && !slices.Contains(triggerNames, body.Trigger) {
		s.fail(w, badInput("trigger %q: want one of %v", cut(body.Trigger, 20), triggerNames))
		return
	}
	if err := checkParam("section", body.Section); err != nil {
		s.fail(w, err)
		return
	}
	if err := checkParam("cursor", body.Cursor); err != nil {
		s.fail(w, err)
		return
	}
	info, titles, err := s.session(id)
	if err != nil {
		s.fail(w, err)
		return
	}
	body.Filtered = body.Section != "" || body.Trigger != ""
	lq := history.LogQuery{Section: body.Section, Trigger: body.Trigger, Cursor: body.Cursor, Limit: commitsPerPage}
	if body.Filtered {
		lq.Scan = scanLimit
	}
	lp, err := s.hist.Log(string(id), lq)
	if err != nil {
		s.fail(w, err)
		return
	}
	if body.Section != "" {
		if sid, err := s.hist.ResolveSection(string(id), body.Section); err == nil {
			body.Section = string(sid)
		}
	}
	for i := range info.Sections {
		info.Sections[i].Selected = info.Sections[i].ID == body.Section
	}
	body.Session, body.Scanned = info, lp.Scanned
	links := s.codeLinks(id)
	for _, c := range lp.Commits {
		body.Commits = append(body.Commits, commitRow{Commit: c, URL: commitURL(string(id), c.Hash),
			Chips: chips(string(id), c.Sections, titles), Code: links[c.Short]})
	}
	base := sessionURL(string(id))
	if lp.Next != "" {
		body.Next = withQuery(base, "section", body.Section, "trigger", body.Trigger, "cursor", lp.Next)
	}
	if body.Cursor != "" {
		body.First = withQuery(base, "section", body.Section, "trigger", body.Trigger)
	}
	s.render(w, http.StatusOK, "timeline", page{
		Title:  string(id),
		Nav:    "sessions",
		Crumbs: []crumb{{"Sessions", "/"}, {string(id), ""}},
		Next:   body.Next,
		Prev:   body.First,
		Body:   body,
	})
}

// checkParam refuses a query parameter no page would ever make: too long, or with
// control characters.
func checkParam(name, v string) error {
	if len(v) > 200 {
		return badInput("%s longer than 200 bytes", name)
	}
	for _, r := range v {
		if r < ' ' || r == 0x7f {
			return badInput("%s has a control character", name)
		}
	}
	return nil
}

// triggerNames are the triggers a timeline can be filtered by.
var triggerNames = func() []string {
	out := make([]string, len(checkpoint.Triggers))
	for i, t := range checkpoint.Triggers {
		out[i] = string(t)
	}
	return out
}()
