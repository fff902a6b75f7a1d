package sections_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt/internal/golden"
	"github.com/ckpt-dev/ckpt/sections"
)

// goldenDoc is a six checkpoint whose sections are given in order; a section's body is its
// lines joined, each with eol.
func goldenDoc(eol string, secs ...[2]string) []byte {
	var b strings.Builder
	b.WriteString("# Session Checkpoint" + eol + eol + "_last_updated: 2026-04-01T22:00Z_" + eol + eol)
	for _, s := range secs {
		b.WriteString(s[0] + eol + s[1] + eol)
	}
	return []byte(b.String())
}

// steps is n task lines, edit changing line i (1-based) into what it returns ("" drops it).
func steps(n int, eol string, edit func(i int, l string) string) string {
	var ls []string
	for i := 1; i <= n; i++ {
		l := fmt.Sprintf("- [ ] step %d: keep `checkpoint_manager.py` in step", i)
		if edit != nil {
			l = edit(i, l)
		}
		if l != "" {
			ls = append(ls, l)
		}
	}
	return strings.Join(ls, eol) + eol
}

// TestDiffGolden pins what `ckpt diff` prints for each change (status, heading, unified
// diff) on the shapes of change that matter: a section rewritten whole, edits spread over
// a long section, sections moved, a last line without a line ending, CRLF line endings.
// The golden files were written by the go-udiff implementation this one replaced.
func TestDiffGolden(t *testing.T) {
	task := func(s string) [2]string { return [2]string{"### 🎯 Current Task", s} }
	stack := func(s string) [2]string { return [2]string{"### 📋 Task Stack", s} }
	done := func(s string) [2]string { return [2]string{"### ✅ This Session Completed", s} }
	keys := func(s string) [2]string { return [2]string{"### 🔑 Key Decisions", s} }
	notes := func(s string) [2]string { return [2]string{"### ⚠️ Notes & Blockers", s} }
	for _, tc := range []struct {
		name     string
		old, new []byte
	}{
		{"rewrite", goldenDoc("\n", task("Ship it\n"), stack(steps(200, "\n", nil))),
			goldenDoc("\n", task("Ship it\n"), stack(steps(200, "\n", func(i int, l string) string {
				return strings.Replace(l, "[ ]", "[x]", 1) + " (final)"
			})))},
		{"partial edits", goldenDoc("\n", task("Ship it\n"), stack(steps(200, "\n", nil)), keys("- D1\n")),
			goldenDoc("\n", task("Ship it\n"), stack(steps(200, "\n", func(i int, l string) string {
				switch i {
				case 3, 8: // one hunk
					return l + " (changed)"
				case 100:
					return "- [ ] a step before 100\n" + l
				case 150:
					return ""
				case 200:
					return l + " (last)"
				}
				return l
			})), keys("- D1\n- D2\n"))},
		{"moved sections", goldenDoc("\n", task("Ship it\n"), stack("- [ ] a\n- [ ] b\n"), done("- [x] c\n"), keys("- D1\n"), notes("none\n")),
			goldenDoc("\n", task("Ship it\n"), keys("- D1\n- D2\n"), stack("- [ ] a\n- [ ] b\n"), notes("none\n"), done("- [x] c\n"))},
		{"added and removed", goldenDoc("\n", task("Ship it\n"), stack("- [ ] a\n"), notes("none\n")),
			goldenDoc("\n", task("Ship it\n"), keys("- D1\n"), notes("none\n"))},
		{"no trailing newline", []byte(string(goldenDoc("\n", task("Ship it\n"), stack("- [ ] a\n- [ ] b\n"))) + "- [ ] c"),
			[]byte(string(goldenDoc("\n", task("Ship it\n"), stack("- [ ] a\n- [ ] b\n"))) + "- [ ] c, changed")},
		{"newline added at end", []byte(strings.TrimSuffix(string(goldenDoc("\n", task("Ship it\n"), stack("- [ ] a\n"))), "\n")),
			goldenDoc("\n", task("Ship it\n"), stack("- [ ] a\n"))},
		{"crlf", goldenDoc("\r\n", task("Ship it\r\n"), stack(steps(20, "\r\n", nil))),
			goldenDoc("\r\n", task("Ship it\r\n"), stack(steps(20, "\r\n", func(i int, l string) string {
				if i == 10 {
					return l + " (changed)"
				}
				return l
			})))},
		{"crlf to lf", goldenDoc("\r\n", task("Ship it\r\n"), stack(steps(5, "\r\n", nil))),
			goldenDoc("\n", task("Ship it\n"), stack(steps(5, "\n", nil)))},
		{"many hunks", goldenDoc("\n", stack(steps(120, "\n", nil))),
			goldenDoc("\n", stack(steps(120, "\n", func(i int, l string) string {
				if i%20 == 0 || i%20 == 4 {
					return l + " (changed)"
				}
				return l
			})))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			a, b := sections.Parse(tc.old, sections.Options{}), sections.Parse(tc.new, sections.Options{})
			for _, ch := range sections.Diff(a, b) {
				fmt.Fprintf(&out, "%s moved=%v %s\n", ch.Status, ch.Moved, ch.Heading)
				if ch.Status != sections.Moved {
					out.WriteString(ch.Unified())
				}
			}
			golden.Check(t, filepath.Join("testdata", "diff", strings.ReplaceAll(tc.name, " ", "-")+".txt"), out.Bytes())
		})
	}
}
