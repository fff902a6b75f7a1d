package ui

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt/internal/gittest"
	"github.com/ckpt-dev/ckpt/repo"
)

// TestPages opens every page of the fixture store and checks what a reader sees.
func TestPages(t *testing.T) {
	f := newStore(t)
	h := f.server(t, "").Handler()
	evil := f.evil.String()
	first := f.heads["alpha"][1].String()
	tests := []struct {
		name, path string
		want       []string
		not        []string
	}{
		{"sessions", "/", []string{"alpha", "beta", "six", "eleven-en", `class="badge open"`, "disk full", "hooks: " + f.code}, nil},
		{"sessions filtered", "/?q=eleven", []string{"beta", "1 of 2 sessions"}, []string{`href="/s/alpha/"`}},
		{"sessions filter matches nothing", "/?q=zzz", []string{"No session matches"}, nil},
		{"timeline", "/s/alpha/", []string{"checkpoint(write)", "checkpoint(full)", `class="full"`, "🎯 Current Task", "/s/alpha/c/" + evil, "code " + f.codeShort(t), "Add the hashing module"}, nil},
		{"timeline by section", "/s/alpha/?section=%F0%9F%94%91", []string{"🔑 Key Decisions"}, nil},
		{"timeline by trigger", "/s/alpha/?trigger=full", []string{"checkpoint(full)"}, []string{"checkpoint(write)"}},
		{"timeline without slash", "/s/alpha", nil, nil},
		{"commit", "/s/alpha/c/" + evil, []string{"What changed in checkpoint.md", "⚠️ Notes &amp; Blockers", "&lt;script&gt;document.title=&#39;pwned&#39;", "blake3", `id="sec-🎯"`}, []string{evilBlock, "<img src=x"}},
		{"commit split", "/s/alpha/c/" + evil + "?view=split", []string{`table class="diff split"`}, []string{evilBlock}},
		{"commit by short hash", "/s/alpha/c/" + evil[:9], []string{evil}, nil},
		{"commit HEAD~1", "/s/alpha/c/HEAD~1", []string{"checkpoint(full)"}, nil},
		{"first commit", "/s/alpha/c/" + f.heads["alpha"][0].String(), []string{"none: the first commit", "added"}, nil},
		{"commit notes file", "/s/alpha/c/" + first + "?file=notes.md", []string{"notes.md at"}, nil},
		{"section history", "/s/alpha/section/%F0%9F%94%91", []string{"🔑 Key Decisions", "Versions, newest first", "blake3"}, nil},
		{"section by title", "/s/alpha/section/Key%20Decisions", []string{"🔑 Key Decisions"}, nil},
		{"section eleven", "/s/beta/section/%C2%A72", []string{"§2 Next Concrete Action", "test in a real browser"}, nil},
		{"blame", "/s/alpha/blame/%F0%9F%94%91", []string{"Blame: 🔑 Key Decisions", "Hash with blake3 everywhere"}, nil},
		{"blame at rev", "/s/alpha/blame/%F0%9F%94%91?rev=" + f.heads["alpha"][2].String(), []string{"Use blake3 instead of md5"}, []string{"Hash with blake3 everywhere"}},
		{"compare form", "/s/alpha/compare", []string{"Compare revisions"}, nil},
		{"compare", "/s/alpha/compare?from=" + f.heads["alpha"][0].String() + "&to=HEAD", []string{"sections differ", "🔑 Key Decisions"}, []string{evilBlock}},
		{"compare one section", "/s/alpha/compare?from=HEAD~3&to=HEAD&section=%F0%9F%94%91", []string{"1 section differs"}, nil},
		{"knowledge", "/knowledge", []string{"Knowledge graph", "<svg", f.first, f.superseding, "supersedes", "pending", "accepted", `href="/s/alpha/c/`}, nil},
		{"knowledge pending", "/knowledge?state=pending", []string{f.superseding}, nil},
		{"search form", "/search", []string{"every version"}, nil},
		{"search current", "/search?q=blake3", []string{"alpha", "<mark>blake3</mark>", "current"}, nil},
		{"search history", "/search?q=xxhash&history=1", []string{"alpha", "/s/alpha/c/" + f.heads["alpha"][1].String()}, nil},
		{"search phrase", "/search?q=%22real+browser%22&s=beta", []string{"beta", "<mark>real browser</mark>"}, nil},
		{"static css", "/static/style.css", []string{"prefers-color-scheme"}, nil},
		{"static js", "/static/keys.js", []string{"keydown"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := get(t, h, tc.path)
			if tc.path == "/s/alpha" {
				if rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != "/s/alpha/" {
					t.Fatalf("status %d location %q, want 301 to /s/alpha/", rec.Code, rec.Header().Get("Location"))
				}
				return
			}
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d, want 200\n%s", rec.Code, rec.Body)
			}
			body := rec.Body.String()
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(body, w) {
					t.Errorf("page has %q", w)
				}
			}
			if t.Failed() {
				t.Logf("body:\n%s", body)
			}
		})
	}
}

