package sections

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

func corpus(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "corpus", name))
	if err != nil {
		t.Fatalf("corpus: %v", err)
	}
	return b
}

func ids(d *Document) string {
	var s []string
	for _, x := range d.Sections {
		s = append(s, string(x.ID))
	}
	return strings.Join(s, ",")
}

func TestParseCorpus(t *testing.T) {
	for _, tc := range []struct {
		file  string
		ids   string
		level int
	}{
		{"six/checkpoint.md", "🎯,📋,✅,🔑,📡,⚠️", 3},
		{"eleven/checkpoint.md", "§1,§2,§3,§4,§5,§6,§7,§8,§9,§10,§11", 2},
		{"eleven/MEMORY.md", "项目上下文,规则,架构决策,已发现的持久知识", 2},
	} {
		t.Run(tc.file, func(t *testing.T) {
			src := corpus(t, tc.file)
			d := Parse(src, Options{})
			if got := ids(d); got != tc.ids {
				t.Errorf("ids = %s, want %s", got, tc.ids)
			}
			if d.Level != tc.level {
				t.Errorf("level = %d, want %d", d.Level, tc.level)
			}
			if !bytes.Equal(d.Render(), src) {
				t.Errorf("render differs from source")
			}
		})
	}
}

func TestParseEdgeCases(t *testing.T) {
	for _, tc := range []struct {
		name     string
		src      string
		opts     Options
		ids      string
		preamble string
	}{
		{"empty", "", Options{}, "", ""},
		{"no final newline", "## A\nx", Options{}, "a", ""},
		{"crlf", "# T\r\n\r\n## A\r\n_dir_\r\nbody\r\n## B\r\n", Options{}, "a,b", "# T\r\n\r\n"},
		{"bom", "\xEF\xBB\xBF## A\nx\n", Options{}, "a", "\xEF\xBB\xBF"},
		{"front matter", "---\ntitle: x\n## not a heading\n---\n## A\n", Options{}, "a", "---\ntitle: x\n## not a heading\n---\n"},
		{"heading in fence", "## A\n```\n## not\n```\n## B\n", Options{}, "a,b", ""},
		{"tilde fence", "## A\n~~~md\n## not\n~~~\n", Options{}, "a", ""},
		{"setext under text", "## A\ntext\n---\n## B\n", Options{}, "a,b", ""},
		{"setext only", "Title\n---\nbody\n", Options{Level: 2}, "", "Title\n---\nbody\n"},
		{"deeper heading is body", "## A\n### sub\n## B\n", Options{}, "a,b", ""},
		{"explicit level", "## A\n### sub\n## B\n", Options{Level: 3}, "sub", "## A\n"},
		{"indented 4 is code", "    ## A\n## B\n", Options{}, "b", "    ## A\n"},
		{"heading in blockquote", "> ## A\n## B\n", Options{}, "b", "> ## A\n"},
		{"closing hashes", "## A ##\n", Options{}, "a", ""},
		{"empty heading", "##\n## \n## B\n", Options{}, ",,b", ""},
		{"html block", "<div>\n## in html\n</div>\n\n## B\n", Options{}, "b", "<div>\n## in html\n</div>\n\n"},
		{"emoji ids", "### 🎯 Current Task\n### ⚠️ Notes\n", Options{}, "🎯,⚠️", ""},
		{"section numbers", "## §10 设计决策\n## §2 下一个\n", Options{}, "§10,§2", ""},
		{"nul bytes", "## A\x00\n\x00## B\n", Options{}, "a\x00", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Parse([]byte(tc.src), tc.opts)
			if got := ids(d); got != tc.ids {
				t.Errorf("ids = %q, want %q", got, tc.ids)
			}
			if string(d.Preamble) != tc.preamble {
				t.Errorf("preamble = %q, want %q", d.Preamble, tc.preamble)
			}
			if got := string(d.Render()); got != tc.src {
				t.Errorf("render = %q, want %q", got, tc.src)
			}
		})
	}
}

func TestSectionParts(t *testing.T) {
	d := Parse(corpus(t, "eleven/checkpoint.md"), Options{})
	s := d.Section("§4")
	if s == nil {
		t.Fatal("no §4")
	}
	if got, want := s.HeadingLine(), "## §4 任务树"; got != want {
		t.Errorf("heading = %q, want %q", got, want)
	}
	if got, want := s.DirectiveLine(), "_真相来源 = task 工具数据库_"; got != want {
		t.Errorf("directive = %q, want %q", got, want)
	}
	if s.Line != 15 {
		t.Errorf("line = %d, want 15", s.Line)
	}
	six := Parse(corpus(t, "six/checkpoint.md"), Options{})
	if d := six.Section("📡"); d == nil || d.Directive != nil {
		t.Errorf("📡: a metadata line is not a directive")
	}
}

