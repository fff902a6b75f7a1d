package ui

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// chromium finds a Chromium to drive. When there is none and the test runs as root on a
// Debian-like system, it installs Debian's package, as .ci/run does; only when that is
// impossible does the browser test skip, loudly.
func chromium(t *testing.T) string {
	t.Helper()
	find := func() string {
		if p := os.Getenv("CKPT_CHROMIUM"); p != "" {
			return p
		}
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
			if p, err := exec.LookPath(name); err == nil {
				return p
			}
		}
		return ""
	}
	if p := find(); p != "" {
		return p
	}
	why := "chromium is not installed"
	if apt, err := exec.LookPath("apt-get"); err == nil && os.Geteuid() == 0 {
		t.Log("chromium is missing: installing Debian's package (apt-get install chromium)")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		for _, args := range [][]string{{"install", "-y", "-qq", "chromium"}, {"update", "-qq"}, {"install", "-y", "-qq", "chromium"}} {
			cmd := exec.CommandContext(ctx, apt, args...)
			cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
			out, err := cmd.CombinedOutput()
			if err == nil && args[0] == "install" {
				break
			}
			if err != nil {
				why = fmt.Sprintf("apt-get %s: %v: %s", args[0], err, lastLine(out))
			}
		}
		if p := find(); p != "" {
			return p
		}
	}
	msg := "BROWSER TEST SKIPPED: " + why + "; install Debian's chromium (apt-get install chromium) or set CKPT_CHROMIUM"
	fmt.Fprintln(os.Stderr, "\n*** "+msg+" ***")
	t.Skip(msg)
	return ""
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// browser starts headless Chromium with a fresh profile and no network beyond loopback.
func browser(t *testing.T) context.Context {
	t.Helper()
	exe := chromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	if err := chromedp.Do(bctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start %s: %v", exe, err)
	}
	return bctx
}

// tab is a browser tab on a running ckpt ui, with the helpers the test speaks in.
type tab struct {
	t    *testing.T
	ctx  context.Context
	base string
	shot string // where screenshots go
}

func (b *tab) must(err error, what string) {
	b.t.Helper()
	if err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

func (b *tab) open(path string) {
	b.t.Helper()
	b.must(chromedp.Do(b.ctx, chromedp.Navigate(b.base+path), chromedp.WaitVisible(chromedp.CSS("footer.foot"))), "open "+path)
}

func (b *tab) click(sel string) {
	b.t.Helper()
	before := b.location()
	b.must(chromedp.Do(b.ctx, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible)), "click "+sel)
	b.waitLeave(before)
}

// waitLeave waits until the tab has left the page at url and the new page is loaded.
func (b *tab) waitLeave(url string) {
	b.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for b.location() == url {
		if time.Now().After(deadline) {
			b.t.Fatalf("still on %s", url)
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.must(chromedp.Do(b.ctx, chromedp.WaitVisible(chromedp.CSS("footer.foot"))), "load after "+url)
}

func (b *tab) location() string {
	b.t.Helper()
	loc, err := chromedp.Run(b.ctx, chromedp.Location())
	b.must(err, "location")
	return loc
}

// text is what a reader sees of the page's main element.
func (b *tab) text() string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Evaluate[string]("document.querySelector('main').innerText"))
	b.must(err, "read text")
	return s
}

func (b *tab) eval(js string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](js))
	b.must(err, js)
	return s
}

func (b *tab) sees(what ...string) {
	b.t.Helper()
	txt := b.text()
	for _, w := range what {
		if !strings.Contains(txt, w) {
			b.t.Errorf("%s: the page does not show %q; it shows:\n%s", b.location(), w, txt)
		}
	}
}

func (b *tab) screenshot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	b.must(err, "screenshot "+name)
	if !bytes.HasPrefix(png, []byte("\x89PNG")) {
		b.t.Fatalf("screenshot %s is not a PNG", name)
	}
	b.must(os.WriteFile(filepath.Join(b.shot, name+".png"), png, 0o644), "save screenshot")
}

func (b *tab) key(k string) {
	b.t.Helper()
	b.must(chromedp.Do(b.ctx, chromedp.KeyEvent(k)), "key "+k)
}

