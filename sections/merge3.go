package sections

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/aymanbagabas/go-udiff/lcs"
)

// MergeStatus says how a three-way merge went.
type MergeStatus int

// Merge statuses, from best to worst.
const (
	// MergeClean: the result is one side as it is (the other changed nothing, or the same).
	MergeClean MergeStatus = iota
	// MergeMerged: both sides changed something and the changes combined without conflict.
	MergeMerged
	// MergeConflict: at least one conflict, listed in MergeResult.Conflicts.
	MergeConflict
)

func (s MergeStatus) String() string {
	switch s {
	case MergeClean:
		return "clean"
	case MergeMerged:
		return "merged"
	case MergeConflict:
		return "conflict"
	}
	return fmt.Sprintf("MergeStatus(%d)", int(s))
}

// Outcome says what a merge did with one section.
type Outcome string

// Outcomes of a section in a merge.
const (
	OutcomeUnchanged Outcome = "unchanged" // neither side changed it
	OutcomeOurs      Outcome = "ours"      // only ours changed it
	OutcomeTheirs    Outcome = "theirs"    // only theirs changed it
	OutcomeBoth      Outcome = "both"      // both sides made the same change
	OutcomeMerged    Outcome = "merged"    // both changed it; the changes combined
	OutcomeAdded     Outcome = "added"     // new on one side, or the same on both
	OutcomeRemoved   Outcome = "removed"   // deleted, and not changed on the other side
	OutcomeConflict  Outcome = "conflict"  // see MergeResult.Conflicts
)

// ConflictKind says what a conflict is about.
type ConflictKind string

// Kinds of conflict.
const (
	// ConflictContent: overlapping line changes; both versions are kept between markers.
	ConflictContent ConflictKind = "content"
	// ConflictHeading: the heading line changed differently; ours is kept, without markers,
	// because a heading inside markers would split the section.
	ConflictHeading ConflictKind = "heading"
	// ConflictDirective: the italic directive line changed differently; ours is kept.
	ConflictDirective ConflictKind = "directive"
	// ConflictDeleted: deleted on one side, changed on the other; the changed section is kept.
	ConflictDeleted ConflictKind = "modify/delete"
)

// SectionMerge is what the merge did with one section (or the preamble, PreambleID).
type SectionMerge struct {
	ID      ID
	Heading string // heading line of the result, or of the base for a removed section
	Outcome Outcome
}

// Conflict is one conflict left in the result.
type Conflict struct {
	Section ID
	Heading string
	Kind    ConflictKind
	// StartLine and EndLine (1-based, inclusive) are the marker lines for ConflictContent;
	// for the other kinds, the lines kept without markers (the heading line, the directive
	// line, the whole section).
	StartLine, EndLine int
}

// MergeResult is the outcome of Merge3.
type MergeResult struct {
	Status    MergeStatus
	Content   []byte
	Sections  []SectionMerge // preamble, the result's sections in order, then removed ones
	Conflicts []Conflict     // in line order
}

// MergeOptions tune Merge3.
type MergeOptions struct {
	// Level is the section heading level; 0 infers it from the first of base, ours and
	// theirs that has sections, and all three are then read at that level.
	Level int
	// Order is the template's section order. It places a section that only one side has
	// when the other side also added, removed or moved sections; otherwise the section
	// stays where its side put it.
	Order []ID
	// NewestWins lists metadata keys whose newest value wins without conflict
	// (last_updated, session_id, delta_since_last).
	NewestWins []string
	// OursLabel and TheirsLabel follow the conflict markers; "ours" and "theirs" by default.
	OursLabel, TheirsLabel string
}

// ConflictError is the error of a merge that left conflicts.
type ConflictError struct {
	Conflicts []Conflict
}

func (e *ConflictError) Error() string {
	var ids []string
	for _, c := range e.Conflicts {
		if !slices.Contains(ids, string(c.Section)) {
			ids = append(ids, string(c.Section))
		}
	}
	return "merge conflict in " + strings.Join(ids, ", ")
}

