// Package history reads a session's history for people and agents: the sessions of a
// store, the log of a session's commits, a file or one section at a revision, section by
// section diffs, blame (which commit added each line of a section) and the decisions of
// the knowledge graph. cmd/ckpt, the MCP server and the web UI all ask it, so one question
// gets one answer everywhere.
//
// Reading takes a session's shared lock only, never the exclusive one, so a reader holds
// up a checkpoint write for at most one read. Nothing here writes. Every result carries its
// provenance: session, commit, time and section.
//
// All git access goes through the few repo calls in source.go.
package history

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
)

// Sentinel errors, compared with errors.Is. A session that does not exist is
// repo.ErrNotFound, a bad id repo.ErrInvalidSession, an unknown revision
// repo.ErrBadRevision and a file missing at a revision repo.ErrNoFile.
var (
	ErrNoSection = errors.New("no such section")
	ErrBadCursor = errors.New("bad cursor")
	ErrBadQuery  = errors.New("bad query")
)

// SectionError is a section a query names that the template (or the file) lacks; Sections
// are the ids there are, for the hint.
type SectionError struct {
	Query    string
	Where    string // "template six", "checkpoint.md at 1a2b3c4"
	Sections []string
	// Template is true when the session's template has no such section (a mistyped
	// query), false when the template has it but the file at that revision does not.
	Template bool
}

func (e *SectionError) Error() string {
	return fmt.Sprintf("no section %q in %s (sections: %s)", e.Query, e.Where, strings.Join(e.Sections, " "))
}

// Unwrap makes errors.Is(err, ErrNoSection) hold.
func (e *SectionError) Unwrap() error { return ErrNoSection }

// Provenance says where a result comes from.
type Provenance struct {
	Session string    `json:"session"`
	Commit  string    `json:"commit"`
	Time    time.Time `json:"time"`
	Section string    `json:"section,omitempty"`
}

// Reader answers history questions about the sessions of one store. It is safe for
// concurrent use; it keeps each session's repository open between calls (a long-lived
// server answers warm), and notices packs written or removed behind its back.
type Reader struct {
	svc *checkpoint.Service

	mu    sync.Mutex
	repos map[repo.SessionID]*session
	clock uint64 // counts uses, to find the least recently used session
}

// openSessions bounds the sessions a Reader keeps open: each holds go-git's object cache
// (up to 4 MB) and what it read of its history.
const openSessions = 8

// New returns a Reader over the store of svc.
func New(svc *checkpoint.Service) *Reader {
	return &Reader{svc: svc, repos: map[repo.SessionID]*session{}}
}

// Store is the store the reader reads.
func (h *Reader) Store() *repo.Store { return h.svc.Store }

// session is one open session. mu serialises its use: a repo.Repo keeps readers and
// caches that are not safe for concurrent use.
type session struct {
	mu   sync.Mutex
	src  *source
	used uint64 // guarded by Reader.mu
}

// with runs fn on the session id under its shared lock.
func (h *Reader) with(id string, fn func(src *source) error) error {
	sid, err := repo.ParseSessionID(id)
	if err != nil {
		return err
	}
	h.mu.Lock()
	s := h.repos[sid]
	if s == nil {
		s = &session{}
		h.repos[sid] = s
	}
	h.clock++
	s.used = h.clock
	if len(h.repos) > openSessions {
		var oldest repo.SessionID
		for id, o := range h.repos {
			if id != sid && (oldest == "" || o.used < h.repos[oldest].used) {
				oldest = id
			}
		}
		delete(h.repos, oldest) // a call still using it keeps its pointer
	}
	h.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.src == nil {
		src, err := openSource(h.svc.Store, sid)
		if err != nil {
			h.mu.Lock()
			if h.repos[sid] == s {
				delete(h.repos, sid)
			}
			h.mu.Unlock()
			return err
		}
		s.src = src
	}
	unlock, err := s.src.lock()
	if err != nil {
		return err
	}
	defer unlock()
	s.src.refresh()
	return fn(s.src)
}

// peek runs fn on session id under its shared lock without keeping the repository open:
// a listing of a thousand sessions should not keep a thousand readers.
func (h *Reader) peek(id repo.SessionID, fn func(src *source) error) error {
	src, err := openSource(h.svc.Store, id)
	if err != nil {
		return err
	}
	unlock, err := src.lock()
	if err != nil {
		return err
	}
	defer unlock()
	return fn(src)
}

// template loads the session's template.
func (h *Reader) template(src *source) (*checkpoint.Template, error) {
	return h.svc.LoadTemplate(src.template())
}

// sectionOf resolves a section query against a template: an id (🎯, §3), a number (3 is §3
// where the template numbers its sections, else the third section), or the heading text.
func sectionOf(t *checkpoint.Template, query string) (sections.ID, error) {
	q := strings.TrimSpace(query)
	if s := t.Doc.Find(q); s != nil {
		return s.ID, nil
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(q, "#")); err == nil && n >= 1 {
		if s := t.Doc.Section(sections.ID("§" + strconv.Itoa(n))); s != nil {
			return s.ID, nil
		}
		if n <= len(t.Doc.Sections) {
			return t.Doc.Sections[n-1].ID, nil
		}
	}
	return "", &SectionError{Query: query, Where: "template " + t.Name, Sections: ids(t.Doc), Template: true}
}

// ResolveSection turns a section query into the session template's section id.
func (h *Reader) ResolveSection(session, query string) (sections.ID, error) {
	var id sections.ID
	err := h.with(session, func(src *source) error {
		t, err := h.template(src)
		if err != nil {
			return err
		}
		id, err = sectionOf(t, query)
		return err
	})
	return id, err
}

func ids(d *sections.Document) []string {
	out := make([]string, len(d.Sections))
	for i, s := range d.Sections {
		out[i] = string(s.ID)
	}
	return out
}