// TestBrowser drives headless Chromium through the UI of a store the test makes: every
// page, the links from sessions to a commit to a section history, the visible text, the
// keyboard, and a script in a checkpoint that must not run. Screenshots of each page go
// to the test's temp dir (and to CKPT_UI_SCREENSHOTS when set).
func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	f := newStore(t)
	ctx := browser(t)
	l, err := Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Store: f.store(), Hosts: l.Hosts, Log: func(format string, args ...any) { t.Logf("server: "+format, args...) }})
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(sctx, l) }()
	defer func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	shots := t.TempDir()
	b := &tab{t: t, ctx: ctx, base: strings.TrimSuffix(l.URL(), "/"), shot: shots}
	defer func() {
		if dir := os.Getenv("CKPT_UI_SCREENSHOTS"); dir != "" {
			copyDir(t, shots, dir)
		}
		t.Logf("screenshots in %s", shots)
	}()

	// Sessions → a session's timeline → its newest commit → a section's history → blame.
	b.open("/")
	b.sees("Sessions", "alpha", "beta", "eleven-en", "open")
	b.screenshot("sessions")
	b.click(`a[href="/s/alpha/"]`)
	b.sees("alpha", "checkpoint(full)", "full checkpoint", "code "+f.codeShort(t), "🔑 Key Decisions")
	if n := b.eval(`String(document.querySelectorAll("ol.timeline li.full").length)`); n == "0" {
		t.Error("the timeline shows no full checkpoint")
	}
	b.screenshot("timeline")
	b.click(`ol.timeline li:first-child a.hash`)
	if loc := b.location(); !strings.HasSuffix(loc, "/s/alpha/c/"+f.evil.String()) {
		t.Fatalf("the newest commit's link went to %s", loc)
	}
	// The script the agent pasted shows as text and never runs.
	b.sees("What changed in checkpoint.md", evilBlock, "<b>bold?</b>")
	if title := b.eval("document.title"); title == "pwned" || !strings.Contains(title, "alpha") {
		t.Errorf("document.title = %q: a script in the checkpoint ran", title)
	}
	if v := b.eval("String(window.ckptPwned)"); v != "undefined" {
		t.Errorf("window.ckptPwned = %s: a script in the checkpoint ran", v)
	}
	if n := b.eval(`String(document.querySelectorAll("main script, main img").length)`); n != "0" {
		t.Errorf("%s script or img elements inside main", n)
	}
	b.screenshot("commit")
	b.click(`main a[href$="?view=split"]`)
	if n := b.eval(`String(document.querySelectorAll("table.diff.split").length)`); n == "0" {
		t.Error("the side by side view has no split table")
	}
	b.screenshot("commit-split")
	b.click(`#sec-` + cssEscape("🔑") + ` .section-tools a`)
	b.sees("🔑 Key Decisions", "Versions, newest first", "Hash with blake3 everywhere")
	b.screenshot("section")
	b.click(`a[href$="/blame/` + url.PathEscape("🔑") + `"]`)
	b.sees("Blame: 🔑 Key Decisions", "Use blake3 instead of md5", "write")
	b.screenshot("blame")

	// Compare, knowledge graph, search.
	b.open("/s/alpha/compare")
	b.must(chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(`input[name="from"]`), f.heads["alpha"][1].String()),
		chromedp.SetValue(chromedp.CSS(`input[name="to"]`), "HEAD")), "fill the compare form")
	b.click(`main form button[type="submit"]`)
	b.sees("sections differ", "🔑 Key Decisions", "blake3")
	b.screenshot("compare")
	b.open("/knowledge")
	b.sees("Knowledge graph", f.first, f.superseding, "pending", "accepted", "superseded by")
	if n := b.eval(`String(document.querySelectorAll("svg.kg g.node").length)`); n == "0" || n == "1" {
		t.Errorf("the graph has %s nodes", n)
	}
	b.screenshot("knowledge")
	b.click(`ul.prov a[href^="/s/alpha/c/"]`)
	b.sees("What changed")
	b.open("/search")
	b.must(chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(`main input[name="q"]`), "xxhash"),
		chromedp.Click(chromedp.CSS(`main input[name="history"]`))), "fill the search form")
	b.click(`main form button[type="submit"]`)
	b.sees("xxhash", "every version")
	b.screenshot("search")
	b.click(`ol.hits li:first-child a`)
	if loc := b.location(); !strings.Contains(loc, "/s/alpha/c/") {
		t.Errorf("a search hit went to %s", loc)
	}
	b.sees("What changed")

	// Keyboard: j focuses the first commit, Enter opens it; / focuses the search box.
	b.open("/s/alpha/")
	before := b.location()
	b.key("j")
	if a := b.eval(`document.activeElement ? document.activeElement.getAttribute("href") || "" : ""`); !strings.HasPrefix(a, "/s/alpha/c/") {
		t.Fatalf("after j the focus is on %q", a)
	}
	b.key("\r")
	b.waitLeave(before)
	b.sees("What changed")
	b.key("/")
	if id := b.eval(`document.activeElement ? document.activeElement.id : ""`); id != "quick-search" {
		t.Errorf("after / the focus is on %q", id)
	}

	// Dark mode and a narrow window.
	b.must(chromedp.Do(ctx, func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
		return chromedp.Void{}, err
	}), "emulate dark mode")
	b.open("/s/alpha/")
	if bg := b.eval(`getComputedStyle(document.body).backgroundColor`); bg != "rgb(13, 17, 23)" {
		t.Errorf("dark mode background %s", bg)
	}
	b.screenshot("timeline-dark")
	b.open("/s/alpha/c/" + f.evil.String())
	b.screenshot("commit-dark")
	b.must(chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)), "narrow window")
	for _, p := range []string{"/", "/s/alpha/", "/s/alpha/c/" + f.evil.String(), "/knowledge"} {
		b.open(p)
		if over := b.eval(`String(document.documentElement.scrollWidth - window.innerWidth)`); over != "0" && !strings.HasPrefix(over, "-") {
			t.Errorf("%s is %s px wider than a 390 px window", p, over)
		}
	}
	b.open("/s/alpha/")
	b.screenshot("timeline-narrow")

	// Every screenshot is there.
	for _, name := range []string{"sessions", "timeline", "commit", "commit-split", "section", "blame", "compare", "knowledge", "search", "timeline-dark", "commit-dark", "timeline-narrow"} {
		if fi, err := os.Stat(filepath.Join(shots, name+".png")); err != nil || fi.Size() < 1000 {
			t.Errorf("screenshot %s: %v", name, err)
		}
	}
}

// cssEscape escapes a section id for a CSS id selector.
func cssEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 && !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			fmt.Fprintf(&b, `\%x `, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Error(err)
		return
	}
	entries, _ := os.ReadDir(from)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err == nil {
			err = os.WriteFile(filepath.Join(to, e.Name()), b, 0o644)
		}
		if err != nil {
			t.Error(err)
		}
	}
}