func TestFind(t *testing.T) {
	six := Parse(corpus(t, "six/checkpoint.md"), Options{})
	eleven := Parse(corpus(t, "eleven/checkpoint.md"), Options{})
	for _, tc := range []struct {
		doc   *Document
		query string
		want  ID
	}{
		{six, "🎯", "🎯"},
		{six, "Current Task", "🎯"},
		{six, "current   task", "🎯"},
		{six, "🔑 Key Decisions", "🔑"},
		{six, "⚠", "⚠️"},
		{six, "Notes & Blockers", "⚠️"},
		{eleven, "§3", "§3"},
		{eleven, "任务树", "§4"},
		{eleven, "§4 任务树", "§4"},
		{eleven, "nothing", ""},
	} {
		var got ID
		if s := tc.doc.Find(tc.query); s != nil {
			got = s.ID
		}
		if got != tc.want {
			t.Errorf("Find(%q) = %q, want %q", tc.query, got, tc.want)
		}
	}
}

func TestMetadata(t *testing.T) {
	d := Parse(corpus(t, "six/checkpoint.md"), Options{})
	got := map[string]string{}
	for _, m := range d.Metadata() {
		got[m.Key] = m.Value
	}
	want := map[string]string{
		"last_updated":     "2026-04-01T22:00Z",
		"session_id":       "ece6c795-b427-439f-8244-cfdeac8f3b55",
		"delta_since_last": "2026-04-01T21:45Z → 2026-04-01T22:00Z",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if !d.SetMeta("last_updated", "2026-05-01T10:00Z") {
		t.Fatal("SetMeta found no line")
	}
	if !d.SetMeta("delta_since_last", "a → b") {
		t.Fatal("SetMeta found no delta line")
	}
	out := string(d.Render())
	if !strings.Contains(out, "_last_updated: 2026-05-01T10:00Z_\n_session_id") || !strings.Contains(out, "_delta_since_last: a → b_\n") {
		t.Errorf("SetMeta result:\n%s", out)
	}
	if d.SetMeta("nope", "x") {
		t.Error("SetMeta of an absent key reported success")
	}
	crlf := Parse([]byte("_last_updated: x_\r\n"), Options{})
	crlf.SetMeta("last_updated", "y")
	if got := string(crlf.Render()); got != "_last_updated: y_\r\n" {
		t.Errorf("crlf SetMeta = %q", got)
	}
}

func FuzzParseRender(f *testing.F) {
	for _, name := range []string{"six/checkpoint.md", "eleven/checkpoint.md", "eleven/MEMORY.md", "eleven/notes.md"} {
		if b, err := os.ReadFile(filepath.Join("..", "testdata", "corpus", name)); err == nil {
			f.Add(b, 0)
		}
	}
	f.Add([]byte("---\na: b\n---\n## A\r\n_x_\r\n```\n## B\n```\nT\n---\n"), 2)
	f.Fuzz(func(t *testing.T, src []byte, level int) {
		d := Parse(src, Options{Level: level % 7})
		if got := d.Render(); !bytes.Equal(got, src) {
			t.Fatalf("render(parse(x)) != x\nx:   %q\ngot: %q", src, got)
		}
		line := 1 + bytes.Count(d.Preamble, []byte{'\n'})
		for _, s := range d.Sections {
			if s.Line != line {
				t.Fatalf("section %q at line %d, counted %d", s.ID, s.Line, line)
			}
			if len(s.Heading) == 0 || s.Heading[bytes.IndexFunc(s.Heading, func(r rune) bool { return r != ' ' })] != '#' {
				t.Fatalf("section heading %q does not start with #", s.Heading)
			}
			line += bytes.Count(s.Bytes(), []byte{'\n'})
		}
		_ = d.Metadata()
	})
}

func BenchmarkParse1MB(b *testing.B) {
	src := bigCheckpoint(1 << 20)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		Parse(src, Options{})
	}
}

// bigCheckpoint grows the six corpus checkpoint to about n bytes by repeating its sections'
// bodies.
func bigCheckpoint(n int) []byte {
	var buf bytes.Buffer
	buf.WriteString("# Session Checkpoint\n\n_last_updated: 2026-04-01T22:00Z_\n\n---\n\n")
	heads := []string{"### 🎯 Current Task", "### 📋 Task Stack", "### ✅ This Session Completed", "### 🔑 Key Decisions", "### 📡 Recovered Delta", "### ⚠️ Notes & Blockers"}
	per := n / len(heads)
	for i, h := range heads {
		buf.WriteString(h + "\n")
		start := buf.Len()
		for j := 0; buf.Len()-start < per; j++ {
			buf.WriteString("- [ ] item " + strings.Repeat("x", i) + " number " + string(rune('a'+j%26)) + " with `code` and a https://example.com/link\n")
		}
		buf.WriteString("\n")
	}
	return buf.Bytes()
}

