package ui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/search"
)

//go:embed assets
var assets embed.FS

// views are the page templates and the static files. The layout is parsed at start; each
// page's template the first time it is shown, so starting costs one parse, not ten.
type views struct {
	base   *template.Template
	mu     sync.Mutex
	pages  map[string]*template.Template
	static map[string]asset
}

type asset struct {
	data  []byte
	ctype string
	etag  string
}

// pageNames are the templates under assets/, each rendered inside base.html.
var pageNames = []string{"sessions", "timeline", "commit", "section", "blame", "compare", "knowledge", "search", "error"}

func loadViews() (*views, error) {
	base, err := template.New("base.html").Funcs(funcs).ParseFS(assets, "assets/base.html", "assets/parts.html")
	if err != nil {
		return nil, fmt.Errorf("ui template: %w", err)
	}
	v := &views{base: base, pages: map[string]*template.Template{}, static: map[string]asset{}}
	files, err := fs.Glob(assets, "assets/static/*")
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		b, err := assets.ReadFile(f)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		v.static[path.Base(f)] = asset{data: b, ctype: mime.TypeByExtension(path.Ext(f)), etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	}
	return v, nil
}

// page returns the template of a page, parsing it the first time.
func (v *views) page(name string) (*template.Template, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if t := v.pages[name]; t != nil {
		return t, nil
	}
	t, err := template.Must(v.base.Clone()).ParseFS(assets, "assets/"+name+".html")
	if err != nil {
		return nil, fmt.Errorf("ui template %s: %w", name, err)
	}
	v.pages[name] = t
	return t, nil
}

// page is what base.html needs around a page's content.
type page struct {
	Title string
	// Nav is the top navigation entry that is current: sessions, knowledge or search.
	Nav    string
	Crumbs []crumb
	// Query fills the search box.
	Query      string
	Prev, Next string // rel=prev / rel=next links, for paging and the n/p keys
	Body       any
}

type crumb struct{ Label, URL string }

// render writes a page. It renders into a buffer first, so a template error is a clean
// 500 and not half a page.
func (s *Server) render(w http.ResponseWriter, code int, name string, p page) {
	var buf bytes.Buffer
	t, err := s.view.page(name)
	if err == nil {
		err = t.Execute(&buf, p)
	}
	if err != nil {
		s.opts.Log("ui: render %s: %v", name, err)
		s.plainError(w, http.StatusInternalServerError, "internal error rendering the page")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// static serves the embedded stylesheet and script: a fixed set of names, never a
// directory and never a file from disk.
func (s *Server) static(w http.ResponseWriter, r *http.Request) {
	a, ok := s.view.static[r.PathValue("name")]
	if !ok {
		s.notFound(w, r)
		return
	}
	w.Header().Set("Content-Type", a.ctype)
	w.Header().Set("ETag", a.etag)
	w.Header().Set("Cache-Control", "no-cache")
	if r.Header.Get("If-None-Match") == a.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	_, _ = w.Write(a.data)
}

// Errors a handler returns to say what was wrong with the request itself.
var (
	errBadInput = errors.New("bad request")
	errNotFound = errors.New("not found")
)

func badInput(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errBadInput, fmt.Sprintf(format, args...))
}

// statusOf maps an error to an HTTP status: the request's fault (400), something that
// is not there (404), a session busy past the lock timeout (503), anything else (500).
func statusOf(err error) int {
	var secErr *search.SectionError
	switch {
	case errors.Is(err, errBadInput), errors.Is(err, repo.ErrInvalidSession), errors.Is(err, repo.ErrInvalidName),
		errors.Is(err, search.ErrEmptyQuery), isHistoryBadInput(err):
		return http.StatusBadRequest
	case errors.Is(err, errNotFound), errors.Is(err, repo.ErrNotFound), errors.Is(err, repo.ErrBadRevision),
		errors.Is(err, repo.ErrNoFile), errors.As(err, &secErr), isHistoryNotFound(err):
		return http.StatusNotFound
	case errors.Is(err, repo.ErrBusy):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

type errorBody struct {
	Code    int
	Status  string
	Message string
}

// fail renders the error page for err.
func (s *Server) fail(w http.ResponseWriter, err error) {
	code := statusOf(err)
	msg := err.Error()
	if code == http.StatusInternalServerError {
		s.opts.Log("ui: %v", err)
		msg = "something went wrong reading the store; ckpt ui's standard error says what"
	}
	if code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	msg = strings.TrimPrefix(msg, errBadInput.Error()+": ")
	msg = strings.TrimPrefix(msg, errNotFound.Error()+": ")
	s.render(w, code, "error", page{Title: http.StatusText(code), Body: errorBody{code, http.StatusText(code), msg}})
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	s.fail(w, fmt.Errorf("%w: no page at %s", errNotFound, r.URL.Path))
}

// sessionID reads and validates the {session} of a URL; a bad one is answered with 400.
func (s *Server) sessionID(w http.ResponseWriter, r *http.Request) (repo.SessionID, bool) {
	id, err := repo.ParseSessionID(r.PathValue("session"))
	if err != nil {
		s.fail(w, err)
		return "", false
	}
	return id, true
}

// URLs of the pages. Every segment is escaped: section ids are emoji or §N.
func sessionURL(id string) string { return "/s/" + url.PathEscape(id) + "/" }
func commitURL(id, rev string) string {
	return "/s/" + url.PathEscape(id) + "/c/" + url.PathEscape(rev)
}
func sectionURL(id, sec string) string {
	return "/s/" + url.PathEscape(id) + "/section/" + url.PathEscape(sec)
}
func blameURL(id, sec string) string {
	return "/s/" + url.PathEscape(id) + "/blame/" + url.PathEscape(sec)
}
func compareURL(id, from, to string) string {
	return "/s/" + url.PathEscape(id) + "/compare?" + url.Values{"from": {from}, "to": {to}}.Encode()
}

// withQuery adds parameters to a URL that has none or some.
func withQuery(u string, kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	if len(q) == 0 {
		return u
	}
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	return u + sep + q.Encode()
}

var funcs = template.FuncMap{
	"short": func(h string) string {
		if len(h) > 7 {
			return h[:7]
		}
		return h
	},
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.Local().Format("2006-01-02 15:04")
	},
	"iso": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339)
	},
	"sessionURL": sessionURL,
	"commitURL":  commitURL,
	"sectionURL": sectionURL,
	"blameURL":   blameURL,
	"compareURL": compareURL,
	"withQuery":  withQuery,
	"anchor":     sectionAnchor,
	"plural": func(n int, one, many string) string {
		if n == 1 {
			return fmt.Sprintf("%d %s", n, one)
		}
		return fmt.Sprintf("%d %s", n, many)
	},
}

// sectionAnchor is the id of a section's element on a commit page: "sec-" and the
// section id, with characters that are awkward in a fragment replaced.
func sectionAnchor(id string) string {
	return "sec-" + strings.Map(func(r rune) rune {
		if r <= ' ' || strings.ContainsRune(`"'<>#%`, r) {
			return '_'
		}
		return r
	}, id)
}

func pathEscape(s string) string { return url.PathEscape(s) }
