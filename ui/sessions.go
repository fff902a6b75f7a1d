package ui

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/ckpt-dev/ckpt/history"
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

// sessionsPage lists every session: template, head, last update and its trigger, pending
// notes, breaker and bound work trees. ?q= keeps sessions whose id, template, work tree,
// bound work tree, last trigger or last subject contains the text; ?page= pages.
func (s *Server) sessionsPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	filter := strings.TrimSpace(q.Get("q"))
	if len(filter) > 200 {
		s.fail(w, badInput("filter longer than 200 bytes"))
		return
	}
	pageNo, err := pageParam(q.Get("page"))
	if err != nil {
		s.fail(w, err)
		return
	}
	all, err := s.hist.Sessions()
	if err != nil {
		s.fail(w, err)
		return
	}
	body := sessionsBody{Filter: filter, Total: len(all), Page: pageNo, Home: s.opts.Store.Home}
	var kept []history.Session
	needle := strings.ToLower(filter)
	for _, ss := range all {
		if needle == "" || sessionMatches(ss, needle) {
			kept = append(kept, ss)
		}
	}
	body.Matched = len(kept)
	body.Pages = max(1, (len(kept)+sessionsPerPage-1)/sessionsPerPage)
	if pageNo > body.Pages {
		s.fail(w, badInput("page %d: there are %d", pageNo, body.Pages))
		return
	}
	lo := (pageNo - 1) * sessionsPerPage
	body.Rows = kept[lo:min(len(kept), lo+sessionsPerPage)]
	p := page{Title: "Sessions", Nav: "sessions", Body: body}
	if pageNo > 1 {
		p.Prev = withQuery("/", "q", filter, "page", strconv.Itoa(pageNo-1))
	}
	if pageNo < body.Pages {
		p.Next = withQuery("/", "q", filter, "page", strconv.Itoa(pageNo+1))
	}
	s.render(w, http.StatusOK, "sessions", p)
}

func sessionMatches(ss history.Session, needle string) bool {
	for _, f := range []string{ss.ID, ss.Template, ss.Worktree, ss.Bound, ss.Trigger, ss.Subject} {
		if strings.Contains(strings.ToLower(f), needle) {
			return true
		}
	}
	return false
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