// Err returns a *ConflictError when the merge left conflicts, else nil.
func (r MergeResult) Err() error {
	if len(r.Conflicts) == 0 {
		return nil
	}
	return &ConflictError{Conflicts: r.Conflicts}
}

// Merge3 merges the changes that ours and theirs made to base, section by section. Sections
// are matched by id (the n-th section with an id matches the n-th on the other side). A
// section changed on one side takes that side; changed on both, its lines are merged with
// diff3, and overlapping different changes become a conflict block that keeps both versions.
// Lines are only ever copied whole from an input; the only bytes ever added are conflict
// markers and a line ending after a last line that lacked one when something now follows it.
// Section order is that of the side that added, removed or moved sections (ours if both
// did); the other side's own sections go in by MergeOptions.Order.
func Merge3(base, ours, theirs []byte, o MergeOptions) MergeResult {
	r := merge3(base, ours, theirs, o)
	// A side that changed nothing leaves the other as it is, metadata lines included: the
	// newest-wins rewrite only exists to keep two sides' changes from conflicting.
	switch {
	case bytes.Equal(base, theirs) || bytes.Equal(ours, theirs):
		r.Content, r.Status = bytes.Clone(ours), MergeClean
	case bytes.Equal(base, ours):
		r.Content, r.Status = bytes.Clone(theirs), MergeClean
	}
	return r
}

// secKey tells apart sections that share an id: the n-th (0-based) section with the id.
type secKey struct {
	id ID
	n  int
}

func keyed(d *Document) ([]secKey, map[secKey]*Section) {
	keys := make([]secKey, len(d.Sections))
	m := make(map[secKey]*Section, len(d.Sections))
	seen := map[ID]int{}
	for i := range d.Sections {
		k := secKey{d.Sections[i].ID, seen[d.Sections[i].ID]}
		seen[k.id]++
		keys[i] = k
		m[k] = &d.Sections[i]
	}
	return keys, m
}

// merge3 is Merge3 without the identity shortcuts, so that tests can hold the section and
// line machinery itself to the identity laws.
func merge3(base, ours, theirs []byte, o MergeOptions) MergeResult {
	rawOurs, rawTheirs := ours, theirs
	// goldmark appends a line feed to a last line that lacks one, in place: clipped, the
	// inputs' capacity cannot reach the caller's bytes that follow them.
	in := [3][]byte{slices.Clip(base), slices.Clip(ours), slices.Clip(theirs)}
	var docs [3]*Document
	for i := range in {
		docs[i] = Parse(in[i], Options{Level: o.Level})
	}
	level := o.Level
	if level == 0 {
		for _, d := range docs {
			if len(d.Sections) > 0 {
				level = d.Level
				break
			}
		}
	}
	changed := newestWins(&in, docs, o.NewestWins)
	for i, d := range docs {
		if changed[i] || (level != 0 && d.Level != level) {
			docs[i] = Parse(in[i], Options{Level: level})
		}
	}
	bd, od, td := docs[0], docs[1], docs[2]

	pre := mergePreamble(bd.Preamble, od.Preamble, td.Preamble)
	bkeys, bm := keyed(bd)
	okeys, om := keyed(od)
	tkeys, tm := keyed(td)

	parts := map[secKey]part{}
	var removed []part
	for _, keys := range [][]secKey{bkeys, okeys, tkeys} {
		for _, k := range keys {
			if _, done := parts[k]; done {
				continue
			}
			p := mergeSection(bm[k], om[k], tm[k])
			p.id = k.id
			parts[k] = p
			if p.outcome == OutcomeRemoved {
				removed = append(removed, p)
			}
		}
	}

	// The side that moved, added or removed sections gives the skeleton; ours when both did.
	skel, other := okeys, tkeys
	if slices.Equal(bkeys, okeys) {
		skel, other = tkeys, okeys
	}
	order := placeKeys(skel, other, func(k secKey) bool { return parts[k].outcome != OutcomeRemoved }, o.Order)

	w := writer{eol: docEOL(in[1], in[2])}
	w.start = "<<<<<<< " + cmp.Or(o.OursLabel, "ours") + w.eol
	w.mid = "=======" + w.eol
	w.end = ">>>>>>> " + cmp.Or(o.TheirsLabel, "theirs") + w.eol
	var r MergeResult
	pre.id, pre.heading = PreambleID, "(preamble)"
	for _, p := range append([]part{pre}, partsOf(order, parts)...) {
		r.Sections = append(r.Sections, SectionMerge{ID: p.id, Heading: p.heading, Outcome: p.outcome})
		r.Conflicts = append(r.Conflicts, w.part(p)...)
	}
	for _, p := range removed {
		r.Sections = append(r.Sections, SectionMerge{ID: p.id, Heading: p.heading, Outcome: p.outcome})
	}
	r.Content = w.buf
	switch {
	case len(r.Conflicts) > 0:
		r.Status = MergeConflict
	case bytes.Equal(r.Content, rawOurs) || bytes.Equal(r.Content, rawTheirs):
		r.Status = MergeClean
	default:
		r.Status = MergeMerged
	}
	return r
}