func (f *fixture) codeShort(t testing.TB) string {
	t.Helper()
	if f.code == "" {
		t.Skip("git is not installed")
	}
	out, err := os.ReadFile(filepath.Join(f.code, ".git", "refs", "heads", "main"))
	if err != nil {
		t.Fatal(err)
	}
	return string(out[:7])
}

// TestStatusCodes covers the answers that are not pages: bad input, missing things,
// methods, the rebinding guard.
func TestStatusCodes(t *testing.T) {
	f := newStore(t)
	h := f.server(t, "").Handler()
	evil := f.evil.String()
	tests := []struct {
		name, method, path string
		host               string
		want               int
	}{
		{"unknown session", "GET", "/s/nobody/", "", 404},
		{"unknown session commit", "GET", "/s/nobody/c/HEAD", "", 404},
		{"unknown revision", "GET", "/s/alpha/c/0123456789abcdef0123456789abcdef01234567", "", 404},
		{"unknown short revision", "GET", "/s/alpha/c/deadbee", "", 404},
		{"revision past the root", "GET", "/s/alpha/c/HEAD~99", "", 404},
		{"unknown section", "GET", "/s/alpha/section/nonsense", "", 404},
		{"unknown section blame", "GET", "/s/alpha/blame/nonsense", "", 404},
		{"unknown page", "GET", "/nope", "", 404},
		{"unknown static", "GET", "/static/secret.txt", "", 404},
		{"static directory", "GET", "/static/", "", 404},
		{"file missing at revision", "GET", "/s/alpha/c/" + evil + "?file=checkpoint-nope.md", "", 404},
		{"unknown compare revision", "GET", "/s/alpha/compare?from=HEAD&to=cafebabe", "", 404},
		{"bad session id", "GET", "/s/-x/", "", 400},
		{"dot session id", "GET", "/s/..%2Fetc/", "", 400},
		{"file outside the store", "GET", "/s/alpha/c/HEAD?file=..%2F..%2Fetc%2Fpasswd", "", 400},
		{"file not versioned", "GET", "/s/alpha/c/HEAD?file=config", "", 400},
		{"bad view", "GET", "/s/alpha/c/HEAD?view=3d", "", 400},
		{"bad cursor", "GET", "/s/alpha/?cursor=HEAD", "", 400},
		{"cursor of nothing", "GET", "/s/alpha/?cursor=0123456789abcdef0123456789abcdef01234567", "", 400},
		{"bad trigger", "GET", "/s/alpha/?trigger=boom", "", 400},
		{"bad page", "GET", "/?page=0", "", 400},
		{"page past the end", "GET", "/?page=9", "", 400},
		{"control character", "GET", "/s/alpha/compare?from=HEAD%00&to=HEAD", "", 400},
		{"long revision", "GET", "/s/alpha/c/" + strings.Repeat("a", 300), "", 400},
		{"compare half", "GET", "/s/alpha/compare?from=HEAD", "", 400},
		{"bad state", "GET", "/knowledge?state=maybe", "", 400},
		{"bad history flag", "GET", "/search?q=x&history=maybe", "", 400},
		{"bad search session", "GET", "/search?q=x&s=..", "", 400},
		{"unknown search session", "GET", "/search?q=x&s=nobody", "", 404},
		{"post", "POST", "/", "", 405},
		{"put", "PUT", "/s/alpha/", "", 405},
		{"delete", "DELETE", "/s/alpha/c/HEAD", "", 405},
		{"options", "OPTIONS", "/", "", 405},
		{"head", "HEAD", "/s/alpha/", "", 200},
		{"rebinding name", "GET", "/", "evil.example:8765", 421},
		{"rebinding name on a page", "GET", "/s/alpha/", "attacker.test:8765", 421},
		{"wrong port", "GET", "/", "127.0.0.1:9999", 421},
		{"no port", "GET", "/", "127.0.0.1", 421},
		{"empty host", "GET", "/", "", 200}, // "" means testHost below
		{"localhost", "GET", "/", "localhost:8765", 200},
		{"ipv6 loopback", "GET", "/", "[::1]:8765", 200},
		{"lan address", "GET", "/", "192.168.1.10:8765", 421},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(t, h, tc.method, tc.path, func(r *http.Request) {
				if tc.host != "" {
					r.Host = tc.host
				}
			})
			if rec.Code != tc.want {
				t.Fatalf("%s %s (Host %s): status %d, want %d\n%s", tc.method, tc.path, tc.host, rec.Code, tc.want, rec.Body)
			}
			if rec.Code == http.StatusMethodNotAllowed && rec.Header().Get("Allow") != "GET, HEAD" {
				t.Errorf("Allow = %q", rec.Header().Get("Allow"))
			}
			if tc.method == "HEAD" && rec.Body.Len() != 0 {
				// httptest's recorder keeps what the handler wrote; a real server drops it.
				t.Logf("HEAD body of %d bytes (dropped by net/http)", rec.Body.Len())
			}
		})
	}
}

