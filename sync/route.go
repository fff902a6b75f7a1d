package sync

import (
	"bytes"
	"strings"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/knowledge"
	"github.com/ckpt-dev/ckpt/sections"
	"github.com/ckpt-dev/ckpt/templates"
)

// Destination says where a notes entry went.
type Destination struct {
	Repo    string      `json:"repo"` // "session" or "memory"
	File    string      `json:"file"`
	Section sections.ID `json:"section"`
	// Status is "added", "duplicate" (already there, whitespace-normalized) or "replaced"
	// (a section that holds one value, like the current task, took the entry).
	Status string `json:"status"`
	// Why names the rule that chose the section: "tag", "keyword", "catch-all", "config",
	// or "redirected" when the task section belongs to the task database.
	Why string `json:"why"`
}

// routed is an entry and where it goes.
type routed struct {
	Entry note
	Tag   string // the tag used for routing (from the entry, or found by a keyword rule)
	Role  templates.Role
	Dest  Destination
}

// router routes entries for one template, with the config's overrides.
type router struct {
	t         *checkpoint.Template
	overrides map[string]string // tag -> section id
	taskOwned bool              // the task section is rendered from the task database
}

// route decides an entry's tag, role and section. It does not touch any document.
func (rt *router) route(e note) routed {
	if e.Tag != "" && !rt.knows(e) {
		// An unknown tag is part of the text: the entry goes to the catch-all as written.
		e.Text, e.Tag, e.Durable = e.writtenTag()+e.Text, "", false
		sec := rt.catchAll()
		if rt.taskOwned && sec == rt.t.Section(templates.RoleTasks) {
			sec = rt.t.Section(templates.RoleCatchAll)
		}
		return routed{Entry: e, Role: roleOf(rt.t, sec), Dest: Destination{Repo: "session", File: checkpoint.File, Section: sec, Why: "catch-all"}}
	}
	r := routed{Entry: e, Tag: e.Tag}
	why := "tag"
	text, _, _ := strings.Cut(e.Text, "\n")
	text = strings.TrimSpace(text)
	if r.Tag == "" || (rt.t.Spec.Routes[r.Tag] == "" && rt.overrides[r.Tag] == "") {
		r.Tag, why = "", "keyword"
		switch {
		case strings.HasPrefix(text, "[ ] "):
			r.Tag = "task"
		case strings.HasPrefix(text, "[x] "), strings.HasPrefix(text, "[X] "):
			r.Tag = "done"
		default:
			for _, k := range rt.t.Spec.Keywords {
				if k.Matches(text) {
					r.Tag = k.Tag
					break
				}
			}
		}
		if r.Tag == "" {
			why = "catch-all"
		}
	}
	if e.Durable && rt.t.Spec.Durable[e.Tag] != "" {
		r.Role = rt.t.Spec.Durable[e.Tag]
		r.Dest = Destination{Repo: "memory", File: knowledge.MemoryFile, Why: "tag"}
		return r
	}
	r.Role = rt.t.Spec.Routes[r.Tag]
	if r.Role == "" {
		r.Role = templates.RoleCatchAll
	}
	sec := rt.t.Section(r.Role)
	if id, ok := rt.overrides[r.Tag]; ok && r.Tag != "" {
		sec, why = sections.ID(id), "config"
	}
	if rt.taskOwned && sec == rt.t.Section(templates.RoleTasks) {
		sec, why = rt.t.Section(templates.RoleCatchAll), "redirected"
	}
	if sec == "" {
		sec = rt.catchAll()
	}
	r.Dest = Destination{Repo: "session", File: checkpoint.File, Section: sec, Why: why}
	return r
}

// knows reports whether the entry's tag means something here: the template routes it, the
// config overrides it, or, with "!", MEMORY.md takes it.
func (rt *router) knows(e note) bool {
	_, over := rt.overrides[e.Tag]
	return rt.t.Spec.Routes[e.Tag] != "" || over || (e.Durable && rt.t.Spec.Durable[e.Tag] != "")
}

