package sections

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// ShrinkRules say how much of a section a new version of a document may remove: the guard
// against an agent's write that drops the knowledge it held (23 of 25 Key Decisions, say).
type ShrinkRules struct {
	// Strict sections lose no entry at all (Key Decisions).
	Strict map[ID]bool
	// Exempt sections are rolling: they are rewritten as a matter of course (the current
	// task, the recovered delta).
	Exempt map[ID]bool
	// MaxShare is the share of a section's entries a write may remove; removing more (and at
	// least two) is an error. 0 means one half.
	MaxShare float64
	// Elsewhere is other text where a removed entry may have gone (spill files).
	Elsewhere [][]byte
}

// Entry is one list item of a section, as the shrink guard counts it.
type Entry struct {
	Line int    // 1-based line in the document
	Text string // the item's first line, without its list marker
}

var (
	superseded = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^~~.*~~|\(superseded\b|\bsuperseded by\b|已废弃|已被.*取代`)
	})
	statusEmoji = []string{"🔵", "🔄", "🟡", "✅", "❌"}
)

// listItem matches a list item's line as `^ {0,3}(?:[-*+]|\d{1,9}[.)])[ \t]+(.*)$` would,
// returning the text after the marker and its white space. It runs on every line of both
// versions of a checkpoint at each commit, where the regular expression cost a millisecond.
// FuzzListItemAgreesWithRegexp holds the two to the same answer.
func listItem(l string) (string, bool) {
	i := 0
	for i < len(l) && i < 3 && l[i] == ' ' {
		i++
	}
	switch {
	case i < len(l) && (l[i] == '-' || l[i] == '*' || l[i] == '+'):
		i++
	default:
		d := i
		for i < len(l) && i-d < 9 && l[i] >= '0' && l[i] <= '9' {
			i++
		}
		if i == d || i == len(l) || (l[i] != '.' && l[i] != ')') {
			return "", false
		}
		i++
	}
	ws := i
	for i < len(l) && (l[i] == ' ' || l[i] == '\t') {
		i++
	}
	if i == ws || strings.IndexByte(l[i:], '\n') >= 0 {
		return "", false
	}
	return l[i:], true
}

// trimCheckbox removes a leading `[ ]`, `[x]` or `[X]` and the white space after it (at
// least one space or tab), as `^\[[ xX]\][ \t]+` replaced by "" would.
func trimCheckbox(s string) string {
	if len(s) < 4 || s[0] != '[' || (s[1] != ' ' && s[1] != 'x' && s[1] != 'X') || s[2] != ']' || (s[3] != ' ' && s[3] != '\t') {
		return s
	}
	return strings.TrimLeft(s[3:], " \t")
}

// isSuperseded reports whether an entry is marked superseded. Every match of the pattern
// holds "~~", "已" or "eded" in any case (no other letters fold to e or d), so most entries
// are answered without running it.
func isSuperseded(text string) bool {
	if !strings.Contains(text, "~~") && !strings.Contains(text, "已") && !strings.Contains(strings.ToLower(text), "eded") {
		return false
	}
	return superseded().MatchString(text)
}

// Entries returns the top-level list items of a section body (outside code fences). line is
// the line number of the body's first line.
func Entries(body []byte, line int) []Entry {
	var out []Entry
	var fence []byte
	for i, l := range strings.Split(string(body), "\n") {
		b := []byte(strings.TrimRight(l, "\r"))
		t := []byte(strings.TrimLeft(string(b), " "))
		if fence != nil {
			if closesFence(t, fence) {
				fence = nil
			}
			continue
		}
		if run := fenceRun(t); run != nil && len(b)-len(t) < 4 {
			fence = run
			continue
		}
		if text, ok := listItem(string(b)); ok && strings.TrimSpace(text) != "" {
			out = append(out, Entry{Line: line + i, Text: strings.TrimSpace(text)})
		}
	}
	return out
}

// entryKey is the form in which an entry is looked for elsewhere: no checkbox, status
// emoji or strike-through, whitespace collapsed, case folded.
func entryKey(s string) string {
	s = trimCheckbox(strings.TrimSpace(s))
	for _, e := range statusEmoji {
		s = strings.TrimPrefix(s, e+" ")
	}
	s = strings.ReplaceAll(s, "~~", "")
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// Shrink compares doc with the previous version of the same document and reports, for each
// section that lost more entries than rules allow, an error naming the entries lost. An
// entry is not lost when its text is still anywhere in doc or in rules.Elsewhere (moved to
// another section or a spill file), or when the previous version already marked it
// superseded (`~~…~~`, "(superseded by D7)").
func Shrink(prev, doc *Document, rules ShrinkRules) []Finding {
	if prev == nil || doc == nil {
		return nil
	}
	var hay strings.Builder
	for _, l := range strings.Split(string(doc.Render()), "\n") {
		hay.WriteString(entryKey(stripMarker(l)))
		hay.WriteByte('\n')
	}
	for _, e := range rules.Elsewhere {
		for _, l := range strings.Split(string(e), "\n") {
			hay.WriteString(entryKey(stripMarker(l)))
			hay.WriteByte('\n')
		}
	}
	haystack := hay.String()
	share := rules.MaxShare
	if share <= 0 {
		share = 0.5
	}
	var fs []Finding
	for _, old := range prev.Sections {
		if rules.Exempt[old.ID] {
			continue
		}
		entries := Entries(old.Body, old.Line+1+boolInt(old.Directive != nil))
		if len(entries) == 0 {
			continue
		}
		// Entries of the new version that the old one lacks: an edit of a lost entry (most of
		// its words kept) is not a loss.
		oldKeys := map[string]bool{}
		for _, e := range entries {
			oldKeys[entryKey(e.Text)] = true
		}
		var added [][]string
		if s := doc.Section(old.ID); s != nil {
			for _, e := range Entries(s.Body, 0) {
				if k := entryKey(e.Text); !oldKeys[k] {
					added = append(added, strings.Fields(k))
				}
			}
		}
		var lost []string
		for _, e := range entries {
			if isSuperseded(e.Text) {
				continue
			}
			k := entryKey(e.Text)
			if k == "" || strings.Contains(haystack, k) {
				continue
			}
			if i := similar(strings.Fields(k), added); i >= 0 {
				added = append(added[:i], added[i+1:]...)
				continue
			}
			lost = append(lost, e.Text)
		}
		strict := rules.Strict[old.ID]
		if len(lost) == 0 || (!strict && (len(lost) < 2 || float64(len(lost)) <= share*float64(len(entries)))) {
			continue
		}
		line := old.Line
		if s := doc.Section(old.ID); s != nil {
			line = s.Line
		}
		fs = append(fs, Finding{Line: line, Severity: Error, Section: old.ID, Message: fmt.Sprintf(
			"section %s: the write removes %d of its %d entries (%s); keep them, move them to a spill file, mark them superseded (~~…~~ or \"(superseded by …)\"), or write with --allow-shrink",
			old.Title(), len(lost), len(entries), quoteSome(lost, 3))})
	}
	return fs
}

// similar returns the index of the first candidate that shares at least half of the words
// of the longer of it and words, or -1.
func similar(words []string, candidates [][]string) int {
	have := map[string]int{}
	for _, w := range words {
		have[w]++
	}
	for i, c := range candidates {
		common := 0
		seen := map[string]int{}
		for _, w := range c {
			if seen[w] < have[w] {
				common++
			}
			seen[w]++
		}
		if 2*common >= max(len(words), len(c)) && common > 0 {
			return i
		}
	}
	return -1
}

func stripMarker(l string) string {
	if text, ok := listItem(strings.TrimRight(l, "\r")); ok {
		return text
	}
	return l
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// quoteSome quotes the first n texts, each cut to 60 characters, and counts the rest.
func quoteSome(texts []string, n int) string {
	var parts []string
	for i, t := range texts {
		if i == n {
			parts = append(parts, fmt.Sprintf("and %d more", len(texts)-n))
			break
		}
		if utf8.RuneCountInString(t) > 60 {
			t = string([]rune(t)[:59]) + "…"
		}
		parts = append(parts, fmt.Sprintf("%q", t))
	}
	return strings.Join(parts, ", ")
}