// TestSecurityHeaders checks the headers on pages, errors, refusals and assets.
func TestSecurityHeaders(t *testing.T) {
	f := newStore(t)
	h := f.server(t, "").Handler()
	for _, path := range []string{"/", "/s/alpha/c/HEAD", "/s/nobody/", "/static/style.css", "/knowledge"} {
		for _, host := range []string{testHost, "evil.example:8765"} {
			rec := do(t, h, "GET", path, func(r *http.Request) { r.Host = host })
			hd := rec.Header()
			csp := hd.Get("Content-Security-Policy")
			if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
				t.Errorf("%s (%s): CSP %q", path, host, csp)
			}
			if hd.Get("X-Content-Type-Options") != "nosniff" || hd.Get("Referrer-Policy") != "no-referrer" || hd.Get("X-Frame-Options") != "DENY" {
				t.Errorf("%s (%s): headers %v", path, host, hd)
			}
		}
	}
}

// TestToken: beyond loopback every request needs the token; ?token= once leaves a cookie
// and redirects to the same page without the token.
func TestToken(t *testing.T) {
	f := newStore(t)
	const token = "0123456789abcdef0123456789abcdef"
	h := f.server(t, token).Handler()
	if rec := get(t, h, "/"); rec.Code != http.StatusForbidden {
		t.Fatalf("no token: status %d, want 403", rec.Code)
	}
	if rec := get(t, h, "/s/alpha/?token=wrong"); rec.Code != http.StatusForbidden {
		t.Fatalf("wrong token: status %d, want 403", rec.Code)
	}
	rec := get(t, h, "/s/alpha/?section=%F0%9F%94%91&token="+token)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("token in query: status %d, want 303", rec.Code)
	}
	loc := rec.Header().Get("Location")
	if strings.Contains(loc, token) || !strings.HasPrefix(loc, "/s/alpha/?") || !strings.Contains(loc, "section=") {
		t.Fatalf("redirect to %q", loc)
	}
	cookies := rec.Result().Cookies()
	if len(cookies) != 1 || cookies[0].Value != token || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookies %v", cookies)
	}
	rec = do(t, h, "GET", "/s/alpha/", func(r *http.Request) { r.AddCookie(cookies[0]) })
	if rec.Code != http.StatusOK {
		t.Fatalf("with the cookie: status %d, want 200", rec.Code)
	}
	rec = do(t, h, "GET", "/", func(r *http.Request) { r.AddCookie(&http.Cookie{Name: tokenCookie, Value: "nope"}) })
	if rec.Code != http.StatusForbidden {
		t.Fatalf("wrong cookie: status %d, want 403", rec.Code)
	}
	// A path that would make the redirect leave the server goes to / instead.
	rec = do(t, h, "GET", "/?token="+token, func(r *http.Request) { r.URL.Path = "//evil.example/x" })
	if loc := rec.Header().Get("Location"); rec.Code != http.StatusSeeOther || loc != "/" {
		t.Fatalf("redirect of //evil.example/x: %d %q", rec.Code, loc)
	}
	// The rebinding guard comes first: a token does not make another host acceptable.
	rec = do(t, h, "GET", "/?token="+token, func(r *http.Request) { r.Host = "evil.example:8765" })
	if rec.Code != http.StatusMisdirectedRequest {
		t.Fatalf("token from another host: status %d, want 421", rec.Code)
	}
}

