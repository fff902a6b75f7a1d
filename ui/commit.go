package ui

import (
	"html/template"
	"net/http"
	"slices"
	"sort"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/history"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
)

// changeView is one section's change as a page draws it.
type changeView struct {
	Section, Heading, Status string
	Moved                    bool
	SectionURL               string
	Split                    bool
	Lines                    []diffLine
	Rows                     []splitRow
	Add, Del                 int
}

func changeViews(session string, changes []history.Change, split bool) []changeView {
	out := make([]changeView, 0, len(changes))
	for _, ch := range changes {
		v := changeView{Section: ch.Section, Heading: ch.Heading, Status: ch.Status, Moved: ch.Moved, Split: split,
			SectionURL: sectionURL(session, ch.Section)}
		if ch.Section == string(sections.PreambleID) {
			v.SectionURL = ""
		}
		v.Lines = parseUnified(ch.Diff)
		v.Add, v.Del = diffStat(v.Lines)
		if split {
			v.Rows = splitRows(v.Lines)
			v.Lines = nil
		}
		out = append(out, v)
	}
	return out
}

// renderedSection is a section of a file rendered as HTML, with the anchor diffs link to.
type renderedSection struct {
	ID      string
	Anchor  string
	HTML    template.HTML
	History string // the section's history page ("" for the preamble)
	Blame   string
}

// renderFile renders a file section by section, so every section has an anchor. Files
// other than the checkpoint are rendered whole.
func (s *Server) renderFile(session, tmpl, file string, content []byte) []renderedSection {
	if file != checkpoint.File {
		return []renderedSection{{HTML: renderMarkdown(content)}}
	}
	var doc *sections.Document
	if t, err := s.svc.LoadTemplate(tmpl); err == nil {
		doc = t.Parse(content)
	} else {
		doc = sections.Parse(content, sections.Options{})
	}
	out := make([]renderedSection, 0, len(doc.Sections)+1)
	if len(doc.Preamble) > 0 {
		out = append(out, renderedSection{ID: string(sections.PreambleID), Anchor: sectionAnchor(string(sections.PreambleID)), HTML: renderMarkdown(doc.Preamble)})
	}
	for i := range doc.Sections {
		sec := &doc.Sections[i]
		id := string(sec.ID)
		out = append(out, renderedSection{ID: id, Anchor: sectionAnchor(id), HTML: renderMarkdown(sec.Bytes()),
			History: sectionURL(session, id), Blame: blameURL(session, id)})
	}
	return out
}

type commitBody struct {
	Session    sessionInfo
	Commit     history.Commit
	Parents    []parentLink
	Code       []codeLink
	File       string
	Files      []fileLink
	Changes    []changeView
	Rendered   []renderedSection
	Split      bool
	SplitURL   string
	UnifiedURL string
	CompareURL string
}

type parentLink struct{ Hash, URL string }

type fileLink struct {
	Name, URL string
	Current   bool
	Changed   bool
}

// viewParam reads ?view= (unified or split).
func viewParam(v string) (bool, error) {
	switch v {
	case "", "unified":
		return false, nil
	case "split":
		return true, nil
	}
	return false, badInput("view %q: want unified or split", cut(v, 20))
}

// fileParam reads ?file= (checkpoint.md when absent): only a file name a session
// versions, never a path.
func fileParam(v string) (string, error) {
	if v == "" {
		return checkpoint.File, nil
	}
	if err := repo.ValidFileName(v); err != nil {
		return "", err
	}
	return v, nil
}

// revParam checks a revision from a URL before history resolves it.
func revParam(name, v string) error {
	if v == "" {
		return badInput("no %s revision", name)
	}
	return checkParam(name, v)
}

// commitPage shows one commit: its message and trailers, the section diffs against its
// first parent, and the file at that revision rendered as Markdown.
func (s *Server) commitPage(w http.ResponseWriter, r *http.Request) {
	id, ok := s.sessionID(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	rev := r.PathValue("rev")
	split, err := viewParam(q.Get("view"))
	if err == nil {
		err = revParam("rev", rev)
	}
	file := ""
	if err == nil {
		file, err = fileParam(q.Get("file"))
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
	c, err := s.hist.Resolve(string(id), rev)
	if err != nil {
		s.fail(w, err)
		return
	}
	// The commit itself again, with the files it changed (the cursor is the commit).
	if lp, err := s.hist.Log(string(id), history.LogQuery{Cursor: c.Hash, Limit: 1, Files: true}); err == nil && len(lp.Commits) == 1 {
		c.Files = lp.Commits[0].Files
	}
	shown, err := s.hist.Show(string(id), c.Hash, file, "")
	if err != nil {
		s.fail(w, err)
		return
	}
	diff, err := s.hist.Diff(string(id), history.DiffQuery{To: c.Hash, File: file})
	if err != nil {
		s.fail(w, err)
		return
	}
	body := commitBody{Session: info, Commit: c, File: file, Split: split,
		Changes:  changeViews(string(id), diff.Changes, split),
		Rendered: s.renderFile(string(id), info.Template, file, []byte(shown.Content)),
		Code:     s.codeLinks(id)[c.Short],
	}
	for _, p := range c.Parents {
		body.Parents = append(body.Parents, parentLink{p, commitURL(string(id), p)})
	}
	if len(c.Parents) > 0 {
		body.CompareURL = compareURL(string(id), c.Parents[0], c.Hash)
	}
	self := commitURL(string(id), c.Hash)
	names := append([]string{checkpoint.File}, c.Files...)
	if !slices.Contains(names, file) {
		names = append(names, file)
	}
	sort.Strings(names[1:])
	for _, n := range slices.Compact(names) {
		f := ""
		if n != checkpoint.File {
			f = n
		}
		body.Files = append(body.Files, fileLink{Name: n, URL: withQuery(self, "file", f, "view", q.Get("view")),
			Current: n == file, Changed: slices.Contains(c.Files, n)})
	}
	fileQ := ""
	if file != checkpoint.File {
		fileQ = file
	}
	body.SplitURL = withQuery(self, "file", fileQ, "view", "split")
	body.UnifiedURL = withQuery(self, "file", fileQ)
	s.render(w, http.StatusOK, "commit", page{
		Title:  c.Short + " · " + string(id),
		Nav:    "sessions",
		Crumbs: []crumb{{"Sessions", "/"}, {string(id), sessionURL(string(id))}, {c.Short, ""}},
		Body:   body,
	})
}
