package sections

import (
	"regexp"
	"strings"
	"testing"
)

func TestShrink(t *testing.T) {
	doc := func(decisions, notes string) *Document {
		return Parse([]byte("# C\n\n### 🎯 Task\nnow\n\n### 🔑 Key Decisions\n"+decisions+"\n### ⚠️ Notes\n"+notes), Options{Level: 3})
	}
	base := doc("- D1: use xxhash\n- D2: keep rejected writes\n- ~~D3: use md5~~\n", "- a one\n- b two\n- c three\n- d four\n")
	rules := ShrinkRules{Strict: map[ID]bool{"🔑": true}, Exempt: map[ID]bool{"🎯": true}}
	for _, tc := range []struct {
		name      string
		next      *Document
		elsewhere string
		want      []string // substrings of the findings, one per finding
	}{
		{"unchanged", base, "", nil},
		{"one decision dropped", doc("- D1: use xxhash\n- ~~D3: use md5~~\n", "- a one\n- b two\n- c three\n- d four\n"), "", []string{`Key Decisions: the write removes 1 of its 3 entries ("D2: keep rejected writes")`}},
		{"a superseded decision dropped", doc("- D1: use xxhash\n- D2: keep rejected writes\n", "- a one\n- b two\n- c three\n- d four\n"), "", nil},
		{"a decision reworded", doc("- D1: use blake3\n- D2: keep rejected writes\n", "- a one\n- b two\n- c three\n- d four\n"), "", nil},
		{"a decision moved to a spill file", doc("- D1: use xxhash\n", "- a one\n- b two\n- c three\n- d four\n"), "# spilled\n- D2: keep rejected writes\n", nil},
		{"a decision moved to another section", doc("- D1: use xxhash\n", "- a one\n- b two\n- c three\n- d four\n- [x] D2: keep rejected writes\n"), "", nil},
		{"half the notes gone", doc("- D1: use xxhash\n- D2: keep rejected writes\n", "- a one\n- b two\n"), "", nil},
		{"three of four notes gone", doc("- D1: use xxhash\n- D2: keep rejected writes\n", "- a one\n"), "", []string{"Notes: the write removes 3 of its 4 entries"}},
		{"everything gone", doc("", ""), "", []string{"Key Decisions: the write removes 2 of its 3", "Notes: the write removes 4 of its 4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rules
			if tc.elsewhere != "" {
				r.Elsewhere = [][]byte{[]byte(tc.elsewhere)}
			}
			fs := Shrink(base, tc.next, r)
			if len(fs) != len(tc.want) {
				t.Fatalf("got %d findings %v, want %d", len(fs), fs, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(fs[i].Message, w) || fs[i].Severity != Error {
					t.Errorf("finding %d = %q, want it to contain %q", i, fs[i].Message, w)
				}
			}
		})
	}
}

func TestEntries(t *testing.T) {
	body := "- a one\n  continued\n* b two\n1. c three\n```\n- not an entry\n```\n   - d four\n    - code, not an entry\n-\n"
	var got []string
	for _, e := range Entries([]byte(body), 10) {
		got = append(got, e.Text)
	}
	if want := []string{"a one", "b two", "c three", "d four"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Entries = %q, want %q", got, want)
	}
}

// The regular expressions listItem, trimCheckbox and isSuperseded stand for.
var (
	listItemRE = regexp.MustCompile(`^ {0,3}(?:[-*+]|\d{1,9}[.)])[ \t]+(.*)$`)
	checkboxRE = regexp.MustCompile(`^\[[ xX]\][ \t]+`)
)

func FuzzListItemAgreesWithRegexp(f *testing.F) {
	for _, s := range []string{"- a", "   * b", "    - c", "1. d", "1234567890. e", "123456789) f", "-\tg", "-", "- ", "+  ", "1.x", "- [ ] h", "[x]\tdone", "[X]  i", "[ ]j", "- a\nb", "\xff- x", "- \xff", "~~old~~", "(Superseded by D2)", "已被 D3 取代", "ſuperseded by D1", "SUPERSEDED BY x", "1)", "0. zero"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		text, ok := listItem(s)
		m := listItemRE.FindStringSubmatch(s)
		if ok != (m != nil) || (ok && text != m[1]) {
			t.Fatalf("listItem(%q) = %q, %v; the regexp says %q", s, text, ok, m)
		}
		if got, want := trimCheckbox(s), checkboxRE.ReplaceAllString(s, ""); got != want {
			t.Fatalf("trimCheckbox(%q) = %q, want %q", s, got, want)
		}
		if got, want := isSuperseded(s), superseded().MatchString(s); got != want {
			t.Fatalf("isSuperseded(%q) = %v, want %v", s, got, want)
		}
	})
}
