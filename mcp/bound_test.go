package mcp

import (
	"strings"
	"testing"
)

func TestCutText(t *testing.T) {
	for _, tc := range []struct {
		name, s string
		n       int
		cut     string
		rest    int
	}{
		{"fits", "a\nb\n", 10, "a\nb\n", 0},
		{"at a line end", "aaa\nbbb\nccc\n", 9, "aaa\nbbb\n", 4},
		{"one long line, at a character boundary", "ééééé", 5, "éé", 6},
		{"nothing", "", 4, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cut, rest := cutText(tc.s, tc.n)
			if cut != tc.cut || rest != tc.rest || len(cut)+rest != len(tc.s) {
				t.Fatalf("cutText(%q, %d) = %q, %d; want %q, %d", tc.s, tc.n, cut, rest, tc.cut, tc.rest)
			}
		})
	}
}

func TestPageFitsBudget(t *testing.T) {
	big := make([]string, 100)
	for i := range big {
		big[i] = strings.Repeat("x", 1000)
	}
	got, p := page(big, 0, 100, "lines")
	if len(got) != 16 || p.NextCursor != "16" || p.Truncated != `truncated, 84 more lines: call again with cursor "16"` {
		t.Fatalf("%d items, %+v", len(got), p)
	}
	// One item larger than the budget still comes, alone: no page is ever empty.
	huge := []string{strings.Repeat("y", 20000), "z"}
	got, p = page(huge, 0, 10, "items")
	if len(got) != 1 || p.NextCursor != "1" {
		t.Fatalf("%d items, %+v", len(got), p)
	}
	got, p = page(huge, 5, 10, "items")
	if len(got) != 0 || got == nil || p.NextCursor != "" {
		t.Fatalf("past the end: %v, %+v", got, p)
	}
}

func TestLimitsAndCursors(t *testing.T) {
	if n, err := limitOf(0, 20, 100); n != 20 || err != nil {
		t.Fatal(n, err)
	}
	if n, err := limitOf(1000, 20, 100); n != 100 || err != nil {
		t.Fatal(n, err)
	}
	if _, err := limitOf(-1, 20, 100); err == nil {
		t.Fatal("negative limit accepted")
	}
	for _, c := range []string{"x", "-1", "1.5"} {
		if _, err := offsetOf(c); err == nil {
			t.Fatalf("cursor %q accepted", c)
		}
	}
	for _, tc := range []struct {
		cursor     string
		at, within int
		bad        bool
	}{
		{"", 0, 0, false}, {"3", 3, 0, false}, {"2:400", 2, 400, false}, {"2:", 0, 0, true}, {":4", 0, 0, true}, {"a:b", 0, 0, true},
	} {
		at, within, err := diffCursor(tc.cursor)
		if (err != nil) != tc.bad || !tc.bad && (at != tc.at || within != tc.within) {
			t.Errorf("diffCursor(%q) = %d, %d, %v", tc.cursor, at, within, err)
		}
	}
}

func TestNoteEntry(t *testing.T) {
	for _, tc := range []struct {
		name, tag, text, want, err string
	}{
		{"tagged", "decision", "Use MCP", "- [decision] Use MCP\n", ""},
		{"untagged", "", "  plain  ", "- plain\n", ""},
		{"durable", "rule!", "Never force-push", "- [rule!] Never force-push\n", ""},
		{"continuation lines indented, blank lines dropped", "note", "first\n\n  second\r\nthird", "- [note] first\n  second\n  third\n", ""},
		{"control characters", "", "bell\x07 esc\x1b[31m", "- bell  esc [31m\n", ""},
		{"bad tag", "Decision", "x", "", "tag"},
		{"empty", "", " \n\t", "", "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := noteEntry(tc.tag, tc.text)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("noteEntry = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestParseResource(t *testing.T) {
	for _, tc := range []struct {
		uri                         string
		session, file, rev, section string
		bad                         bool
	}{
		{uri: "ckpt://alpha/checkpoint.md", session: "alpha", file: "checkpoint.md"},
		{uri: "ckpt://alpha/checkpoint.md@HEAD~3", session: "alpha", file: "checkpoint.md", rev: "HEAD~3"},
		{uri: "ckpt://alpha/checkpoint.md@before-compact#%F0%9F%94%91", session: "alpha", file: "checkpoint.md", rev: "before-compact", section: "🔑"},
		{uri: "ckpt://alpha/notes.md#Key%20Decisions", session: "alpha", file: "notes.md", section: "Key Decisions"},
		{uri: "ckpt://alpha/checkpoint.md@2026-04-01T22:00Z#🔑", session: "alpha", file: "checkpoint.md", rev: "2026-04-01T22:00Z", section: "🔑"},
		{uri: "ckpt://alpha", bad: true},
		{uri: "ckpt:///checkpoint.md", bad: true},
		{uri: "file:///etc/passwd", bad: true},
		{uri: "ckpt://alpha/%zz", bad: true},
	} {
		s, f, r, sec, err := parseResource(tc.uri)
		if (err != nil) != tc.bad || !tc.bad && (s != tc.session || f != tc.file || r != tc.rev || sec != tc.section) {
			t.Errorf("parseResource(%q) = %q %q %q %q, %v", tc.uri, s, f, r, sec, err)
		}
	}
}
