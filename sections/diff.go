package sections

import (
	"bytes"
	"io"
	"sort"
)

// PreambleID names the preamble in diffs: everything before the first section.
const PreambleID ID = "preamble"

// Status says how a section differs between two documents.
type Status string

// Statuses of a section change.
const (
	Added   Status = "added"
	Removed Status = "removed"
	Changed Status = "changed"
	Moved   Status = "moved"
)

// Change is one section that differs between two documents.
type Change struct {
	ID      ID
	Heading string // heading line (of the newer side when both exist)
	Status  Status
	// Moved is true when the section changed place, whether or not its content changed.
	Moved bool
	Old   []byte
	New   []byte
}

// Unified returns the line diff of the change in unified format with 3 lines of context,
// labelled a/<id> and b/<id>.
func (c Change) Unified() string {
	return UnifiedDiff("a/"+string(c.ID), "b/"+string(c.ID), c.Old, c.New)
}

// WriteUnified writes Unified's text to w.
func (c Change) WriteUnified(w io.Writer) error {
	return WriteUnified(w, "a/"+string(c.ID), "b/"+string(c.ID), c.Old, c.New)
}

// Diff compares two documents section by section, in the order of b (removed sections
// last). The preamble is compared too, as PreambleID. Each change's Old and New are copies.
func Diff(a, b *Document) []Change {
	var out []Change
	EachChange(a, b, func(c Change) bool {
		c.Old, c.New = clone(c.Old), clone(c.New)
		out = append(out, c)
		return true
	})
	return out
}

// EachChange calls fn with each change Diff returns, in the same order, until fn returns
// false. The changes' Old and New share the documents' bytes (a diff of a big checkpoint
// then holds no second copy of it): fn must not modify them.
func EachChange(a, b *Document, fn func(Change) bool) {
	if !bytes.Equal(a.Preamble, b.Preamble) {
		if !fn(Change{ID: PreambleID, Heading: "(preamble)", Status: Changed, Old: a.Preamble, New: b.Preamble}) {
			return
		}
	}
	aIdx := map[ID]int{}
	for i, s := range a.Sections {
		if _, dup := aIdx[s.ID]; !dup {
			aIdx[s.ID] = i
		}
	}
	stay := stableIDs(a.Sections, b.Sections)
	seen := map[ID]bool{}
	for i := range b.Sections {
		s := &b.Sections[i]
		if seen[s.ID] {
			continue
		}
		seen[s.ID] = true
		ai, ok := aIdx[s.ID]
		if !ok {
			if !fn(Change{ID: s.ID, Heading: s.HeadingLine(), Status: Added, New: s.view()}) {
				return
			}
			continue
		}
		old := a.Sections[ai].view()
		c := Change{ID: s.ID, Heading: s.HeadingLine(), Old: old, New: s.view(), Moved: !stay[s.ID]}
		switch {
		case !bytes.Equal(trimBlankTail(old), trimBlankTail(c.New)):
			c.Status = Changed
		case c.Moved:
			c.Status = Moved
		default:
			continue
		}
		if !fn(c) {
			return
		}
	}
	for i := range a.Sections {
		s := &a.Sections[i]
		if !seen[s.ID] {
			seen[s.ID] = true
			if !fn(Change{ID: s.ID, Heading: s.HeadingLine(), Status: Removed, Old: s.view()}) {
				return
			}
		}
	}
}

// clone copies b; nil stays nil (Diff left Old of an added section nil).
func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

// ChangedIDs lists the ids of the sections that differ, in Diff's order.
func ChangedIDs(a, b *Document) []ID {
	cs := Diff(a, b)
	ids := make([]ID, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	return ids
}

// stableIDs returns the ids common to a and b that keep their relative order: a longest
// common subsequence of the two id sequences. Sections outside it have moved.
func stableIDs(a, b []Section) map[ID]bool {
	inB := map[ID]bool{}
	for _, s := range b {
		inB[s.ID] = true
	}
	inA := map[ID]bool{}
	var x, y []ID
	for _, s := range a {
		if inB[s.ID] && !inA[s.ID] {
			x = append(x, s.ID)
			inA[s.ID] = true
		}
	}
	seen := map[ID]bool{}
	for _, s := range b {
		if inA[s.ID] && !seen[s.ID] {
			y = append(y, s.ID)
			seen[s.ID] = true
		}
	}
	// Both sequences hold distinct ids, so their LCS is the longest increasing subsequence
	// of y's positions in x (patience sorting, O(n log n)).
	pos := make(map[ID]int, len(x))
	for i, id := range x {
		pos[id] = i
	}
	var tails []int // tails[k]: index into y of the smallest tail of an increasing run of k+1
	prev := make([]int, len(y))
	for j, id := range y {
		p := pos[id]
		k := sort.Search(len(tails), func(k int) bool { return pos[y[tails[k]]] >= p })
		if k > 0 {
			prev[j] = tails[k-1]
		} else {
			prev[j] = -1
		}
		if k == len(tails) {
			tails = append(tails, j)
		} else {
			tails[k] = j
		}
	}
	out := map[ID]bool{}
	if len(tails) > 0 {
		for j := tails[len(tails)-1]; j >= 0; j = prev[j] {
			out[y[j]] = true
		}
	}
	return out
}

// trimBlankTail drops the blank lines that end a section: they separate it from the next
// one, and a section that moves or becomes the last one gains or loses them without changing.
func trimBlankTail(b []byte) []byte {
	return bytes.TrimRight(b, " \t\r\n")
}