func partsOf(order []secKey, parts map[secKey]part) []part {
	out := make([]part, len(order))
	for i, k := range order {
		out[i] = parts[k]
	}
	return out
}

// placeKeys lays out the result: the skeleton side's sections that stay, then each kept
// section that only the other side has, before the first section that the template puts
// after it, else right after the section that precedes it on its side, else first.
func placeKeys(skel, other []secKey, keep func(secKey) bool, tmpl []ID) []secKey {
	var out []secKey
	placed := map[secKey]bool{}
	for _, k := range skel {
		if keep(k) {
			out = append(out, k)
			placed[k] = true
		}
	}
	rank := map[ID]int{}
	for i, id := range tmpl {
		if _, dup := rank[id]; !dup {
			rank[id] = i
		}
	}
	prev := -1 // index in other of the last kept section seen, which is placed by now
	for i, k := range other {
		if !keep(k) {
			continue
		}
		if !placed[k] {
			at := -1
			if r, ok := rank[k.id]; ok {
				at = slices.IndexFunc(out, func(x secKey) bool { rx, ok := rank[x.id]; return ok && rx > r })
			}
			if at < 0 {
				at = 0
				if prev >= 0 {
					at = slices.Index(out, other[prev]) + 1
				}
			}
			out = slices.Insert(out, at, k)
			placed[k] = true
		}
		prev = i
	}
	return out
}

// part is one merged section before line numbers are known.
type part struct {
	id      ID
	heading string
	outcome Outcome
	chunks  []chunk
}

// chunk is a run of result lines. A conflict of kind ConflictContent is written as lines
// (ours) and theirs between markers; other kinds are lines kept as they are and reported.
type chunk struct {
	lines  [][]byte
	theirs [][]byte
	kind   ConflictKind // "" for no conflict
}

func plain(lines [][]byte) []chunk {
	if len(lines) == 0 {
		return nil
	}
	return []chunk{{lines: lines}}
}

func mergePreamble(b, o, t []byte) part {
	switch {
	case bytes.Equal(o, b) && bytes.Equal(t, b):
		return part{outcome: OutcomeUnchanged, chunks: plain(splitLines(o))}
	case bytes.Equal(o, b):
		return part{outcome: OutcomeTheirs, chunks: plain(splitLines(t))}
	case bytes.Equal(t, b):
		return part{outcome: OutcomeOurs, chunks: plain(splitLines(o))}
	case bytes.Equal(o, t):
		return part{outcome: OutcomeBoth, chunks: plain(splitLines(o))}
	}
	p := part{chunks: mergeLines(splitLines(b), splitLines(o), splitLines(t))}
	p.outcome = mergedOutcome(p.chunks)
	return p
}

func mergedOutcome(cs []chunk) Outcome {
	for _, c := range cs {
		if c.kind != "" {
			return OutcomeConflict
		}
	}
	return OutcomeMerged
}

