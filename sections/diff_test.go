package sections

import (
	"bytes"
	"testing"
)

// TestEachChangeShares: EachChange hands out the parsed source's own bytes, Diff copies of
// the same changes; a section assembled from separate slices is joined, not misread.
func TestEachChangeShares(t *testing.T) {
	old := []byte("# T\n\n## A\n_do this_\na\n\n## B\nb\n\n## C\nc\n")
	src := []byte("# T\n\n## B\nb2\n\n## A\n_do this_\na\n\n## D\nd\n")
	a, b := Parse(old, Options{}), Parse(src, Options{})
	var each []Change
	EachChange(a, b, func(c Change) bool { each = append(each, c); return true })
	copied := Diff(a, b)
	if len(each) != 3 || len(copied) != len(each) { // B changed and moved, D added, C removed
		t.Fatalf("EachChange gave %d changes, Diff %d, want 3", len(each), len(copied))
	}
	for i, c := range each {
		d := copied[i]
		if c.ID != d.ID || c.Status != d.Status || c.Moved != d.Moved || !bytes.Equal(c.Old, d.Old) || !bytes.Equal(c.New, d.New) {
			t.Fatalf("change %d: EachChange %+v, Diff %+v", i, c, d)
		}
		if len(c.New) > 0 {
			at := bytes.Index(src, c.New)
			if at < 0 || &c.New[0] != &src[at] {
				t.Errorf("%s: EachChange's New is a copy", c.ID)
			}
			if &d.New[0] == &src[at] {
				t.Errorf("%s: Diff's New shares the source", d.ID)
			}
		}
	}
	var stop int
	EachChange(a, b, func(Change) bool { stop++; return false })
	if stop != 1 {
		t.Fatalf("EachChange went on after false: %d calls", stop)
	}

	s := Section{Heading: []byte("## A\n"), Directive: []byte("_do this_\n"), Body: []byte("a\n")}
	if got := s.view(); string(got) != "## A\n_do this_\na\n" {
		t.Fatalf("view of separate slices: %q", got)
	}
	whole := []byte("## A\n_do this_\na\nrest")
	s = Section{Heading: whole[:5], Body: whole[15:17]} // directive missing: not adjacent
	if got := s.view(); string(got) != "## A\na\n" {
		t.Fatalf("view across a gap: %q", got)
	}
}
