// Package sections splits a Markdown checkpoint into a preamble and sections with a byte-exact
// round trip (Render(Parse(x)) == x for every input), reads metadata lines, checks a document
// against its template, and diffs and merges documents section by section.
//
// The package is pure: bytes in, values out. It reads no files and knows nothing about git,
// which is what makes it fuzzable.
package sections

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// ID identifies a section: its emoji (six), "§N" (eleven), else its normalized heading text.
type ID string

// Document is a parsed checkpoint: Preamble, then Sections, in source order. Concatenating
// Preamble and every section's Heading, Directive and Body gives back the source.
type Document struct {
	Preamble []byte
	Sections []Section
	// Level is the ATX heading level that starts a section (2 for "##").
	Level int
}

// Section is one section: its heading line, the italic directive line right under it (if any)
// and the rest. Every slice keeps its line endings.
type Section struct {
	ID        ID
	Line      int    // 1-based line number of the heading
	Heading   []byte // the heading line, with its line ending
	Directive []byte // the italic directive line, with its line ending; nil when absent
	Body      []byte // everything up to the next section heading
}

// Options tune Parse.
type Options struct {
	// Level is the heading level that starts a section. 0 infers it: the smallest ATX level
	// of 2 or more present in the document, else 1.
	Level int
}

var bom = []byte("\xEF\xBB\xBF")

// blockParser parses block structure only, without inline parsing: that is all we need to
// know which lines are headings, and it keeps Parse fast. It keeps goldmark's paragraph
// transformer, which takes link reference definitions out of paragraphs while the blocks are
// parsed: without it "[ref]: url" followed by "===" reads as a setext heading, and a tag line
// after that as an HTML block that swallows the next heading (CommonMark says the "===" is
// text, and the tag line continues its paragraph). Built on first use: most documents never
// need it, and every ckpt process would build it at start.
var blockParser = sync.OnceValue(func() parser.Parser {
	return parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
	)
})

type heading struct {
	start int // byte offset of the heading line
	level int
}

// Parse splits src into a preamble and sections. It never fails: any input is a document.
func Parse(src []byte, opts Options) *Document {
	off := 0
	if bytes.HasPrefix(src, bom) {
		off = len(bom)
	}
	off += frontMatterLen(src[off:])

	headings := atxHeadings(src, off)
	level := opts.Level
	if level == 0 {
		level = inferLevel(headings)
	}
	doc := &Document{Level: level}
	var starts []int
	for _, h := range headings {
		if h.level == level {
			starts = append(starts, h.start)
		}
	}
	if len(starts) == 0 {
		doc.Preamble = src
		return doc
	}
	doc.Preamble = src[:starts[0]]
	line := 1 + bytes.Count(src[:starts[0]], []byte{'\n'})
	doc.Sections = make([]Section, 0, len(starts))
	for i, start := range starts {
		end := len(src)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		doc.Sections = append(doc.Sections, splitSection(src[start:end], line))
		line += bytes.Count(src[start:end], []byte{'\n'})
	}
	return doc
}

// atxHeadings returns the top-level ATX headings of src[off:], as offsets into src. Headings
// in code fences, HTML blocks, block quotes and list items are not top level; setext headings
// are not ATX.
func atxHeadings(src []byte, off int) []heading {
	body := src[off:]
	if !mayHaveHeading(body) {
		return nil
	}
	if hs, ok := scanHeadings(body, off); ok {
		return hs
	}
	return goldmarkHeadings(body, off)
}

// goldmarkHeadings asks goldmark for the top-level ATX headings of body.
func goldmarkHeadings(body []byte, off int) []heading {
	// goldmark appends a newline to a last line without one; capping the capacity makes it
	// copy instead of writing into the caller's array beyond body.
	body = body[:len(body):len(body)]
	root := blockParser().Parse(text.NewReader(body))
	var out []heading
	for n := root.FirstChild(); n != nil; n = n.NextSibling() {
		h, ok := n.(*ast.Heading)
		if !ok {
			continue
		}
		pos := h.Pos()
		if pos < 0 || pos >= len(body) || body[pos] != '#' {
			continue // a setext heading, or a position we cannot trust
		}
		start := bytes.LastIndexByte(body[:pos], '\n') + 1
		if pos-start > 3 || strings.Trim(string(body[start:pos]), " ") != "" || atxLevel(body[pos:]) != h.Level {
			continue // a setext heading whose text starts with '#'
		}
		out = append(out, heading{start: off + start, level: h.Level})
	}
	return out
}

