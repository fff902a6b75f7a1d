package ui

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/ckpt-dev/ckpt/history"
	"github.com/ckpt-dev/ckpt/hooks"
	"github.com/ckpt-dev/ckpt/repo"
)

// sessionsPerPage bounds the sessions page; a filter narrows it first.
const sessionsPerPage = 100

type sessionsBody struct {
	Filter  string
	Rows    []history.Session
	Total   int // sessions in the store
	Matched int // sessions the filter kept
	Page    int
	Pages   int
	Home    string
}

// sessionsPage lists the sessions, a hundred a page: template, head, last update and its
// trigger, pending notes, breaker and bound work trees. ?q= keeps sessions whose id,
// template, work tree or bound work tree contains the text; ?page= pages.
func (s *Server) sessionsPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	filter := strings.TrimSpace(q.Get("q"))
	if err := checkParam("q", filter); err != nil {
		s.fail(w, err)
		return
	}
	pageNo, err := pageParam(q.Get("page"))
	if err != nil {
		s.fail(w, err)
		return
	}
	ids, err := s.opts.Store.SessionIDs()
	if err != nil {
		s.fail(w, err)
		return
	}
	body := sessionsBody{Filter: filter, Total: len(ids), Page: pageNo, Home: s.opts.Store.Home}
	kept := ids
	if filter != "" {
		if kept, err = s.filterSessions(ids, strings.ToLower(filter)); err != nil {
			s.fail(w, err)
			return
		}
	}
	body.Matched = len(kept)
	body.Pages = max(1, (len(kept)+sessionsPerPage-1)/sessionsPerPage)
	if pageNo > body.Pages {
		s.fail(w, badInput("page %d: there are %d", pageNo, body.Pages))
		return
	}
	lo := (pageNo - 1) * sessionsPerPage
	if body.Rows, err = s.sessionRows(kept[lo:min(len(kept), lo+sessionsPerPage)]); err != nil {
		s.fail(w, err)
		return
	}
	p := page{Title: "Sessions", Nav: "sessions", Body: body}
	if pageNo > 1 {
		p.Prev = withQuery("/", "q", filter, "page", strconv.Itoa(pageNo-1))
	}
	if pageNo < body.Pages {
		p.Next = withQuery("/", "q", filter, "page", strconv.Itoa(pageNo+1))
	}
	s.render(w, http.StatusOK, "sessions", p)
}

// filterSessions keeps the sessions whose id, template, work tree or bound git work tree
// contains needle: what the repositories' config and the hooks' state say, no history.
func (s *Server) filterSessions(ids []repo.SessionID, needle string) ([]repo.SessionID, error) {
	st, err := hooks.LoadState(s.opts.Store.Home)
	if err != nil && !errors.Is(err, hooks.ErrCorruptState) {
		return nil, err
	}
	var out []repo.SessionID
	for _, id := range ids {
		fields := []string{string(id)}
		if r, err := s.opts.Store.Open(id); err == nil {
			fields = append(fields, r.Template(), r.WorkDir)
		}
		if st != nil && st.Sessions[string(id)] != nil {
			fields = append(fields, st.Sessions[string(id)].Bound)
		}
		for _, f := range fields {
			if strings.Contains(strings.ToLower(f), needle) {
				out = append(out, id)
				break
			}
		}
	}
	return out, nil
}

// sessionRows summarises the sessions of one page. history.Sessions reads every session of
// the store (a thousand head commits and notes files before the first byte of the page);
// the page shows a hundred, so for each of those the UI asks history for the newest commit
// only, and reads the template, pending notes and hooks' state as history.Sessions does.
func (s *Server) sessionRows(ids []repo.SessionID) ([]history.Session, error) {
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = string(id)
	}
	st, err := hooks.LoadSessions(s.opts.Store.Home, names)
	if err != nil && !errors.Is(err, hooks.ErrCorruptState) {
		return nil, err
	}
	out := make([]history.Session, 0, len(ids))
	for _, id := range ids {
		ss := history.Session{ID: string(id)}
		if st != nil {
			if hs := st.Sessions[string(id)]; hs != nil {
				ss.Bound = hs.Bound
				ss.Breaker = history.Breaker{Open: hs.Breaker.Open, Failures: hs.Breaker.Failures, Reason: hs.Breaker.Reason}
			}
		}
		r, err := s.opts.Store.Open(id)
		if err != nil {
			out = append(out, ss) // a damaged session is listed with what could be read
			continue
		}
		ss.Template, ss.Path, ss.Worktree = r.Template(), r.Dir, r.WorkDir
		// A session busy past the lock timeout is listed without its head, not a 503 for
		// the whole list.
		if lp, err := s.hist.Log(string(id), history.LogQuery{Limit: 1}); err == nil && len(lp.Commits) == 1 {
			c := lp.Commits[0]
			ss.Head, ss.Time, ss.Trigger, ss.Full, ss.Subject = c.Hash, c.Time, c.Trigger, c.Full, c.Subject
		}
		if n, err := s.sync.PendingNotes(r); err == nil {
			ss.PendingNotes = n
		}
		out = append(out, ss)
	}
	return out, nil
}

// pageParam reads ?page= (1 when absent).
func pageParam(v string) (int, error) {
	if v == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 1_000_000 {
		return 0, badInput("page %q: want a number from 1", cut(v, 20))
	}
	return n, nil
}
