package sync

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
)

// note is one notes.md entry: a top-level bullet with its indented continuation lines.
type note struct {
	Line    int    // 1-based line of the bullet in notes.md
	Tag     string // "decision", "rule", …; "" when untagged
	Durable bool   // the tag ended with "!": the entry belongs in MEMORY.md
	// Text is the entry without its bullet and tag: the first line's rest, then the
	// continuation lines as written (indentation kept), joined with "\n".
	Text string
	// Raw is the entry as written, bullet and tag included.
	Raw string
}

// literals are the exact values in the entry that must survive byte for byte.
func (e note) literals() []string { return literals(e.Text) }

var (
	bulletLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[-*+] (.*)$`) })
	tagPrefix  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\[([a-z]+)(!?)\]\s*`) })
)

// parseTag reads the tag that starts an entry's first line: "[decision] …", "[rule!] …".
// A checkbox ("[x] …") and the start of a link ("[text](url)", "[text][ref]", "[ref]: url")
// are text, not tags. n is how many bytes of rest the tag and the space after it take.
func parseTag(rest string) (tag string, durable bool, n int) {
	m := tagPrefix().FindStringSubmatchIndex(rest)
	if m == nil {
		return "", false, 0
	}
	tag = rest[m[2]:m[3]]
	if end := m[5] + 1; tag == "x" || (end < len(rest) && strings.IndexByte("([:", rest[end]) >= 0) {
		return "", false, 0
	}
	return tag, m[5] > m[4], m[1]
}

// writtenTag is the tag as the entry's author wrote it ("[idea] "), "" when untagged.
func (e note) writtenTag() string {
	raw, _, _ := strings.Cut(e.Raw, "\n")
	text, _, _ := strings.Cut(e.Text, "\n")
	if e.Tag == "" || len(raw) < 2+len(text) {
		return ""
	}
	return raw[2 : len(raw)-len(text)]
}

// parseNotes returns the entries of notes.md. The part that equals the notes template (its
// header) is skipped; so are headings, italic directive lines and blank lines outside
// entries. A line of text outside any bullet is an entry of its own, so nothing is dropped.
func parseNotes(src, template []byte) []note {
	line := 1
	if bytes.HasPrefix(src, template) {
		line += bytes.Count(template, []byte{'\n'})
		src = src[len(template):]
	}
	var out []note
	var cur *note
	var pendingBlank int
	flush := func() {
		if cur != nil {
			cur.Text = strings.TrimRight(cur.Text, "\n")
			cur.Raw = strings.TrimRight(cur.Raw, "\n")
			out = append(out, *cur)
			cur = nil
		}
		pendingBlank = 0
	}
	for len(src) > 0 {
		i := bytes.IndexByte(src, '\n')
		var l string
		if i < 0 {
			l, src = string(src), nil
		} else {
			l, src = string(src[:i]), src[i+1:]
		}
		l = strings.TrimSuffix(l, "\r")
		switch {
		case strings.TrimSpace(l) == "":
			if cur != nil {
				pendingBlank++
			}
		case cur != nil && (l[0] == ' ' || l[0] == '\t'):
			// A continuation line; blank lines between it and the entry belong to the entry.
			for ; pendingBlank > 0; pendingBlank-- {
				cur.Text += "\n"
				cur.Raw += "\n"
			}
			cur.Text += "\n" + l
			cur.Raw += "\n" + l
		default:
			flush()
			if m := bulletLine().FindStringSubmatch(l); m != nil {
				e := note{Line: line, Raw: l}
				rest := m[1]
				if tag, durable, n := parseTag(rest); n > 0 {
					e.Tag, e.Durable = tag, durable
					rest = rest[n:]
				}
				e.Text = rest
				cur = &e
			} else if !isHeaderLine(l) {
				out = append(out, note{Line: line, Text: l, Raw: l})
			}
		}
		line++
	}
	flush()
	return out
}

// isHeaderLine is a heading or an italic directive line: part of a notes file's header.
func isHeaderLine(l string) bool {
	t := strings.TrimSpace(l)
	return strings.HasPrefix(t, "#") || (len(t) > 2 && t[0] == '_' && t[len(t)-1] == '_')
}

// literalPatterns find the exact values seed 000 says must be copied byte for byte:
// backtick spans, DSNs and URLs, absolute paths, --flags with values, KEY=VALUE.
var literalPatterns = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile("`[^`\n]+`"),
		regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s` + "`" + `"'<>)\]]+`),
		regexp.MustCompile(`(?:^|[\s(])(/[A-Za-z0-9._~-]+(?:/[A-Za-z0-9._~*-]+)+/?)`),
		regexp.MustCompile(`--[A-Za-z0-9][A-Za-z0-9-]*(?:=\S+| [^\s-][^\s]*)`),
		regexp.MustCompile(`\b[A-Z][A-Z0-9_]*=[^\s` + "`" + `]+`),
	}
})

// literals returns the exact values in text, outermost first (a backtick span is one
// literal, not also the pieces inside it).
func literals(text string) []string {
	var out []string
	seen := map[string]bool{}
	covered := make([]bool, len(text))
	for _, re := range literalPatterns() {
		for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
			start, end := m[0], m[1]
			if len(m) > 2 && m[2] >= 0 {
				start, end = m[2], m[3]
			}
			if covered[start] {
				continue
			}
			lit := strings.TrimRight(text[start:end], ".,;:")
			if lit == "" || seen[lit] {
				continue
			}
			seen[lit] = true
			for k := start; k < end; k++ {
				covered[k] = true
			}
			out = append(out, lit)
		}
	}
	return out
}