// mergeSection merges one section; a nil side does not have it.
func mergeSection(b, o, t *Section) part {
	same := func(x, y *Section) bool {
		return bytes.Equal(x.Heading, y.Heading) && bytes.Equal(x.Directive, y.Directive) && bytes.Equal(x.Body, y.Body)
	}
	whole := func(s *Section, out Outcome) part {
		return part{heading: s.HeadingLine(), outcome: out, chunks: plain(sectionLines(s))}
	}
	switch {
	case o == nil && t == nil:
		return part{heading: b.HeadingLine(), outcome: OutcomeRemoved}
	case b == nil && t == nil:
		return whole(o, OutcomeAdded)
	case b == nil && o == nil:
		return whole(t, OutcomeAdded)
	case o == nil || t == nil:
		kept := cmp.Or(o, t)
		if same(kept, b) {
			return part{heading: b.HeadingLine(), outcome: OutcomeRemoved}
		}
		return part{heading: kept.HeadingLine(), outcome: OutcomeConflict,
			chunks: []chunk{{lines: sectionLines(kept), kind: ConflictDeleted}}}
	case b == nil && same(o, t):
		return whole(o, OutcomeAdded)
	case b == nil:
		// Added on both sides: keep every line of both, no base to conflict against.
		h := mergeAtom(nil, o.Heading, t.Heading, ConflictHeading)
		d := mergeAtom(nil, o.Directive, t.Directive, ConflictDirective)
		cs := append(append(h, d...), plain(unionLines(splitLines(o.Body), splitLines(t.Body)))...)
		return part{heading: trimEOL(h[0].lines[0]), outcome: mergedOutcome(cs), chunks: cs}
	case same(o, b) && same(t, b):
		return whole(o, OutcomeUnchanged)
	case same(o, b):
		return whole(t, OutcomeTheirs)
	case same(t, b):
		return whole(o, OutcomeOurs)
	case same(o, t):
		return whole(o, OutcomeBoth)
	}
	h := mergeAtom(b.Heading, o.Heading, t.Heading, ConflictHeading)
	d := mergeAtom(b.Directive, o.Directive, t.Directive, ConflictDirective)
	cs := append(append(h, d...), mergeLines(splitLines(b.Body), splitLines(o.Body), splitLines(t.Body))...)
	return part{heading: trimEOL(h[0].lines[0]), outcome: mergedOutcome(cs), chunks: cs}
}

func sectionLines(s *Section) [][]byte {
	out := [][]byte{s.Heading}
	if len(s.Directive) > 0 {
		out = append(out, s.Directive)
	}
	return append(out, splitLines(s.Body)...)
}

// mergeAtom merges a line that must stay single (a heading, a directive; nil: absent).
// Changed differently on both sides, ours is kept and the line reported; theirs when ours
// dropped it, as with a modified and deleted section.
func mergeAtom(b, o, t []byte, kind ConflictKind) []chunk {
	bk, ok, tk := lineKey(b), lineKey(o), lineKey(t)
	var keep []byte
	switch {
	case ok == tk:
		keep = pick(b, o, t)
	case ok == bk:
		keep = t
	case tk == bk:
		keep = o
	case len(o) == 0:
		return []chunk{{lines: [][]byte{t}, kind: kind}}
	default:
		return []chunk{{lines: [][]byte{o}, kind: kind}}
	}
	if len(keep) == 0 {
		return nil
	}
	return plain([][]byte{keep})
}

// splitLines cuts b into lines that keep their endings; only the last may lack one.
func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		l, rest, _ := cutLine(b)
		out = append(out, l)
		b = rest
	}
	return out
}

// lineKey is what line comparison sees: the line without its ending, so that a last line
// that lacks one (or has only the "\r" of a "\r\n") still matches the same line followed
// by more.
func lineKey(l []byte) string {
	n := len(l)
	if n > 0 && l[n-1] == '\n' {
		n--
	}
	if n > 0 && l[n-1] == '\r' {
		n--
	}
	return string(l[:n])
}

