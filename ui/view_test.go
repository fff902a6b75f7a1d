package ui

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt/knowledge"
)

func TestParseUnifiedAndSplit(t *testing.T) {
	u := "--- a/🔑\n+++ b/🔑\n@@ -1,4 +1,4 @@\n ### 🔑 Key Decisions\n--- old rule\n-second\n+++ new rule\n ctx\n\\ No newline at end of file\n"
	lines := parseUnified(u)
	want := []diffLine{
		{Kind: "hunk", Text: "@@ -1,4 +1,4 @@"},
		{Kind: "ctx", Old: 1, New: 1, Text: "### 🔑 Key Decisions"},
		{Kind: "del", Old: 2, Text: "-- old rule"},
		{Kind: "del", Old: 3, Text: "second"},
		{Kind: "add", New: 2, Text: "++ new rule"},
		{Kind: "ctx", Old: 4, New: 3, Text: "ctx"},
		{Kind: "note", Text: `\ No newline at end of file`},
	}
	if !reflect.DeepEqual(lines, want) {
		t.Fatalf("parseUnified:\n got %+v\nwant %+v", lines, want)
	}
	if a, d := diffStat(lines); a != 1 || d != 2 {
		t.Errorf("diffStat = +%d -%d, want +1 -2", a, d)
	}
	rows := splitRows(lines)
	wantRows := []splitRow{
		{Hunk: true, Text: "@@ -1,4 +1,4 @@"},
		{OldNo: 1, NewNo: 1, Old: "### 🔑 Key Decisions", New: "### 🔑 Key Decisions", OldKind: "ctx", NewKind: "ctx"},
		{OldNo: 2, NewNo: 2, Old: "-- old rule", New: "++ new rule", OldKind: "del", NewKind: "add"},
		{OldNo: 3, Old: "second", OldKind: "del"},
		{OldNo: 4, NewNo: 3, Old: "ctx", New: "ctx", OldKind: "ctx", NewKind: "ctx"},
	}
	if !reflect.DeepEqual(rows, wantRows) {
		t.Fatalf("splitRows:\n got %+v\nwant %+v", rows, wantRows)
	}
}

func TestParseUnifiedAddedSection(t *testing.T) {
	lines := parseUnified("--- a/x\n+++ b/x\n@@ -0,0 +1,2 @@\n+one\n+two\n")
	if len(lines) != 3 || lines[1].New != 1 || lines[2].New != 2 || lines[2].Kind != "add" {
		t.Fatalf("%+v", lines)
	}
	if parseUnified("") != nil {
		t.Error("an empty diff has lines")
	}
}

func TestMarkdownShowsHTMLAsText(t *testing.T) {
	tests := []struct {
		src  string
		want []string
		not  []string
	}{
		{"<script>alert(1)</script>\n", []string{"&lt;script&gt;alert(1)&lt;/script&gt;"}, []string{"<script"}},
		{"<div onclick=\"x()\">\nhi\n</div>\n", []string{"&lt;div onclick="}, []string{"<div"}},
		{"a <img src=x onerror=alert(1)> b\n", []string{"&lt;img src=x onerror=alert(1)&gt;"}, []string{"<img"}},
		{"[x](javascript:alert(1))\n", nil, []string{"javascript:"}},
		{"# Title\n\n- [x] done\n\n| a | b |\n|---|---|\n| 1 | 2 |\n", []string{"<h1", "<table>", `type="checkbox"`}, nil},
		{"<!-- comment -->\n", []string{"&lt;!-- comment --&gt;"}, []string{"<!--"}},
	}
	for _, tc := range tests {
		got := string(renderMarkdown([]byte(tc.src)))
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%q renders %q: lacks %q", tc.src, got, w)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(got, w) {
				t.Errorf("%q renders %q: has %q", tc.src, got, w)
			}
		}
	}
}

func TestGraphSVG(t *testing.T) {
	p := func(s string) []knowledge.Provenance {
		return []knowledge.Provenance{{Session: s, Commit: "abc1234", Time: "2026-04-01T22:00Z"}}
	}
	entries := []*knowledge.Entry{
		{ID: "K-00000001", State: "accepted", Text: "Use <b>blake3</b> & \"quotes\"", Provenance: p("alpha")},
		{ID: "K-00000002", State: "pending", Text: "Key per session", Provenance: p("beta"), Supersedes: []string{"K-00000001"}},
		{ID: "K-00000003", State: "rejected", Text: "Loop a", Supersedes: []string{"K-00000004"}},
		{ID: "K-00000004", State: "pending", Text: "Loop b", Supersedes: []string{"K-00000003", "K-99999999"}},
	}
	svg := string(graphSVG(entries))
	for _, w := range []string{`<svg class="kg"`, `href="/s/alpha/"`, `href="#K-00000002"`, "&lt;b&gt;blake3&lt;/b&gt; &amp; &#34;quotes&#34;",
		`class="node entry pending"`, `class="node entry rejected"`, `class="edge supersedes"`, "K-00000002 supersedes K-00000001"} {
		if !strings.Contains(svg, w) {
			t.Errorf("svg lacks %q", w)
		}
	}
	if strings.Contains(svg, "<b>") {
		t.Error("svg has unescaped text")
	}
	// The superseding entry sits right of the one it supersedes.
	x := func(id string) int {
		i := strings.Index(svg, `href="#`+id+`"`)
		j := strings.Index(svg[i:], `<rect x="`)
		rest := svg[i+j+len(`<rect x="`):]
		n, err := strconv.Atoi(rest[:strings.Index(rest, `"`)])
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if x("K-00000001") >= x("K-00000002") {
		t.Errorf("K-00000002 (x=%d) is not right of K-00000001 (x=%d)", x("K-00000002"), x("K-00000001"))
	}
	if graphSVG(nil) != "" {
		t.Error("an empty graph draws something")
	}
}

func TestQueryTerms(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"blake3", []string{"blake3"}},
		{`  "circuit   breaker" cron `, []string{"circuit breaker", "cron"}},
		{`a"b c"`, []string{"a", "b c"}},
		{`"unclosed phrase`, []string{"unclosed phrase"}},
		{`""`, nil},
		{"", nil},
	}
	for _, tc := range tests {
		if got := queryTerms(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("queryTerms(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestTemplatesParse parses every page's template: a mistake in one shows here, not on the
// first visit to that page.
func TestTemplatesParse(t *testing.T) {
	v, err := loadViews()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range pageNames {
		if _, err := v.page(name); err != nil {
			t.Error(err)
		}
	}
	if _, err := v.page("nonexistent"); err == nil {
		t.Error("a page without a template parses")
	}
}
