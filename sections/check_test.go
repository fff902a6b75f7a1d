package sections

import (
	"strconv"
	"strings"
	"testing"
)

func TestCheckFindings(t *testing.T) {
	tmpl := Parse([]byte("# T\n\n_last_updated: x_\n\n## §1 A\n_dir one_\nbody\n\n## §2 B\n_dir two_\n\n## §3 C\n"), Options{})
	rules := Rules{Blockquote: "§1", MaxOpen: map[ID]int{"§2": 1}, TaskSection: "§3", TaskIDs: map[string]bool{"T1": true}}
	for _, tc := range []struct {
		name string
		doc  string
		want []string // "line:severity:substring"
	}{
		{"valid", "## §1 A\n_dir one_\n> \"q\"\n## §2 B\n_dir two_\n## §3 C\n- 🔵 T1 x\n", []string{"1:warning:_last_updated: …_ is missing"}},
		{"no blockquote", "## §1 A\n_dir one_\nq\n## §2 B\n_dir two_\n## §3 C\n", []string{"1:error:holds no blockquoted", "1:warning:missing"}},
		{"directive changed and missing", "## §1 A\n_dir 1_\n> q\n## §2 B\n## §3 C\n", []string{"2:error:directive line changed", "5:error:directive line missing"}},
		{"heading changed", "## §1 Aa\n_dir one_\n> q\n## §2 B\n_dir two_\n## §3 C\n", []string{"1:error:heading changed: want \"## §1 A\""}},
		{"too many open items", "## §1 A\n_dir one_\n> q\n## §2 B\n_dir two_\n- [ ] a\n- [ ] b\n## §3 C\n", []string{"4:warning:§2 has 2 open items; keep at most 1"}},
		{"unknown task", "## §1 A\n_dir one_\n> q\n## §2 B\n_dir two_\n## §3 C\n- 🔵 T9 x\n  - ✅ T1 y\n", []string{"7:error:task T9 is not in the task database"}},
		{"crlf is fine", "## §1 A\r\n_dir one_\r\n> q\r\n## §2 B\r\n_dir two_\r\n## §3 C\r\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := Check(Parse([]byte(tc.doc), Options{Level: 2}), tmpl, rules)
			for _, w := range tc.want {
				parts := strings.SplitN(w, ":", 3)
				found := false
				for _, f := range fs {
					if parts[0] == itoa(f.Line) && string(f.Severity) == parts[1] && strings.Contains(f.Message, parts[2]) {
						found = true
					}
				}
				if !found {
					t.Errorf("want %s in %v", w, fs)
				}
			}
			if tc.want == nil {
				for _, f := range fs {
					if f.Severity == Error {
						t.Errorf("unexpected %v", f)
					}
				}
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// FuzzCheck holds Check to never panicking and to findings with valid lines, whatever the
// document and template.
func FuzzCheck(f *testing.F) {
	for _, name := range []string{"six/checkpoint.md", "eleven/checkpoint.md"} {
		b := corpus(f, name)
		f.Add(b, b)
	}
	f.Add([]byte("## §1 A\n_x_\n<<<<<<< ours\n"), []byte("## §1 A\n_y_\n"))
	f.Fuzz(func(t *testing.T, doc, tmpl []byte) {
		d := Parse(doc, Options{})
		td := Parse(tmpl, Options{Level: d.Level})
		lines := strings.Count(string(doc), "\n") + 1
		rules := Rules{Blockquote: "§1", MaxOpen: map[ID]int{"📋": 5}, TaskSection: "§4", TaskIDs: map[string]bool{"T1": true}}
		for _, fd := range Check(d, td, rules) {
			if fd.Line < 1 || fd.Line > lines+1 {
				t.Fatalf("finding at line %d of a %d-line document: %v", fd.Line, lines, fd)
			}
		}
	})
}
