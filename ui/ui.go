// Package ui is ckpt's local, read-only history browser: an HTTP server that shows the
// sessions of a store, each session's timeline, a commit's checkpoint with its section
// diffs, one section across time with blame, two revisions side by side, the knowledge
// graph and search results, as plain server-rendered HTML (html/template and goldmark;
// no JavaScript framework, a small script for keyboard navigation only).
//
// It never writes the store: history is read through package history, which takes each
// repository's shared lock. It answers only GET and HEAD, checks the Host header against
// the address it serves (DNS rebinding), asks for a token when it listens beyond
// loopback, and never opens a path taken from a URL: session ids and file names are
// validated before they reach the store, and its own assets are embedded.
//
// The package never prints; Options.Log receives the errors a page could not show.
package ui

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/history"
	"github.com/ckpt-dev/ckpt/internal/config"
	"github.com/ckpt-dev/ckpt/repo"
	ckptsync "github.com/ckpt-dev/ckpt/sync"
)

// Options configure a Server.
type Options struct {
	Store  *repo.Store
	Config *config.Config
	// Token, when set, must come with every request: as ?token= once (the server answers
	// with a cookie and a redirect that drops it from the address) or as that cookie.
	Token string
	// Hosts is the Host header policy (Listener.Hosts).
	Hosts HostPolicy
	// Log receives errors that became a 500 page; nil drops them.
	Log func(format string, args ...any)
}

// Server serves the UI of one store.
type Server struct {
	opts Options
	svc  *checkpoint.Service
	sync *ckptsync.Service
	hist *history.Reader
	view *views
	mux  *http.ServeMux
	code codeCache
}

// New returns a server over the store. It reads nothing from the store until a page is
// asked for, so it starts in the same time on one session or on thousands.
func New(o Options) (*Server, error) {
	if o.Store == nil {
		return nil, errors.New("ui: no store")
	}
	if o.Config == nil {
		o.Config = &config.Config{}
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	v, err := loadViews()
	if err != nil {
		return nil, err
	}
	svc := checkpoint.New(o.Store, o.Config)
	s := &Server{opts: o, svc: svc, sync: ckptsync.New(svc), hist: history.New(svc), view: v}
	s.routes()
	return s, nil
}

// routes maps every URL the UI has. Patterns are GET only (GET patterns match HEAD too);
// the guard answers any other method with 405 before the mux sees it.
func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", s.sessionsPage)
	m.HandleFunc("GET /static/{name}", s.static)
	m.HandleFunc("GET /knowledge", s.knowledgePage)
	m.HandleFunc("GET /search", s.searchPage)
	m.HandleFunc("GET /s/{session}", s.redirectSlash)
	m.HandleFunc("GET /s/{session}/{$}", s.timelinePage)
	m.HandleFunc("GET /s/{session}/c/{rev}", s.commitPage)
	m.HandleFunc("GET /s/{session}/section/{section}", s.sectionPage)
	m.HandleFunc("GET /s/{session}/blame/{section}", s.blamePage)
	m.HandleFunc("GET /s/{session}/compare", s.comparePage)
	m.HandleFunc("GET /", s.notFound)
	s.mux = m
}

// Handler is the whole UI behind its guard (headers, method, Host, token).
func (s *Server) Handler() http.Handler { return s.guard(s.mux) }

// Serve answers requests on l until ctx is done, then shuts down: requests in flight get
// a few seconds to finish.
func (s *Server) Serve(ctx context.Context, l *Listener) error {
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(l) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := hs.Shutdown(sctx)
	if e := <-done; !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	return err
}

func (s *Server) redirectSlash(w http.ResponseWriter, r *http.Request) {
	id, ok := s.sessionID(w, r)
	if !ok {
		return
	}
	http.Redirect(w, r, sessionURL(string(id)), http.StatusMovedPermanently)
}
