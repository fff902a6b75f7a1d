package sections

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
)

// Meta is one metadata line, `_key: value_`.
type Meta struct {
	Key     string
	Value   string
	Line    int // 1-based
	Section ID  // "" in the preamble
}

// Metadata returns every metadata line of the document in order. Lines inside fenced code are
// not metadata.
func (d *Document) Metadata() []Meta {
	var out []Meta
	d.eachLine(func(sec ID, line int, l []byte) {
		if m := metaLine().FindSubmatch(bytes.TrimRight(l, "\r\n")); m != nil {
			out = append(out, Meta{Key: string(m[1]), Value: strings.TrimSpace(string(m[2])), Line: line, Section: sec})
		}
	})
	return out
}

// MetaValue returns the value of the first metadata line with key.
func (d *Document) MetaValue(key string) (string, bool) {
	for _, m := range d.Metadata() {
		if m.Key == key {
			return m.Value, true
		}
	}
	return "", false
}

// eachLine calls fn for every line of the document outside fenced code blocks.
func (d *Document) eachLine(fn func(sec ID, line int, l []byte)) {
	line := 1
	fence := ""
	walk := func(sec ID, b []byte) {
		for len(b) > 0 {
			l, rest, _ := cutLine(b)
			t := strings.TrimLeft(string(bytes.TrimRight(l, "\r\n")), " ")
			switch {
			case fence != "":
				if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
					fence = ""
				}
			case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
				fence = t[:3]
			default:
				fn(sec, line, l)
			}
			line++
			b = rest
		}
	}
	walk("", d.Preamble)
	for i := range d.Sections {
		s := &d.Sections[i]
		walk(s.ID, s.Heading)
		walk(s.ID, s.Directive)
		walk(s.ID, s.Body)
	}
}

// SetMeta sets the value of the first metadata line with key and reports whether there was
// one. The line keeps its place and its line ending.
func (d *Document) SetMeta(key, value string) bool {
	set := func(b *[]byte) bool {
		out, ok := setMetaIn(*b, key, value)
		if ok {
			*b = out
		}
		return ok
	}
	if set(&d.Preamble) {
		return true
	}
	for i := range d.Sections {
		s := &d.Sections[i]
		if set(&s.Directive) || set(&s.Body) {
			return true
		}
	}
	return false
}

func setMetaIn(b []byte, key, value string) ([]byte, bool) {
	prefix := []byte("_" + key + ":")
	off := 0
	for off < len(b) {
		l, _, _ := cutLine(b[off:])
		if bytes.HasPrefix(l, prefix) && metaLine().Match(bytes.TrimRight(l, "\r\n")) {
			eol := l[len(bytes.TrimRight(l, "\r\n")):]
			repl := append([]byte("_"+key+": "+value+"_"), eol...)
			out := make([]byte, 0, len(b)-len(l)+len(repl))
			out = append(append(append(out, b[:off]...), repl...), b[off+len(l):]...)
			return out, true
		}
		off += len(l)
	}
	return b, false
}

// looseMetaLine matches what looks like an attempt at a metadata line, well formed or not.
var looseMetaLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^_[A-Za-z][A-Za-z0-9_]*\s*:`) })

// IsMetaLine reports whether l (without line ending) is a well-formed metadata line.
func IsMetaLine(l string) bool { return metaLine().MatchString(l) }
