package sections

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// unifiedPairs are the texts the unified diff must print as go-udiff does; they seed the
// fuzz test too.
func unifiedPairs() map[string][2]string {
	numbered := func(n int, change func(i int, l string) string) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			b.WriteString(change(i, fmt.Sprintf("- [ ] step %d of the plan", i)))
		}
		return b.String()
	}
	same := func(_ int, l string) string { return l + "\n" }
	return map[string][2]string{
		"equal":               {"a\nb\n", "a\nb\n"},
		"both empty":          {"", ""},
		"from empty":          {"", "a\nb\n"},
		"to empty":            {"a\nb\n", ""},
		"one line":            {"a\n", "b\n"},
		"insert at start":     {"b\nc\n", "a\nb\nc\n"},
		"insert at end":       {"a\nb\n", "a\nb\nc\n"},
		"delete last":         {"a\nb\nc\n", "a\nb\n"},
		"old without eol":     {"a\nb", "a\nc\n"},
		"new without eol":     {"a\nb\n", "a\nc"},
		"both without eol":    {"a\nb", "a\nc"},
		"eol added":           {"a\nb", "a\nb\n"},
		"eol removed":         {"a\nb\n", "a\nb"},
		"append after no eol": {"a\nb", "a\nb\nc"},
		"only open line":      {"x", "y"},
		"empty to open line":  {"", "y"},
		"open line to empty":  {"x", ""},
		"crlf edit":           {"a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n"},
		"crlf to lf":          {"a\r\nb\r\nc\r\n", "a\nb\nc\n"},
		"blank lines":         {"\n\n\na\n\n\n", "\n\na\n\n\n\n"},
		"duplicates":          {"x\ny\nx\ny\nx\n", "y\nx\nx\ny\ny\nx\n"},
		"rewrite": {numbered(300, same), numbered(300, func(i int, l string) string {
			return strings.Replace(l, "[ ]", "[x]", 1) + " (done)\n"
		})},
		"partial": {numbered(300, same), numbered(300, func(i int, l string) string {
			switch i {
			case 10, 14: // one hunk holding two edits
				return l + " (changed)\n"
			case 150: // an insertion before a line
				return "- [ ] a new step\n" + l + "\n"
			case 200: // a deletion
				return ""
			case 299:
				return l + " (last but one)\n"
			}
			return l + "\n"
		})},
		"many edits": {numbered(400, same), numbered(400, func(i int, l string) string {
			if i%5 == 0 {
				return l + " (changed)\n"
			}
			return l + "\n"
		})},
		// Edits 6 unchanged lines apart share a hunk; 7 apart they do not.
		"gap of six": {numbered(30, same), numbered(30, func(i int, l string) string {
			if i == 10 || i == 17 {
				return l + " (changed)\n"
			}
			return l + "\n"
		})},
		"gap of seven": {numbered(30, same), numbered(30, func(i int, l string) string {
			if i == 10 || i == 18 {
				return l + " (changed)\n"
			}
			return l + "\n"
		})},
		"moved lines": {numbered(40, same), numbered(40, func(i int, l string) string {
			switch i {
			case 5:
				return ""
			case 30:
				return l + "\n" + "- [ ] step 5 of the plan\n"
			}
			return l + "\n"
		})},
	}
}

// TestUnifiedMatchesUdiff: the diff prints what go-udiff prints (what ckpt printed before),
// through both UnifiedDiff and WriteUnified, on its own path (not by falling back to
// go-udiff), and applying it to the old text gives the new one.
func TestUnifiedMatchesUdiff(t *testing.T) {
	for name, p := range unifiedPairs() {
		t.Run(name, func(t *testing.T) { checkUnified(t, []byte(p[0]), []byte(p[1])) })
	}
}

func FuzzUnified(f *testing.F) {
	for _, p := range unifiedPairs() {
		f.Add([]byte(p[0]), []byte(p[1]))
	}
	f.Fuzz(func(t *testing.T, old, new []byte) {
		checkUnified(t, old, new)
		checkUnified(t, asLines(old), asLines(new))
	})
}

// asLines turns each byte into one of a few short lines, so that random input has many
// equal lines for the LCS to pair (raw random bytes have few line endings); a byte of 0xff
// drops the line ending of the line before it.
func asLines(b []byte) []byte {
	fuzzLines := []string{"a\n", "b\n", "c\n", "d\n", "\n", "a\r\n", "- [ ] x\n", "e\n"}
	var out []byte
	for _, c := range b {
		if c == 0xff {
			if n := len(out); n > 0 && out[n-1] == '\n' {
				out = out[:n-1]
			}
			continue
		}
		out = append(out, fuzzLines[c%byte(len(fuzzLines))]...)
	}
	return out
}