// commonMarkHeadings is the reference the section parser is held to: the top-level ATX
// headings that goldmark's full default parser (block and inline parsers, the link reference
// definition transformer) finds in body. It shares no parser configuration with Parse.
func commonMarkHeadings(body []byte) []heading {
	src := append([]byte(nil), body...)
	root := goldmark.DefaultParser().Parse(text.NewReader(src))
	var out []heading
	for n := root.FirstChild(); n != nil; n = n.NextSibling() {
		h, ok := n.(*ast.Heading)
		if !ok {
			continue
		}
		// An ATX heading's position is its first '#', at most three spaces into its line;
		// a setext heading's is its text's, which never opens like an ATX heading there.
		pos := h.Pos()
		start := bytes.LastIndexByte(src[:max(pos, 0)], '\n') + 1
		if pos < 0 || pos >= len(src) || src[pos] != '#' || pos-start > 3 ||
			len(bytes.Trim(src[start:pos], " ")) != 0 || atxLevel(src[pos:]) != h.Level {
			continue
		}
		out = append(out, heading{start: start, level: h.Level})
	}
	return out
}

// FuzzScanAgreesWithGoldmark holds the section parser's headings (the line scanner, and the
// block parser it falls back on) to those of goldmark's full CommonMark parser.
func FuzzScanAgreesWithGoldmark(f *testing.F) {
	f.Add([]byte("# T\n- a\n# b\n> q\n## c\n    ## code\n#\tx\n####### seven\n#\r\n"))
	f.Add([]byte("para\n## h\ntext\n---\n"))
	f.Add([]byte("<div>\n## in\n\n## out\n<!-- c\n# x\n-->\n<pre a>\n## p\n</PRE>\n# y\n<?x ?>\n<!A\n>\n<![CDATA[ ]]>\n<td/>\n## z\n"))
	f.Add([]byte("text\n<div>\n## in\n\n< p\n## y\n<script\n## s\n</script>\n## t\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		want := commonMarkHeadings(body)
		if got := atxHeadings(body, 0); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("parser found %v, CommonMark %v in %q", got, want, body)
		}
		if fast, ok := scanHeadings(body, 0); ok && fmt.Sprint(fast) != fmt.Sprint(want) {
			t.Fatalf("scan found %v, CommonMark %v in %q", fast, want, body)
		}
	})
}

func TestHeadingsAfterLinkReferenceDefinitions(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []heading
	}{
		// "===" under a definition is text; the tag line continues that paragraph
		{"definition, ===, tag line", "[r]: /u\n===\n<span>\n## x\n", []heading{{19, 2}}},
		// "-" under a definition is an empty list item that takes the indented heading
		{"definition, -, indented heading", "[r]: /u\n-\n  ## x\n", nil},
		// "---" under a definition is a thematic break
		{"definition, ---", "[r]: /u\n---\n<span>\n## x\n", nil},
		// a paragraph left after the definitions still makes a setext heading
		{"definition then text, ===", "[r]: /u\ntext\n===\n<span>\n## x\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := atxHeadings([]byte(tc.body), 0); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("headings = %v, want %v", got, tc.want)
			}
			if ref := commonMarkHeadings([]byte(tc.body)); fmt.Sprint(ref) != fmt.Sprint(tc.want) {
				t.Errorf("goldmark's full parser finds %v: the case is wrong", ref)
			}
		})
	}
}

func TestParseLeavesBytesBeyondTheInputAlone(t *testing.T) {
	// the goldmark path (an HTML line) on a document ending in an indented code block
	// without a final newline: goldmark forces a newline onto that last line
	buf := []byte("<p>\n\n## A\na\n## B\n\n    codeXYZ")
	n := len(buf) - 3
	Parse(buf[:n], Options{})
	if string(buf[n:]) != "XYZ" {
		t.Errorf("Parse wrote beyond its input: %q", buf[n:])
	}
}

func TestScanHandlesHTMLBlocks(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		ok   bool // the fast scanner decides on its own
	}{
		{"div block ends at a blank line", "<div>\n## inside\n\n## after\n", true},
		{"comment over lines", "<!-- a\n## inside\n-->\n## after\n", true},
		{"one-line comment", "<!-- a -->\n## after\n", true},
		{"pre until its closing tag", "<pre>\n## inside\n\n## still\n</pre>\n## after\n", true},
		{"processing instruction", "<?php\n## x\n?>\n## y\n", true},
		{"declaration", "<!DOCTYPE html>\n## y\n", true},
		{"cdata", "<![CDATA[\n## x\n]]>\n## y\n", true},
		{"not html: lower-case doctype", "<!doctype html>\n## y\n", true},
		{"not html: a comparison", "< 5 apples\n## y\n", true},
		{"kind 7 is goldmark's", "<span>\n## x\n\n## y\n", false},
		{"indented html is goldmark's", "- a\n  <div>\n## y\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fast, ok := scanHeadings([]byte(tc.body), 0)
			if ok != tc.ok {
				t.Fatalf("scan ok = %v, want %v", ok, tc.ok)
			}
			slow := goldmarkHeadings([]byte(tc.body), 0)
			if ok && fmt.Sprint(fast) != fmt.Sprint(slow) {
				t.Errorf("scan %v, goldmark %v", fast, slow)
			}
		})
	}
}
