package modeltest

import (
	"slices"
	"strings"
)

// tmpl is what the harness knows of a checkpoint template: its heading lines, byte for
// byte as DESIGN.md gives them, and the section ids restore --section takes. The test keeps
// its own copy rather than asking ckpt, so a ckpt that changed a heading would be caught.
type tmpl struct {
	name     string
	headings []string
	ids      []string
	// blockquote is the index of the section that must hold a blockquoted request (eleven's
	// §1), or -1.
	blockquote int
	// rolling sections are rewritten as a matter of course: the shrink guard ignores them.
	rolling []int
}

var (
	six = &tmpl{
		name: "six",
		headings: []string{
			"### 🎯 Current Task", "### 📋 Task Stack", "### ✅ This Session Completed",
			"### 🔑 Key Decisions", "### 📡 Recovered Delta", "### ⚠️ Notes & Blockers",
		},
		ids:        []string{"🎯", "📋", "✅", "🔑", "📡", "⚠️"},
		blockquote: -1,
		rolling:    []int{0, 4},
	}
	elevenEN = &tmpl{
		name: "eleven-en",
		headings: []string{
			"## §1 Current Intent", "## §2 Next Concrete Action", "## §3 Directives (this session)",
			"## §4 Task Tree", "## §5 Current Work", "## §6 Files and Code Snippets",
			"## §7 Discovered Knowledge (cross-task)", "## §8 Errors and Fixes", "## §9 Live Resources",
			"## §10 Design Decisions and Outcomes", "## §11 Open Notes",
		},
		ids:        []string{"§1", "§2", "§3", "§4", "§5", "§6", "§7", "§8", "§9", "§10", "§11"},
		blockquote: 0,
		rolling:    []int{0, 1, 3, 4, 5, 8},
	}
)

// brokenSuffix is what an invalid harness edit appends to a heading: check must reject it.
const brokenSuffix = " (edited)"

// conflict marker lines, as a pull leaves them.
func isMarker(l string) bool {
	return strings.HasPrefix(l, "<<<<<<< ") || l == "<<<<<<<" || l == "=======" ||
		strings.HasPrefix(l, ">>>>>>> ") || l == ">>>>>>>" || strings.HasPrefix(l, "||||||| ")
}

func hasMarkers(b []byte) bool {
	for _, l := range strings.Split(string(b), "\n") {
		if isMarker(strings.TrimSuffix(l, "\r")) {
			return true
		}
	}
	return false
}

// valid is the harness's own idea of whether check accepts a checkpoint it built: every
// heading present once, in order, none broken, no conflict marker, and a blockquote where
// the template needs one. It only has to be right for the documents this test makes.
func (t *tmpl) valid(b []byte) bool {
	lines := strings.Split(string(b), "\n")
	next := 0
	for i, l := range lines {
		if isMarker(l) {
			return false
		}
		if strings.HasSuffix(l, brokenSuffix) && t.heading(strings.TrimSuffix(l, brokenSuffix)) >= 0 {
			return false
		}
		if h := t.heading(l); h >= 0 {
			if h != next {
				return false
			}
			next++
			if h == t.blockquote && !t.hasQuote(lines[i+1:]) {
				return false
			}
		}
	}
	return next == len(t.headings)
}

// hasQuote reports whether a section body (the lines after its heading) holds a "> " line.
func (t *tmpl) hasQuote(lines []string) bool {
	for _, l := range lines {
		if t.heading(l) >= 0 || strings.HasSuffix(l, brokenSuffix) {
			return false
		}
		if strings.HasPrefix(l, ">") {
			return true
		}
	}
	return false
}

func (t *tmpl) heading(l string) int {
	for i, h := range t.headings {
		if l == h {
			return i
		}
	}
	return -1
}

// repair is what a harness does to a checkpoint that check rejects: it puts broken
// headings back and drops conflict marker lines, keeping every other byte (both sides of
// a conflict stay).
func (t *tmpl) repair(b []byte) []byte {
	lines := strings.Split(string(b), "\n")
	out := lines[:0]
	for _, l := range lines {
		if isMarker(strings.TrimSuffix(l, "\r")) {
			continue
		}
		if s, ok := strings.CutSuffix(l, brokenSuffix); ok && t.heading(s) >= 0 {
			l = s
		}
		out = append(out, l)
	}
	return []byte(strings.Join(out, "\n"))
}

// dropMarkers removes conflict marker lines from any file (notes.md, a spill file).
func dropMarkers(b []byte) []byte {
	lines := strings.Split(string(b), "\n")
	out := lines[:0]
	for _, l := range lines {
		if !isMarker(strings.TrimSuffix(l, "\r")) {
			out = append(out, l)
		}
	}
	return []byte(strings.Join(out, "\n"))
}

// insert puts line into section i's body, right after its heading and the italic
// directive or metadata lines that follow it. ok is false when the heading is not there.
func (t *tmpl) insert(b []byte, i int, line string) ([]byte, bool) {
	lines := strings.Split(string(b), "\n")
	for k, l := range lines {
		if l != t.headings[i] {
			continue
		}
		at := k + 1
		for at < len(lines) && isItalicLine(lines[at]) {
			at++
		}
		out := make([]string, 0, len(lines)+1)
		out = append(out, lines[:at]...)
		out = append(out, line)
		out = append(out, lines[at:]...)
		return []byte(strings.Join(out, "\n")), true
	}
	return b, false
}

func isItalicLine(l string) bool {
	t := strings.TrimSpace(l)
	return len(t) > 2 && t[0] == '_' && t[len(t)-1] == '_'
}

// breakHeading changes section i's heading, which check must reject.
func (t *tmpl) breakHeading(b []byte, i int) []byte {
	lines := strings.Split(string(b), "\n")
	for k, l := range lines {
		if l == t.headings[i] {
			lines[k] = l + brokenSuffix
			break
		}
	}
	return []byte(strings.Join(lines, "\n"))
}

// mayShrink reports whether next drops a list item that prev holds in a section that is not
// rolling, and that is neither elsewhere in next nor in one of the other files: then ckpt's
// shrink guard may reject next (exit 3, the bytes kept under refs/ckpt/rejected/N). The
// guard's exact rule (any Key Decision; more than half, and two, of another section) is
// ckpt's; the model only needs to know when a rejection is possible at all.
func (t *tmpl) mayShrink(prev, next []byte, others ...[]byte) bool {
	if prev == nil {
		return false
	}
	sec := -1
	for _, l := range strings.Split(string(prev), "\n") {
		if h := t.heading(strings.TrimSuffix(l, brokenSuffix)); h >= 0 {
			sec = h
			continue
		}
		item, ok := strings.CutPrefix(strings.TrimLeft(l, " "), "- ")
		if !ok || sec < 0 || slices.Contains(t.rolling, sec) || strings.TrimSpace(item) == "" {
			continue
		}
		item = strings.TrimSpace(item)
		found := strings.Contains(string(next), item)
		for _, o := range others {
			found = found || strings.Contains(string(o), item)
		}
		if !found {
			return true
		}
	}
	return false
}