// catchAll is the template's catch-all section, or its last section for a user template
// without rules.
func (rt *router) catchAll() sections.ID {
	if id := rt.t.Section(templates.RoleCatchAll); id != "" {
		return id
	}
	if n := len(rt.t.Doc.Sections); n > 0 {
		return rt.t.Doc.Sections[n-1].ID
	}
	return ""
}

// renderEntry formats an entry for its target section: the bullet style the section uses.
// Continuation lines are kept as written.
func renderEntry(t *checkpoint.Template, role templates.Role, tag, text string) string {
	first, rest, more := strings.Cut(text, "\n")
	first = strings.TrimSpace(first)
	box := checkbox(first)
	var line string
	switch {
	case role == templates.RoleIntent && t.Spec.Blockquote != "":
		if strings.HasPrefix(first, ">") {
			line = first
		} else {
			line = "> " + first
		}
	case role == templates.RoleIntent || role == templates.RoleNext:
		line = first
	case t.Name == "six" && role == templates.RoleTasks && box == "":
		line = "- [ ] " + first
	case t.Name == "six" && role == templates.RoleCompleted && box == "":
		line = "- [x] " + first
	case t.Name == "six" && tag == "blocker":
		line = "- **Blocker**: " + first
	default:
		line = "- " + first
	}
	if more {
		line += "\n" + rest
	}
	return line
}

// checkbox is the task-list box that starts text ("[ ] ", "[x] ", "[X] "), or "". The box is
// kept as written: the six template's task sections add one only where there is none.
func checkbox(text string) string {
	for _, b := range []string{"[ ] ", "[x] ", "[X] "} {
		if strings.HasPrefix(text, b) {
			return b
		}
	}
	return ""
}

// replaces reports whether a role holds one value that a new entry replaces (the current
// task, the intent, the next action) rather than a list it appends to.
func replaces(role templates.Role) bool {
	return role == templates.RoleIntent || role == templates.RoleNext
}

// items splits a section body into its top-level items (a bullet with its continuation
// lines, or a paragraph line), normalized.
func items(body []byte) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, knowledge.NormText(cur.String()))
			cur.Reset()
		}
	}
	for _, l := range strings.Split(string(body), "\n") {
		l = strings.TrimRight(l, "\r")
		switch {
		case strings.TrimSpace(l) == "":
			flush()
		case l[0] == ' ' || l[0] == '\t':
			cur.WriteString("\n" + l)
		default:
			flush()
			cur.WriteString(l)
		}
	}
	flush()
	return out
}

// editor changes section bodies of one document, keeping its line endings.
type editor struct {
	doc   *sections.Document
	eol   string
	empty string // the template's placeholder for an empty section ("(无)")
	// seen caches each section's normalized items, so that recognising an entry already
	// present costs a map lookup, not a scan of the section per entry.
	seen map[sections.ID]map[string]bool
	// owned marks bodies this editor allocated: they can grow in place, while a body parsed
	// from the source shares its array with the next section and must be copied first.
	owned map[sections.ID]bool
}

func newEditor(doc *sections.Document, empty string) *editor {
	return &editor{doc: doc, eol: sections.EOL(doc.Render()), empty: empty, seen: map[sections.ID]map[string]bool{}, owned: map[sections.ID]bool{}}
}

// present reports whether text is already in section id: an item equal to it (whitespace-
// normalized) in a section that also holds every literal of text byte for byte.
func (ed *editor) present(id sections.ID, text string) bool {
	s := ed.doc.Section(id)
	if s == nil {
		return false
	}
	set, ok := ed.seen[id]
	if !ok {
		set = map[string]bool{}
		for _, it := range items(s.Body) {
			set[it] = true
		}
		ed.seen[id] = set
	}
	if !set[knowledge.NormText(text)] {
		return false
	}
	for _, lit := range literals(text) {
		if !bytes.Contains(s.Body, []byte(lit)) {
			return false
		}
	}
	return true
}

// splitBody separates a body into its content and the lines that end it: blank lines and
// thematic breaks ("---", which closes the six template), which separate the section from
// what follows and must stay after anything added.
func splitBody(body []byte) (content, tail []byte) {
	end := len(body)
	for end > 0 {
		i := bytes.LastIndexByte(body[:end-1], '\n') + 1
		if l := bytes.TrimSpace(body[i:end]); len(l) != 0 && !isBreak(l) {
			break
		}
		end = i
	}
	return body[:end], body[end:]
}