func lineKeys(ls [][]byte) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = lineKey(l)
	}
	return out
}

// pick chooses among lines with equal keys: the side that changed the line ending, ours
// first, so that such a change survives like any other.
func pick(b, o, t []byte) []byte {
	if !bytes.Equal(o, b) {
		return o
	}
	return t
}

// hunk is one change of a side: base lines [start, end) became side lines [rs, re).
type hunk struct {
	start, end int
	rs, re     int
	side       int // 0 ours, 1 theirs
}

// mergeLines is diff3: a change of one side applies; changes of both sides to overlapping
// base lines (or insertions at the same place) are taken once if equal, else conflict.
// Changes that only touch (one ends where the other starts) both apply.
func mergeLines(b, o, t [][]byte) []chunk {
	bk := lineKeys(b)
	var hs []hunk
	for s, side := range [][]string{lineKeys(o), lineKeys(t)} {
		for _, d := range lineDiff(bk, side) {
			hs = append(hs, hunk{d.Start, d.End, d.ReplStart, d.ReplEnd, s})
		}
	}
	slices.SortStableFunc(hs, func(x, y hunk) int {
		return cmp.Or(cmp.Compare(x.start, y.start), cmp.Compare(x.end, y.end))
	})
	sides := [2][][]byte{o, t}
	var out []chunk
	var off [2]int // side line = base line + off, outside hunks
	pos := 0
	keepBase := func(to int) {
		var ls [][]byte
		for k := pos; k < to; k++ {
			ls = append(ls, pick(b[k], o[k+off[0]], t[k+off[1]]))
		}
		out = append(out, plain(ls)...)
	}
	for i := 0; i < len(hs); {
		lo, hi := hs[i].start, hs[i].end
		j := i + 1
		for ; j < len(hs); j++ {
			h := hs[j]
			overlaps := h.start < hi
			bothInsert := h.start == hi && lo == hi && h.end == h.start
			if !overlaps && !bothInsert {
				break
			}
			hi = max(hi, h.end)
		}
		keepBase(lo)
		var delta [2]int
		var has [2]bool
		for _, h := range hs[i:j] {
			delta[h.side] += (h.re - h.rs) - (h.end - h.start)
			has[h.side] = true
		}
		var seg [2][][]byte
		for s := range seg {
			seg[s] = sides[s][lo+off[s] : hi+off[s]+delta[s]]
			off[s] += delta[s]
		}
		switch {
		case !has[1]:
			out = append(out, plain(seg[0])...)
		case !has[0]:
			out = append(out, plain(seg[1])...)
		default:
			out = append(out, clash(seg[0], seg[1])...)
		}
		pos, i = hi, j
	}
	keepBase(len(b))
	return out
}

// clash resolves two different replacements of the same base lines: lines they share at
// either end are kept once, outside the markers, and the rest conflicts.
func clash(o, t [][]byte) []chunk {
	ok, tk := lineKeys(o), lineKeys(t)
	n := 0
	for n < len(o) && n < len(t) && ok[n] == tk[n] {
		n++
	}
	if n == len(o) && n == len(t) {
		return plain(o)
	}
	m := 0
	for m < len(o)-n && m < len(t)-n && ok[len(o)-1-m] == tk[len(t)-1-m] {
		m++
	}
	out := plain(o[:n])
	out = append(out, chunk{lines: o[n : len(o)-m], theirs: t[n : len(t)-m], kind: ConflictContent})
	return append(out, plain(o[len(o)-m:])...)
}

// unionLines keeps every line of o and t: the lines they share once, and where they differ,
// ours' lines, then theirs'.
func unionLines(o, t [][]byte) [][]byte {
	var out [][]byte
	pos := 0
	for _, d := range lineDiff(lineKeys(o), lineKeys(t)) {
		out = append(append(out, o[pos:d.End]...), t[d.ReplStart:d.ReplEnd]...)
		pos = d.End
	}
	return append(out, o[pos:]...)
}

