package sections

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Severity of a check finding.
type Severity string

// Severities.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Finding is one problem that Check found.
type Finding struct {
	Line     int
	Severity Severity
	Section  ID
	Message  string
}

func (f Finding) String() string {
	return fmt.Sprintf("%d: %s: %s", f.Line, f.Severity, f.Message)
}

// Rules are the checks beyond "same sections, same headings, same directive lines" that a
// template asks for.
type Rules struct {
	// Blockquote is the section that must hold at least one blockquote line (eleven: §1).
	Blockquote ID
	// MaxOpen caps a section's open "- [ ]" items; more is a warning (six: 📋, 5).
	MaxOpen map[ID]int
	// TaskSection and TaskIDs, when TaskIDs is not nil, flag a task line whose id is not in
	// the task database.
	TaskSection ID
	TaskIDs     map[string]bool
	// Extra checks run last; they add their own findings (the secret scan, for one).
	Extra []func(*Document) []Finding
}

// HasErrors reports whether any finding is an error.
func HasErrors(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == Error {
			return true
		}
	}
	return false
}

var (
	openItem  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*[-*+] \[ \]`) })
	quoteLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ {0,3}>`) })
	taskLine  = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\s*[-*+] (?:\[[ xX]\] )?(?:🔵|🔄|🟡|✅|❌) (\S+)`)
	})
	timeValue = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$`)
	})
	deltaValue = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\S+) → (\S+)$`) })
)

// Check compares doc with its template and applies rules. Findings come sorted by line.
func Check(doc, tmpl *Document, rules Rules) []Finding {
	var fs []Finding
	add := func(line int, sev Severity, sec ID, format string, args ...any) {
		fs = append(fs, Finding{Line: line, Severity: sev, Section: sec, Message: fmt.Sprintf(format, args...)})
	}

	want := map[ID]int{}
	for i, s := range tmpl.Sections {
		want[s.ID] = i
	}
	seen := map[ID]int{} // id -> first line
	last, lastID := -1, ID("")
	for i := range doc.Sections {
		s := &doc.Sections[i]
		ti, inTemplate := want[s.ID]
		if first, dup := seen[s.ID]; dup {
			add(s.Line, Error, s.ID, "section %s appears twice (first at line %d)", s.ID, first)
			continue
		}
		seen[s.ID] = s.Line
		if !inTemplate {
			add(s.Line, Warning, s.ID, "section %q is not in the template", s.HeadingLine())
			continue
		}
		t := &tmpl.Sections[ti]
		if ti < last {
			add(s.Line, Error, s.ID, "section %s is out of order: it comes before %s in the template", s.ID, lastID)
		} else {
			last, lastID = ti, s.ID
		}
		if s.HeadingLine() != t.HeadingLine() {
			add(s.Line, Error, s.ID, "heading changed: want %q", t.HeadingLine())
		}
		if t.Directive != nil {
			switch {
			case s.Directive == nil:
				add(s.Line+1, Error, s.ID, "directive line missing under %s: want %q", s.ID, t.DirectiveLine())
			case s.DirectiveLine() != t.DirectiveLine():
				add(s.Line+1, Error, s.ID, "directive line changed: want %q", t.DirectiveLine())
			}
		}
	}
	for _, t := range tmpl.Sections {
		if _, ok := seen[t.ID]; !ok {
			add(missingLine(doc, tmpl, t.ID), Error, t.ID, "missing section %q", t.HeadingLine())
		}
	}

	fs = append(fs, checkMeta(doc, tmpl)...)
	fs = append(fs, checkConflictMarkers(doc)...)

	if rules.Blockquote != "" {
		if s := doc.Section(rules.Blockquote); s != nil && !hasLine(s.Body, quoteLine()) {
			add(s.Line, Error, s.ID, "%s holds no blockquoted verbatim user request (> \"…\")", s.ID)
		}
	}
	for id, max := range rules.MaxOpen {
		if s := doc.Section(id); s != nil {
			if n := countLines(s.Body, openItem()); n > max {
				add(s.Line, Warning, s.ID, "%s has %d open items; keep at most %d", s.ID, n, max)
			}
		}
	}
	if rules.TaskIDs != nil {
		if s := doc.Section(rules.TaskSection); s != nil {
			line := s.Line + 1
			if s.Directive != nil {
				line++
			}
			forLines(s.Body, func(l string) {
				if m := taskLine().FindStringSubmatch(l); m != nil && !rules.TaskIDs[m[1]] {
					add(line, Error, s.ID, "task %s is not in the task database", m[1])
				}
				line++
			})
		}
	}
	for _, extra := range rules.Extra {
		fs = append(fs, extra(doc)...)
	}
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Line < fs[j].Line })
	return fs
}

// missingLine picks the line where a missing section would go: the heading of the next
// template section present, else the last line.
func missingLine(doc, tmpl *Document, id ID) int {
	after := false
	for _, t := range tmpl.Sections {
		if t.ID == id {
			after = true
			continue
		}
		if after {
			if s := doc.Section(t.ID); s != nil {
				return s.Line
			}
		}
	}
	return max(1, bytes.Count(doc.Render(), []byte{'\n'}))
}

func checkMeta(doc, tmpl *Document) []Finding {
	var fs []Finding
	var keys []string
	for _, m := range tmpl.Metadata() {
		keys = append(keys, "_"+m.Key)
	}
	looksLikeMeta := func(t string) bool {
		if looseMetaLine().MatchString(t) {
			return true
		}
		for _, k := range keys {
			if rest, ok := strings.CutPrefix(t, k); ok && (rest == "" || !isWordByte(rest[0])) {
				return true
			}
		}
		return false
	}
	doc.eachLine(func(sec ID, line int, l []byte) {
		t := strings.TrimRight(string(l), "\r\n")
		if !looksLikeMeta(t) {
			return
		}
		m := metaLine().FindStringSubmatch(t)
		if m == nil {
			fs = append(fs, Finding{line, Error, sec, fmt.Sprintf("malformed metadata line %q: want _key: value_", t)})
			return
		}
		if msg := badMetaValue(m[1], strings.TrimSpace(m[2])); msg != "" {
			fs = append(fs, Finding{line, Error, sec, msg})
		}
	})
	have := map[string]bool{}
	for _, m := range doc.Metadata() {
		have[m.Key] = true
	}
	for _, m := range tmpl.Metadata() {
		if !have[m.Key] {
			fs = append(fs, Finding{1, Warning, m.Section, fmt.Sprintf("metadata line _%s: …_ is missing", m.Key)})
		}
	}
	return fs
}

func badMetaValue(key, v string) string {
	switch key {
	case "last_updated":
		if !timeValue().MatchString(v) {
			return fmt.Sprintf("_last_updated_: %q is not a time like 2026-04-01T22:00Z", v)
		}
	case "delta_since_last":
		m := deltaValue().FindStringSubmatch(v)
		if m == nil || !timeValue().MatchString(m[1]) || !timeValue().MatchString(m[2]) {
			return fmt.Sprintf("_delta_since_last_: %q is not like 2026-04-01T21:45Z → 2026-04-01T22:00Z", v)
		}
	case "session_id":
		if v == "" || strings.ContainsAny(v, " \t") {
			return fmt.Sprintf("_session_id_: %q is not an id", v)
		}
	}
	return ""
}

// checkConflictMarkers flags merge conflict markers left in the document.
func checkConflictMarkers(doc *Document) []Finding {
	var fs []Finding
	doc.eachLine(func(sec ID, line int, l []byte) {
		t := string(bytes.TrimRight(l, "\r\n"))
		if strings.HasPrefix(t, "<<<<<<< ") || t == "<<<<<<<" || strings.HasPrefix(t, ">>>>>>> ") || t == ">>>>>>>" {
			fs = append(fs, Finding{line, Error, sec, "unresolved conflict marker " + strings.Fields(t + " x")[0]})
		}
	})
	return fs
}

func forLines(b []byte, fn func(string)) {
	for len(b) > 0 {
		l, rest, _ := cutLine(b)
		fn(strings.TrimRight(string(l), "\r\n"))
		b = rest
	}
}

func hasLine(b []byte, re *regexp.Regexp) bool { return countLines(b, re) > 0 }

func countLines(b []byte, re *regexp.Regexp) int {
	n := 0
	forLines(b, func(l string) {
		if re.MatchString(l) {
			n++
		}
	})
	return n
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