// isBreak reports whether a trimmed line is a thematic break: three or more of -, * or _.
func isBreak(l []byte) bool {
	c := bytes.ReplaceAll(l, []byte(" "), nil)
	return len(c) >= 3 && (bytes.Count(c, []byte("-")) == len(c) || bytes.Count(c, []byte("*")) == len(c) || bytes.Count(c, []byte("_")) == len(c))
}

// isPlaceholder reports whether content is empty or only the template's placeholder.
func (ed *editor) isPlaceholder(content []byte) bool {
	if len(content) > len(ed.empty)+16 {
		return false // cheap answer for the common, long section
	}
	c := strings.TrimSpace(string(content))
	return c == "" || (ed.empty != "" && (c == ed.empty || c == "> "+ed.empty))
}

// add appends text (already rendered, lines joined with "\n") to a section, replacing the
// placeholder, or replaces the whole content when replace is set. It returns false when the
// section does not exist. Appends grow the body in place, so adding many entries is linear.
func (ed *editor) add(id sections.ID, text string, replace bool) bool {
	s := ed.doc.Section(id)
	if s == nil {
		return false
	}
	content, tail := splitBody(s.Body)
	tail = append([]byte(nil), tail...)
	rendered := strings.ReplaceAll(text, "\n", ed.eol) + ed.eol
	var body []byte
	if !replace && !ed.isPlaceholder(content) {
		if ed.owned[id] {
			body = content
		} else {
			body = make([]byte, len(content), 2*len(s.Body)+len(rendered))
			copy(body, content)
		}
		if len(body) > 0 && body[len(body)-1] != '\n' {
			body = append(body, ed.eol...)
		}
	}
	body = append(body, rendered...)
	if len(tail) == 0 && !ed.isLast(id) {
		tail = []byte(ed.eol)
	}
	s.Body = append(body, tail...)
	ed.owned[id] = true
	if s.Directive == nil && len(s.Heading) > 0 && s.Heading[len(s.Heading)-1] != '\n' {
		s.Heading = append(append([]byte{}, s.Heading...), ed.eol...)
	}
	if replace {
		delete(ed.seen, id)
	} else if set, ok := ed.seen[id]; ok {
		set[knowledge.NormText(text)] = true
	}
	return true
}

func (ed *editor) isLast(id sections.ID) bool {
	n := len(ed.doc.Sections)
	return n > 0 && ed.doc.Sections[n-1].ID == id
}

// setContent replaces a section's content with lines, keeping its trailing blank lines; an
// empty list gives the placeholder (or nothing).
func (ed *editor) setContent(id sections.ID, lines []string) {
	s := ed.doc.Section(id)
	if s == nil {
		return
	}
	_, tail := splitBody(s.Body)
	if len(lines) == 0 && ed.empty != "" {
		lines = []string{ed.empty}
	}
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(strings.ReplaceAll(l, "\n", ed.eol) + ed.eol)
	}
	if len(tail) == 0 && !ed.isLast(id) && b.Len() > 0 {
		tail = []byte(ed.eol)
	}
	b.Write(tail)
	s.Body = b.Bytes()
	ed.owned[id] = true
	delete(ed.seen, id)
}

// itemsRaw returns the content of a section as top-level items with their continuation
// lines ("- a\n  more"), without blank lines or the placeholder.
func (ed *editor) itemsRaw(id sections.ID) []string {
	s := ed.doc.Section(id)
	if s == nil {
		return nil
	}
	content, _ := splitBody(s.Body)
	if ed.isPlaceholder(content) {
		return nil
	}
	var out []string
	for _, l := range strings.Split(strings.ReplaceAll(string(content), "\r\n", "\n"), "\n") {
		switch {
		case strings.TrimSpace(l) == "":
			if len(out) > 0 {
				out[len(out)-1] += "\n"
			}
		case (l[0] == ' ' || l[0] == '\t') && len(out) > 0:
			out[len(out)-1] += "\n" + l
		default:
			out = append(out, l)
		}
	}
	for i := range out {
		out[i] = strings.TrimRight(out[i], "\n")
	}
	return out
}