// lineDiff returns the changes that turn a into b, in order. lcs.DiffLines alone gives up
// on an exact answer past 50 changes, and a coarse diff turns changes to different lines
// into false conflicts; so lines that occur once on each side anchor the diff first
// (patience diff), and lcs only sees the short stretches between anchors.
func lineDiff(a, b []string) []lcs.Diff {
	var out []lcs.Diff
	diffRange(a, b, 0, len(a), 0, len(b), &out)
	return out
}

func diffRange(a, b []string, alo, ahi, blo, bhi int, out *[]lcs.Diff) {
	for alo < ahi && blo < bhi && a[alo] == b[blo] {
		alo, blo = alo+1, blo+1
	}
	for alo < ahi && blo < bhi && a[ahi-1] == b[bhi-1] {
		ahi, bhi = ahi-1, bhi-1
	}
	if alo == ahi || blo == bhi {
		if alo < ahi || blo < bhi {
			*out = append(*out, lcs.Diff{Start: alo, End: ahi, ReplStart: blo, ReplEnd: bhi})
		}
		return
	}
	anchors := uniqueAnchors(a[alo:ahi], b[blo:bhi])
	if len(anchors) == 0 {
		for _, d := range lcs.DiffLines(a[alo:ahi], b[blo:bhi]) {
			*out = append(*out, lcs.Diff{Start: d.Start + alo, End: d.End + alo, ReplStart: d.ReplStart + blo, ReplEnd: d.ReplEnd + blo})
		}
		return
	}
	pa, pb := alo, blo
	for _, an := range anchors {
		i, j := alo+an[0], blo+an[1]
		diffRange(a, b, pa, i, pb, j, out)
		pa, pb = i+1, j+1
	}
	diffRange(a, b, pa, ahi, pb, bhi, out)
}

// uniqueAnchors pairs the lines that occur exactly once in a and once in b, and keeps the
// longest run of pairs in the same order on both sides (their positions, a's then b's).
func uniqueAnchors(a, b []string) [][2]int {
	type seen struct{ na, nb, ia, ib int }
	m := make(map[string]*seen, len(a))
	for i, l := range a {
		if s := m[l]; s != nil {
			s.na++
		} else {
			m[l] = &seen{na: 1, ia: i}
		}
	}
	for j, l := range b {
		if s := m[l]; s != nil {
			s.nb++
			s.ib = j
		}
	}
	var pairs [][2]int // in a's order
	for i, l := range a {
		if s := m[l]; s.na == 1 && s.nb == 1 {
			pairs = append(pairs, [2]int{i, s.ib})
		}
	}
	// Longest increasing run of b positions (patience sorting).
	var tails []int // tails[k]: index into pairs ending the best run of length k+1
	prev := make([]int, len(pairs))
	for p, pr := range pairs {
		k, _ := slices.BinarySearchFunc(tails, pr[1], func(t, target int) int { return cmp.Compare(pairs[t][1], target) })
		prev[p] = -1
		if k > 0 {
			prev[p] = tails[k-1]
		}
		if k == len(tails) {
			tails = append(tails, p)
		} else {
			tails[k] = p
		}
	}
	if len(tails) == 0 {
		return nil
	}
	run := make([][2]int, len(tails))
	for p, k := tails[len(tails)-1], len(tails)-1; p >= 0; p, k = prev[p], k-1 {
		run[k] = pairs[p]
	}
	return run
}

// docEOL is the line ending for added lines: ours', else theirs'.
func docEOL(ours, theirs []byte) string {
	if bytes.IndexByte(ours, '\n') < 0 && bytes.IndexByte(theirs, '\n') >= 0 {
		return EOL(theirs)
	}
	return EOL(ours)
}

// writer assembles the result line by line and knows the line numbers.
type writer struct {
	buf             []byte
	eol             string
	start, mid, end string // conflict marker lines
	lines           int    // line endings written so far
}