// mayHaveHeading is a cheap pre-check: no '#' means no heading and no need to parse.
func mayHaveHeading(b []byte) bool { return bytes.IndexByte(b, '#') >= 0 }

// scanHeadings is the fast path for the common document: when no line (indented 0 to 3
// spaces) opens an HTML block, no code fence opens anywhere but at column 0, and no
// heading-like line is indented, every heading-like line at column 0 outside a fence is a
// top-level ATX heading: nothing else can contain it, because containers (lists, block
// quotes) have no lazy continuation for headings or fences. ok is false when the document
// needs the full parser. FuzzScanAgreesWithGoldmark holds the two paths to the same answer.
func scanHeadings(body []byte, off int) (out []heading, ok bool) {
	var fence []byte // the opening fence run ("```") while inside a fenced code block
	html := htmlNone // the kind of HTML block the scan is inside
	for start := 0; start < len(body); {
		end := bytes.IndexByte(body[start:], '\n')
		if end < 0 {
			end = len(body)
		} else {
			end += start + 1
		}
		l := body[start:end]
		ind := 0
		for ind < len(l) && l[ind] == ' ' {
			ind++
		}
		if bytes.IndexByte(l, 0) >= 0 || loneCR(l) {
			return nil, false // NUL, and a carriage return that ends a line by itself
		}
		if fence != nil {
			if ind <= 3 && closesFence(l[ind:], fence) {
				fence = nil
			}
			start = end
			continue
		}
		if html != htmlNone {
			if html.closedBy(l) {
				html = htmlNone
			}
			start = end
			continue
		}
		if ind <= 3 && ind < len(l) {
			switch c := l[ind]; {
			case c == '<':
				kind := htmlBlockStart(l)
				if kind == htmlUnsure || ind > 0 {
					return nil, false // maybe inside a list item, or a kind 7 block
				}
				if kind != htmlNone && !kind.closedOnFirstLine(l) {
					html = kind
				}
			case c == '`' || c == '~':
				run := fenceRun(l[ind:])
				if run == nil {
					break
				}
				if ind > 0 || (c == '`' && bytes.IndexByte(l[len(run):], '`') >= 0) {
					return nil, false // maybe inside a list item, or not a fence at all
				}
				fence = run
			case c == '#':
				if lvl := atxLevel(l[ind:]); lvl > 0 {
					if ind > 0 {
						return nil, false
					}
					out = append(out, heading{start: off + start, level: lvl})
				}
			}
		}
		start = end
	}
	return out, true
}

// loneCR reports whether l holds a carriage return not followed by a line feed: CommonMark
// ends a line there ("<pre\r#" is two lines), and the scanner splits lines at line feeds only.
func loneCR(l []byte) bool {
	for i := bytes.IndexByte(l, '\r'); i >= 0; {
		if i+1 >= len(l) || l[i+1] != '\n' {
			return true
		}
		j := bytes.IndexByte(l[i+1:], '\r')
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

// fenceRun returns the run of 3 or more backticks or tildes that opens l, or nil.
func fenceRun(l []byte) []byte {
	if len(l) < 3 || (l[0] != '`' && l[0] != '~') {
		return nil
	}
	n := 0
	for n < len(l) && l[n] == l[0] {
		n++
	}
	if n < 3 {
		return nil
	}
	return l[:n]
}

// closesFence reports whether l (indentation removed) closes a fence opened by run: the same
// character at least as many times, then only spaces or tabs.
func closesFence(l, run []byte) bool {
	r := fenceRun(l)
	if r == nil || r[0] != run[0] || len(r) < len(run) {
		return false
	}
	return len(bytes.Trim(l[len(r):], " \t\r\n")) == 0
}

// atxLevel returns the level of an ATX heading opener at the start of l ("## x" -> 2), or 0.
func atxLevel(l []byte) int {
	n := 0
	for n < len(l) && l[n] == '#' {
		n++
	}
	if n == 0 || n > 6 {
		return 0
	}
	if n == len(l) {
		return n
	}
	switch l[n] {
	case ' ', '\t', '\n', '\r':
		return n
	}
	return 0
}

func inferLevel(hs []heading) int {
	best := 0
	for _, h := range hs {
		if h.level >= 2 && (best == 0 || h.level < best) {
			best = h.level
		}
	}
	if best == 0 && len(hs) > 0 {
		return 1
	}
	if best == 0 {
		return 2
	}
	return best
}

// frontMatterLen returns the length of a YAML front matter block ("---" line, content, a
// closing "---" or "..." line) at the start of b, or 0.
func frontMatterLen(b []byte) int {
	first, rest, ok := cutLine(b)
	if !ok || trimEOL(first) != "---" {
		return 0
	}
	n := len(first)
	for len(rest) > 0 {
		var l []byte
		l, rest, _ = cutLine(rest)
		n += len(l)
		if t := trimEOL(l); t == "---" || t == "..." {
			return n
		}
	}
	return 0
}

// cutLine returns the first line of b with its line ending, and the rest. ok is false when
// b holds no line ending.
func cutLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, nil, false
	}
	return b[:i+1], b[i+1:], true
}

