package ui

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"
)

// tokenCookie carries the --allow-remote token after the first visit.
const tokenCookie = "ckpt_token"

// csp allows the page's own stylesheet and script and nothing else: no inline script or
// style, no frames, no connections, no forms posting elsewhere.
const csp = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// guard sets the security headers on every answer, then refuses what the UI never
// serves: other methods than GET and HEAD (405), a Host header that does not name this
// server (421, the DNS rebinding guard) and, when a token is set, a request without it
// (403).
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Cache-Control", "no-cache")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			s.plainError(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed: the UI is read-only")
			return
		}
		if !s.opts.Hosts.Allows(r.Host) {
			s.plainError(w, http.StatusMisdirectedRequest, "host "+r.Host+" is not this server")
			return
		}
		if s.opts.Token != "" && !s.tokenOK(w, r) {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// tokenOK checks the token: the cookie, or ?token= which sets the cookie and redirects to
// the same page without it (so the token stays out of history and bookmarks).
func (s *Server) tokenOK(w http.ResponseWriter, r *http.Request) bool {
	if c, err := r.Cookie(tokenCookie); err == nil && same(c.Value, s.opts.Token) {
		return true
	}
	q := r.URL.Query()
	if t := q.Get("token"); t != "" && same(t, s.opts.Token) {
		http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: s.opts.Token, Path: "/",
			HttpOnly: true, SameSite: http.SameSiteStrictMode})
		q.Del("token")
		path := r.URL.Path
		if !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "//") || strings.HasPrefix(path, "/\\") {
			path = "/" // never a redirect to another host
		}
		u := url.URL{Path: path, RawQuery: q.Encode()}
		http.Redirect(w, r, u.String(), http.StatusSeeOther)
		return false
	}
	s.plainError(w, http.StatusForbidden, "token missing or wrong: open the address ckpt ui printed, with ?token=")
	return false
}

func same(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// plainError answers with a one-line text message, for refusals made before any page.
func (s *Server) plainError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(msg + "\n"))
}