// line writes l and returns its line number. A previous line that lacked its ending (it
// was last in its input) gets one, so that two lines never run together.
func (w *writer) line(l []byte) int {
	if n := len(w.buf); n > 0 && w.buf[n-1] != '\n' {
		if w.buf[n-1] == '\r' {
			w.buf = append(w.buf, '\n') // the half of a "\r\n" that was missing
		} else {
			w.buf = append(w.buf, w.eol...)
		}
		w.lines++
	}
	at := w.lines + 1
	w.buf = append(w.buf, l...)
	if len(l) > 0 && l[len(l)-1] == '\n' {
		w.lines++
	}
	return at
}

func (w *writer) part(p part) []Conflict {
	var cs []Conflict
	for _, c := range p.chunks {
		first, last := 0, 0
		if c.kind == ConflictContent {
			first = w.line([]byte(w.start))
		}
		for i, l := range c.lines {
			last = w.line(l)
			if i == 0 && first == 0 {
				first = last
			}
		}
		if c.kind == ConflictContent {
			w.line([]byte(w.mid))
			for _, l := range c.theirs {
				w.line(l)
			}
			last = w.line([]byte(w.end))
		}
		if c.kind != "" {
			cs = append(cs, Conflict{Section: p.id, Heading: p.heading, Kind: c.kind, StartLine: first, EndLine: last})
		}
	}
	return cs
}

// newestWins gives the first metadata line of each key in keys the newest value among ours
// and theirs, in all three inputs, so that those lines never conflict. Values compare as
// strings (the part after "→" for a range) when both are timestamps; otherwise, as for
// session_id, ours wins. The winning line is copied whole; each input keeps its line ending.
// It reports which inputs changed: their documents are stale.
func newestWins(in *[3][]byte, docs [3]*Document, keys []string) (changed [3]bool) {
	for _, key := range keys {
		prefix := []byte("_" + key + ":")
		var at [3]int // line number of the key's first line; 0: none
		var val [3]string
		for i, d := range docs {
			if bytes.Contains(in[i], prefix) {
				at[i], val[i] = firstMeta(d, prefix)
			}
		}
		win := 1
		switch {
		case at[1] > 0 && at[2] > 0 && newer(val[2], val[1]):
			win = 2
		case at[1] == 0 && at[2] > 0:
			win = 2
		case at[1] == 0:
			continue
		}
		from, to := lineBounds(in[win], at[win])
		text := trimEOL(in[win][from:to])
		for i := range in {
			if at[i] == 0 {
				continue
			}
			from, to := lineBounds(in[i], at[i])
			l := in[i][from:to]
			if t := trimEOL(l); t != text {
				in[i] = slices.Concat(in[i][:from], []byte(text), l[len(t):], in[i][to:])
				changed[i] = true
			}
		}
	}
	return changed
}

// firstMeta finds the first metadata line that starts with prefix ("_key:") outside fenced
// code, as Metadata would, without running the metadata pattern on every line.
func firstMeta(d *Document, prefix []byte) (line int, value string) {
	d.eachLine(func(_ ID, n int, l []byte) {
		if line > 0 || !bytes.HasPrefix(l, prefix) {
			return
		}
		if m := metaLine().FindSubmatch(bytes.TrimRight(l, "\r\n")); m != nil {
			line, value = n, strings.TrimSpace(string(m[2]))
		}
	})
	return line, value
}

// lineBounds returns the byte range of line n (1-based) of b, its ending included.
func lineBounds(b []byte, n int) (from, to int) {
	for ; n > 1; n-- {
		from += bytes.IndexByte(b[from:], '\n') + 1
	}
	to = len(b)
	if i := bytes.IndexByte(b[from:], '\n'); i >= 0 {
		to = from + i + 1
	}
	return from, to
}

// newer reports whether metadata value a is a later timestamp than b.
func newer(a, b string) bool {
	a, b = stamp(a), stamp(b)
	return timeValue().MatchString(a) && timeValue().MatchString(b) && a > b
}

// stamp is the time a value stands for: the end of a range "A → B", else the value.
func stamp(v string) string {
	if i := strings.LastIndex(v, "→"); i >= 0 {
		v = v[i+len("→"):]
	}
	return strings.TrimSpace(v)
}