// newSide is a hunk header's new-side range, which go-udiff gets wrong after a hunk that
// holds context between two edits: the comparison leaves it out, and applyUnified checks it.
var newSide = regexp.MustCompile(`(?m)^(@@ -\S+) \+\S+ @@$`)

func checkUnified(t *testing.T, old, new []byte) {
	t.Helper()
	want := udiffUnified("a/x", "b/x", old, new)
	if _, ok := unifiedOf(old, new); !ok {
		t.Fatalf("unifiedOf refused %q -> %q", old, new)
	}
	got := UnifiedDiff("a/x", "b/x", old, new)
	if newSide.ReplaceAllString(got, "$1") != newSide.ReplaceAllString(want, "$1") {
		t.Fatalf("UnifiedDiff of %q -> %q:\n%s\ngo-udiff:\n%s", old, new, got, want)
	}
	var buf bytes.Buffer
	if err := WriteUnified(&buf, "a/x", "b/x", old, new); err != nil || buf.String() != got {
		t.Fatalf("WriteUnified: %v\n%s\nwant\n%s", err, buf.String(), got)
	}
	applied, err := applyUnified(old, got)
	if err != nil {
		t.Fatalf("apply %q to %q: %v", got, old, err)
	}
	if !bytes.Equal(applied, new) {
		t.Fatalf("applying the diff to %q gave %q, want %q\n%s", old, applied, new, got)
	}
}

// applyUnified applies a unified diff to old by the old side's line numbers, checking every
// context and deleted line.
func applyUnified(old []byte, diff string) ([]byte, error) {
	if diff == "" {
		return old, nil
	}
	ol := cutLines(old)
	var out []byte
	next := 0 // the next old line to copy
	ls := strings.SplitAfter(diff, "\n")
	if len(ls) < 3 || !strings.HasPrefix(ls[0], "--- ") || !strings.HasPrefix(ls[1], "+++ ") {
		return nil, fmt.Errorf("no header")
	}
	var last byte // the kind of the previous line
	for i := 2; i < len(ls); i++ {
		l := ls[i]
		switch {
		case l == "":
		case strings.HasPrefix(l, "@@ -"):
			from, to, _ := strings.Cut(strings.TrimPrefix(l, "@@ -"), " +")
			n, err := rangeStart(from)
			if err != nil {
				return nil, fmt.Errorf("hunk %q", l)
			}
			if n < next || n > ol.n() {
				return nil, fmt.Errorf("hunk %q at %d after %d", l, n, next)
			}
			out = append(out, ol.span(next, n)...)
			next = n
			// The new side starts where the new text is now.
			if m, err := rangeStart(strings.TrimSuffix(strings.TrimSuffix(to, "\n"), " @@")); err != nil || m != bytes.Count(out, []byte("\n")) {
				return nil, fmt.Errorf("hunk %q: the new side starts at line %d", l, bytes.Count(out, []byte("\n"))+1)
			}
		case l == "\\ No newline at end of file\n":
			// The printer added a line ending to a line without one: an added line got it
			// in out; a context line was copied from old, without it.
			if last == '+' {
				out = out[:len(out)-1]
			}
		case l[0] == ' ' || l[0] == '-':
			if next >= ol.n() {
				return nil, fmt.Errorf("line %q past the end", l)
			}
			have := string(ol.line(next))
			if want := l[1:]; have != want && have+"\n" != want {
				return nil, fmt.Errorf("line %d is %q, the diff says %q", next+1, have, want)
			}
			if l[0] == ' ' {
				out = append(out, have...)
			}
			next++
		case l[0] == '+':
			out = append(out, l[1:]...)
		default:
			return nil, fmt.Errorf("line %q", l)
		}
		if l != "" {
			last = l[0]
		}
	}
	return append(out, ol.span(next, ol.n())...), nil
}

// rangeStart is the 0-based line a hunk range "start,count" starts at: an empty range
// names the line before it.
func rangeStart(r string) (int, error) {
	start, count, _ := strings.Cut(r, ",")
	n, err := strconv.Atoi(start)
	if count != "0" {
		n--
	}
	return n, err
}

// TestUnifiedGitApply: git apply takes the diff and makes the new text from the old one.
func TestUnifiedGitApply(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	for name, p := range unifiedPairs() {
		d := UnifiedDiff("a/x", "b/x", []byte(p[0]), []byte(p[1]))
		if d == "" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "x"), []byte(p[0]), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "patch"), []byte(d), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("git", "apply", "patch")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git apply: %v\n%s\n%s", err, out, d)
			}
			got, err := os.ReadFile(filepath.Join(dir, "x"))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != p[1] {
				t.Fatalf("git apply gave %q, want %q", got, p[1])
			}
		})
	}
}