func trimEOL(b []byte) string {
	return strings.TrimRight(string(b), "\r\n")
}

func splitSection(b []byte, line int) Section {
	h, rest, _ := cutLine(b)
	s := Section{Line: line, Heading: h}
	s.ID = IDOf(HeadingTitle(trimEOL(h)))
	if d, after, _ := cutLine(rest); len(d) > 0 && isDirective(trimEOL(d)) {
		s.Directive = d
		rest = after
	}
	s.Body = rest
	return s
}

var metaLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^_([A-Za-z][A-Za-z0-9_]*): ?(.*)_\s*$`) })

// isDirective reports whether l is an italic directive line: `_text_`, not a metadata line.
func isDirective(l string) bool {
	l = strings.TrimRight(l, " \t")
	if len(l) < 3 || l[0] != '_' || l[len(l)-1] != '_' || l[1] == '_' || l[1] == ' ' {
		return false
	}
	return !metaLine().MatchString(l)
}

// HeadingTitle returns the text of an ATX heading line: without the leading #s, the closing
// sequence and surrounding spaces.
func HeadingTitle(line string) string {
	t := strings.TrimLeft(strings.TrimSpace(line), "#")
	t = strings.TrimSpace(t)
	if c := strings.TrimRight(t, "#"); c != t && (c == "" || strings.HasSuffix(c, " ") || strings.HasSuffix(c, "\t")) {
		t = strings.TrimSpace(c)
	}
	return t
}

// IDOf derives a section id from a heading title: "§N" when it starts with §N, the leading
// emoji when it starts with one, else the normalized title.
func IDOf(title string) ID {
	if rest, ok := strings.CutPrefix(title, "§"); ok {
		n := 0
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n > 0 {
			return ID("§" + rest[:n])
		}
	}
	if r, _ := utf8.DecodeRuneInString(title); isEmoji(r) {
		tok, _, _ := strings.Cut(title, " ")
		return ID(tok)
	}
	return ID(Normalize(title))
}

func isEmoji(r rune) bool {
	switch {
	case r >= 0x1F000 && r <= 0x1FAFF, r >= 0x2600 && r <= 0x27BF, r >= 0x2B00 && r <= 0x2BFF,
		r >= 0x2190 && r <= 0x21FF, r >= 0x2300 && r <= 0x23FF:
		return true
	}
	return unicode.Is(unicode.So, r)
}

// Normalize lower-cases s, drops emoji variation selectors and collapses runs of white space,
// so that two spellings of the same text compare equal.
func Normalize(s string) string {
	s = strings.ReplaceAll(s, "\uFE0F", "")
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// Render gives back the bytes the document was parsed from (with any edits applied).
func (d *Document) Render() []byte {
	n := len(d.Preamble)
	for i := range d.Sections {
		n += d.Sections[i].Len()
	}
	out := make([]byte, 0, n)
	out = append(out, d.Preamble...)
	for i := range d.Sections {
		s := &d.Sections[i]
		out = append(append(append(out, s.Heading...), s.Directive...), s.Body...)
	}
	return out
}

// Len is the section's size in bytes.
func (s *Section) Len() int { return len(s.Heading) + len(s.Directive) + len(s.Body) }

// Bytes returns the whole section: heading, directive and body.
func (s *Section) Bytes() []byte {
	out := make([]byte, 0, s.Len())
	return append(append(append(out, s.Heading...), s.Directive...), s.Body...)
}

// view is the whole section like Bytes, without a copy when its parts lie one after the
// other in one array, as Parse leaves them.
func (s *Section) view() []byte {
	n := s.Len()
	if len(s.Heading) == 0 || cap(s.Heading) < n {
		return s.Bytes()
	}
	v := s.Heading[:n]
	if len(s.Directive) > 0 && &v[len(s.Heading)] != &s.Directive[0] ||
		len(s.Body) > 0 && &v[len(s.Heading)+len(s.Directive)] != &s.Body[0] {
		return s.Bytes()
	}
	return v
}

// Title is the heading text without #s ("🎯 Current Task").
func (s *Section) Title() string { return HeadingTitle(trimEOL(s.Heading)) }

// HeadingLine is the heading line without its line ending.
func (s *Section) HeadingLine() string { return trimEOL(s.Heading) }

// DirectiveLine is the directive line without its line ending, or "".
func (s *Section) DirectiveLine() string { return trimEOL(s.Directive) }

// Content is what lies under the heading: the directive line and the body.
func (s *Section) Content() []byte {
	out := make([]byte, 0, len(s.Directive)+len(s.Body))
	return append(append(out, s.Directive...), s.Body...)
}

// Index returns the position of the section with id, or -1.
func (d *Document) Index(id ID) int {
	for i := range d.Sections {
		if d.Sections[i].ID == id {
			return i
		}
	}
	return -1
}

// Section returns the section with id, or nil.
func (d *Document) Section(id ID) *Section {
	if i := d.Index(id); i >= 0 {
		return &d.Sections[i]
	}
	return nil
}

// Find resolves a user's --section argument: a section id ("🎯", "§3"), the heading text with
// or without its id ("Current Task", "🎯 Current Task", "当前意图"), compared normalized.
func (d *Document) Find(query string) *Section {
	if i := FindIn(d.Sections, query); i >= 0 {
		return &d.Sections[i]
	}
	return nil
}

// FindIn is Find over a slice of sections; it returns an index or -1.
func FindIn(ss []Section, query string) int {
	q := Normalize(query)
	if q == "" {
		return -1
	}
	for i := range ss {
		if Normalize(string(ss[i].ID)) == q {
			return i
		}
	}
	for i := range ss {
		t := Normalize(ss[i].Title())
		rest := strings.TrimSpace(strings.TrimPrefix(t, Normalize(string(ss[i].ID))))
		if t == q || rest == q {
			return i
		}
	}
	return -1
}

// EOL returns the line ending the document uses ("\r\n" or "\n"), judged by its first line.
func EOL(src []byte) string {
	i := bytes.IndexByte(src, '\n')
	if i > 0 && src[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

// Put replaces the section with s's id, or, when the document has none, inserts s before
// the first section that comes after it in order (a template's id sequence), else at the end.
func (d *Document) Put(s Section, order []ID) {
	if i := d.Index(s.ID); i >= 0 {
		d.Sections[i] = s
		return
	}
	rank := map[ID]int{}
	for i, id := range order {
		rank[id] = i
	}
	at := len(d.Sections)
	if r, ok := rank[s.ID]; ok {
		for i := range d.Sections {
			if ri, ok := rank[d.Sections[i].ID]; ok && ri > r {
				at = i
				break
			}
		}
	}
	// The section before the insertion point must end with a line ending.
	if at > 0 {
		prev := &d.Sections[at-1]
		if len(prev.Body) > 0 && prev.Body[len(prev.Body)-1] != '\n' {
			prev.Body = append(append([]byte{}, prev.Body...), '\n')
		} else if len(prev.Body) == 0 && prev.Directive == nil && len(prev.Heading) > 0 && prev.Heading[len(prev.Heading)-1] != '\n' {
			prev.Heading = append(append([]byte{}, prev.Heading...), '\n')
		}
	} else if len(d.Preamble) > 0 && d.Preamble[len(d.Preamble)-1] != '\n' {
		d.Preamble = append(append([]byte{}, d.Preamble...), '\n')
	}
	if at < len(d.Sections) && !bytes.HasSuffix(s.Bytes(), []byte{'\n'}) {
		s.Body = append(append([]byte{}, s.Body...), '\n')
	}
	d.Sections = append(d.Sections, Section{})
	copy(d.Sections[at+1:], d.Sections[at:])
	d.Sections[at] = s
}

// IDs lists the section ids in order.
func (d *Document) IDs() []ID {
	out := make([]ID, len(d.Sections))
	for i := range d.Sections {
		out[i] = d.Sections[i].ID
	}
	return out
}

// htmlKind is the kind of an HTML block (CommonMark's seven start conditions), as far as
// the fast scanner needs to know it.
type htmlKind int

const (
	htmlNone    htmlKind = 0
	htmlRaw     htmlKind = 1 // <script, <pre, <style, <textarea: ends at the closing tag
	htmlComment htmlKind = 2 // <!-- … -->
	htmlPI      htmlKind = 3 // <? … ?>
	htmlDecl    htmlKind = 4 // <!X … >
	htmlCDATA   htmlKind = 5 // <![CDATA[ … ]]>
	htmlBlock   htmlKind = 6 // a block-level tag: ends at a blank line
	htmlUnsure  htmlKind = 7 // maybe a kind 7 block, which depends on the paragraph before
)

// blockTags are the tag names that open a kind 6 HTML block.
var blockTags = map[string]bool{
	"address": true, "article": true, "aside": true, "base": true, "basefont": true, "blockquote": true,
	"body": true, "caption": true, "center": true, "col": true, "colgroup": true, "dd": true,
	"details": true, "dialog": true, "dir": true, "div": true, "dl": true, "dt": true,
	"fieldset": true, "figcaption": true, "figure": true, "footer": true, "form": true, "frame": true,
	"frameset": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
	"head": true, "header": true, "hr": true, "html": true, "iframe": true, "legend": true,
	"li": true, "link": true, "main": true, "menu": true, "menuitem": true, "meta": true,
	"nav": true, "noframes": true, "ol": true, "optgroup": true, "option": true, "p": true,
	"param": true, "search": true, "section": true, "summary": true, "table": true, "tbody": true,
	"td": true, "tfoot": true, "th": true, "thead": true, "title": true, "tr": true,
	"track": true, "ul": true,
}

var rawTags = []string{"script", "pre", "style", "textarea"}

// htmlBlockStart says which HTML block a line starting with '<' (at column 0) opens:
// htmlNone when it is only text, htmlUnsure when only goldmark can tell.
func htmlBlockStart(l []byte) htmlKind {
	t := bytes.TrimRight(l, "\r\n")
	switch {
	case bytes.HasPrefix(t, []byte("<!--")):
		return htmlComment
	case bytes.HasPrefix(t, []byte("<?")):
		return htmlPI
	case bytes.HasPrefix(t, []byte("<![CDATA[")):
		return htmlCDATA
	case len(t) > 2 && t[1] == '!' && t[2] >= 'A' && t[2] <= 'Z':
		return htmlDecl
	}
	rest := t[1:]
	closing := false
	if len(rest) > 0 && rest[0] == '/' {
		closing = true
		rest = bytes.TrimLeft(rest[1:], " ")
	}
	n := 0
	for n < len(rest) && (isASCIILetter(rest[n]) || (n > 0 && (rest[n] >= '0' && rest[n] <= '9' || rest[n] == '-'))) {
		n++
	}
	if n == 0 {
		return htmlNone // "< 5 apples", "<!doctype" in lower case: text
	}
	name, after := strings.ToLower(string(rest[:n])), rest[n:]
	if !closing {
		for _, raw := range rawTags {
			// After the name: white space as CommonMark (and goldmark's \s) has it, form feed
			// included, or the tag's end.
			if name == raw && (len(after) == 0 || after[0] == ' ' || after[0] == '\t' || after[0] == '\f' || after[0] == '>' || bytes.HasPrefix(after, []byte("/>"))) {
				return htmlRaw
			}
		}
	}
	if blockTags[name] {
		if len(after) == 0 || after[0] == ' ' || after[0] == '>' || bytes.HasPrefix(after, []byte("/>")) {
			return htmlBlock
		}
		return htmlUnsure
	}
	// Another tag alone on its line may open a kind 7 block, unless a paragraph is open.
	if bytes.HasSuffix(bytes.TrimRight(t, " \t"), []byte(">")) {
		return htmlUnsure
	}
	return htmlNone
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// closedOnFirstLine reports whether the block's end condition holds on its first line.
func (k htmlKind) closedOnFirstLine(l []byte) bool { return k != htmlBlock && k.closedBy(l) }

// closedBy reports whether line l ends a block of kind k: the kind's end marker for kinds 1
// to 5, a blank line for kind 6.
func (k htmlKind) closedBy(l []byte) bool {
	switch k {
	case htmlRaw:
		low := bytes.ToLower(l)
		for _, raw := range rawTags {
			if bytes.Contains(low, []byte("</"+raw+">")) {
				return true
			}
		}
		return false
	case htmlComment:
		return bytes.Contains(l, []byte("-->"))
	case htmlPI:
		return bytes.Contains(l, []byte("?>"))
	case htmlDecl:
		return bytes.Contains(l, []byte(">"))
	case htmlCDATA:
		return bytes.Contains(l, []byte("]]>"))
	case htmlBlock:
		return len(bytes.Trim(l, " \t\r\n")) == 0
	}
	return true
}