// TestNoWrites opens every page and checks that no file of the sessions or the knowledge
// repository changed, appeared or disappeared.
func TestNoWrites(t *testing.T) {
	f := newStore(t)
	h := f.server(t, "").Handler()
	before := snapshot(t, f.home)
	for _, path := range []string{"/", "/s/alpha/", "/s/alpha/c/HEAD", "/s/alpha/c/HEAD?view=split", "/s/alpha/section/%F0%9F%94%91",
		"/s/alpha/blame/%F0%9F%94%91", "/s/alpha/compare?from=HEAD~2&to=HEAD", "/knowledge", "/search?q=blake3", "/search?q=xxhash&history=1", "/s/beta/",
		"/s/beta/c/HEAD", "/s/nobody/", "/s/alpha/c/HEAD?file=../x"} {
		get(t, h, path)
	}
	after := snapshot(t, f.home)
	for p, s := range before {
		if after[p] != s {
			t.Errorf("%s changed: %s -> %s", p, s, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s appeared", p)
		}
	}
}

// snapshot maps every file under sessions/ and knowledge/ to its size, mode, time and hash.
func snapshot(t *testing.T, home string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, top := range []string{"sessions", "knowledge"} {
		err := filepath.WalkDir(filepath.Join(home, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			sum := ""
			if d.Type().IsRegular() {
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				sum = fmt.Sprintf("%x", sha256.Sum256(b))
			}
			out[p] = fmt.Sprintf("%v %d %s %s", fi.Mode(), fi.Size(), fi.ModTime().Format("15:04:05.000000000"), sum)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestBusy: a session whose writer holds its lock past the timeout is a 503, not a hang.
func TestBusy(t *testing.T) {
	f := newStore(t)
	h := f.server(t, "").Handler()
	unlock, err := f.store().Lock("alpha", true)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if rec := get(t, h, "/s/alpha/"); rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("status %d, want 503 with Retry-After", rec.Code)
	}
	if rec := get(t, h, "/s/beta/"); rec.Code != http.StatusOK {
		t.Fatalf("another session: status %d, want 200", rec.Code)
	}
	// The list shows the busy session without its head rather than failing.
	if rec := get(t, h, "/"); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `href="/s/alpha/"`) {
		t.Fatalf("sessions page: status %d", rec.Code)
	}
}

// TestEmptyStore: a store without sessions or knowledge repository serves its pages.
func TestEmptyStore(t *testing.T) {
	f := newFixture(t)
	h := f.server(t, "").Handler()
	for path, want := range map[string]string{"/": "No sessions yet", "/knowledge": "No decisions", "/search?q=x": "Nothing found"} {
		rec := get(t, h, path)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("%s: status %d, body lacks %q\n%s", path, rec.Code, want, rec.Body)
		}
	}
	if entries, err := os.ReadDir(f.home); err != nil || len(entries) != 0 {
		t.Errorf("the UI wrote into an empty store: %v %v", entries, err)
	}
}

func TestHostPolicy(t *testing.T) {
	loop := HostPolicy{Port: "8080", Loopback: true}
	all := HostPolicy{Port: "8080", Names: []string{"box.lan"}}
	one := HostPolicy{Port: "8080", IP: net.ParseIP("192.168.1.5")}
	tests := []struct {
		p    HostPolicy
		host string
		want bool
	}{
		{loop, "127.0.0.1:8080", true},
		{loop, "127.1.2.3:8080", true},
		{loop, "localhost:8080", true},
		{loop, "LOCALHOST:8080", true},
		{loop, "[::1]:8080", true},
		{loop, "127.0.0.1:8081", false},
		{loop, "127.0.0.1", false},
		{loop, "evil.example:8080", false},
		{loop, "localhost.evil.example:8080", false},
		{loop, "192.168.1.5:8080", false},
		{loop, ":8080", false},
		{loop, "", false},
		{all, "192.168.1.5:8080", true},
		{all, "box.lan:8080", true},
		{all, "evil.example:8080", false},
		{one, "192.168.1.5:8080", true},
		{one, "192.168.1.6:8080", false},
		{one, "127.0.0.1:8080", true},
		{HostPolicy{Port: "80", Loopback: true}, "localhost", true},
	}
	for _, tc := range tests {
		if got := tc.p.Allows(tc.host); got != tc.want {
			t.Errorf("%+v Allows(%q) = %v, want %v", tc.p, tc.host, got, tc.want)
		}
	}
}

func TestListen(t *testing.T) {
	tests := []struct {
		addr   string
		remote bool
		want   error
	}{
		{"127.0.0.1:0", false, nil},
		{"localhost:0", false, nil},
		{"[::1]:0", false, nil},
		{"0.0.0.0:0", false, ErrNotLoopback},
		{":0", false, ErrNotLoopback},
		{"192.0.2.1:0", false, ErrNotLoopback},
		{"example.com:0", false, ErrNotLoopback},
		{"127.0.0.1", false, ErrBadAddr},
		{"127.0.0.1:http", false, ErrBadAddr},
		{"127.0.0.1:70000", false, ErrBadAddr},
		{"0.0.0.0:0", true, nil},
	}
	for _, tc := range tests {
		l, err := Listen(tc.addr, tc.remote)
		if tc.want == nil {
			if err != nil {
				if strings.Contains(tc.addr, "::1") && strings.Contains(err.Error(), "assign") {
					continue // no IPv6 loopback on this machine
				}
				t.Errorf("Listen(%q, %v): %v", tc.addr, tc.remote, err)
				continue
			}
			u, perr := url.Parse(l.URL())
			if perr != nil || u.Port() == "0" || u.Path != "/" || l.Remote != tc.remote {
				t.Errorf("Listen(%q): URL %q remote %v", tc.addr, l.URL(), l.Remote)
			}
			if !l.Hosts.Allows(u.Host) {
				t.Errorf("Listen(%q): its own URL's host %q is refused", tc.addr, u.Host)
			}
			l.Close()
			continue
		}
		if !errors.Is(err, tc.want) {
			t.Errorf("Listen(%q, %v) = %v, want %v", tc.addr, tc.remote, err, tc.want)
		}
		if l != nil {
			l.Close()
		}
	}
	if l, err := Listen("localhost:0", false); err == nil {
		if !strings.HasPrefix(l.URL(), "http://127.0.0.1:") {
			t.Errorf("localhost binds %s, want 127.0.0.1", l.URL())
		}
		l.Close()
	}
}

func TestSessionIDsNeverReachTheFileSystem(t *testing.T) {
	f := newStore(t)
	h := f.server(t, "").Handler()
	for _, id := range []string{"..", ".", ".git", "a/b", "alpha/../beta", "%2e%2e", "a b", strings.Repeat("a", 129)} {
		rec := get(t, h, "/s/"+url.PathEscape(id)+"/")
		// The mux cleans "." and ".." away with a redirect to the cleaned path.
		if rec.Code != http.StatusBadRequest && rec.Code != http.StatusNotFound && rec.Code != http.StatusTemporaryRedirect {
			t.Errorf("session %q: status %d", id, rec.Code)
		}
		if _, err := repo.ParseSessionID(id); err == nil {
			t.Errorf("%q is a valid id", id)
		}
	}
}

// TestCodeLinksFollowNewCommits: a code commit made while the UI runs shows on the next
// page, without waiting for the cache.
func TestCodeLinksFollowNewCommits(t *testing.T) {
	f := newStore(t)
	if f.code == "" {
		t.Skip("git is not installed")
	}
	h := f.server(t, "").Handler()
	first := f.heads["alpha"][1].String()
	if body := get(t, h, "/s/alpha/").Body.String(); strings.Contains(body, "Second code commit") {
		t.Fatal("the code commit is there before it is made")
	}
	gittest.Git(t, f.code, "commit", "-q", "--allow-empty", "-m", "Second code commit\n\nCkpt-Checkpoint: alpha@"+first[:7])
	body := get(t, h, "/s/alpha/").Body.String()
	if !strings.Contains(body, "Second code commit") {
		t.Fatalf("the new code commit is not on the timeline:\n%s", body)
	}
	if !strings.Contains(get(t, h, "/s/alpha/c/"+first).Body.String(), "Second code commit") {
		t.Error("the new code commit is not on its checkpoint's page")
	}
}
