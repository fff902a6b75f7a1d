package ui

import (
	"strconv"
	"strings"
)

// A diff as the pages draw it, made from the unified diff text that sections (through
// history) already computes: this file only lays the lines out, unified or side by side.

type diffLine struct {
	Kind     string // ctx, add, del, hunk, note
	Old, New int    // line numbers within the section; 0 where the side has no line
	Text     string
}

// splitRow is one row of a side-by-side diff: a removed line next to the line that
// replaced it, or a line on one side only.
type splitRow struct {
	Hunk             bool
	Text             string // the @@ line of a hunk row
	OldNo, NewNo     int
	Old, New         string
	OldKind, NewKind string // ctx, add, del, or "" for an empty cell
}

// parseUnified reads a unified diff (---/+++ headers, @@ hunks) into lines.
func parseUnified(u string) []diffLine {
	var out []diffLine
	oldNo, newNo := 0, 0
	inHunk := false
	for _, l := range strings.Split(strings.TrimSuffix(u, "\n"), "\n") {
		if strings.HasPrefix(l, "@@") {
			if a, b, ok := hunkStarts(l); ok {
				oldNo, newNo, inHunk = a, b, true
				out = append(out, diffLine{Kind: "hunk", Text: l})
				continue
			}
		}
		if !inHunk {
			continue // the ---/+++ header
		}
		switch {
		case strings.HasPrefix(l, "+"):
			out = append(out, diffLine{Kind: "add", New: newNo, Text: l[1:]})
			newNo++
		case strings.HasPrefix(l, "-"):
			out = append(out, diffLine{Kind: "del", Old: oldNo, Text: l[1:]})
			oldNo++
		case strings.HasPrefix(l, `\`):
			out = append(out, diffLine{Kind: "note", Text: l})
		default:
			t := l
			if t != "" {
				t = t[1:]
			}
			out = append(out, diffLine{Kind: "ctx", Old: oldNo, New: newNo, Text: t})
			oldNo++
			newNo++
		}
	}
	return out
}

// hunkStarts reads "@@ -a,b +c,d @@" and returns a and c.
func hunkStarts(l string) (int, int, bool) {
	f := strings.Fields(l)
	if len(f) < 4 || f[0] != "@@" || !strings.HasPrefix(f[1], "-") || !strings.HasPrefix(f[2], "+") {
		return 0, 0, false
	}
	num := func(s string) (int, bool) {
		s, _, _ = strings.Cut(s[1:], ",")
		n, err := strconv.Atoi(s)
		return n, err == nil
	}
	a, ok1 := num(f[1])
	b, ok2 := num(f[2])
	if a == 0 { // an empty old side starts "before line 1"
		a = 1
	}
	if b == 0 {
		b = 1
	}
	return a, b, ok1 && ok2
}

// splitRows pairs the lines of a unified diff for a side-by-side view: in each run of
// removed lines followed by added ones, the n-th removed line sits next to the n-th added.
func splitRows(lines []diffLine) []splitRow {
	var out []splitRow
	var dels, adds []diffLine
	flush := func() {
		n := max(len(dels), len(adds))
		for i := range n {
			var r splitRow
			if i < len(dels) {
				r.OldNo, r.Old, r.OldKind = dels[i].Old, dels[i].Text, "del"
			}
			if i < len(adds) {
				r.NewNo, r.New, r.NewKind = adds[i].New, adds[i].Text, "add"
			}
			out = append(out, r)
		}
		dels, adds = dels[:0], adds[:0]
	}
	for _, l := range lines {
		switch l.Kind {
		case "del":
			if len(adds) > 0 {
				flush()
			}
			dels = append(dels, l)
		case "add":
			adds = append(adds, l)
		case "hunk":
			flush()
			out = append(out, splitRow{Hunk: true, Text: l.Text})
		case "note":
		default:
			flush()
			out = append(out, splitRow{OldNo: l.Old, NewNo: l.New, Old: l.Text, New: l.Text, OldKind: "ctx", NewKind: "ctx"})
		}
	}
	flush()
	return out
}

// diffStat counts added and removed lines.
func diffStat(lines []diffLine) (add, del int) {
	for _, l := range lines {
		switch l.Kind {
		case "add":
			add++
		case "del":
			del++
		}
	}
	return add, del
}
