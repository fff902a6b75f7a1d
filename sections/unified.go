package sections

import (
	"bufio"
	"bytes"
	"hash/maphash"
	"io"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/aymanbagabas/go-udiff"
	"github.com/aymanbagabas/go-udiff/lcs"
)

// The unified diff here prints what go-udiff's Unified prints, byte for byte (the fuzz test
// compares them), without its cost: go-udiff copies every line into a string, joins the
// inserted lines into one more, counts newlines from the start of the text for every edit
// and formats each line through fmt, several times the size of the texts for a 1 MB
// rewrite. Here the lines are offsets into the caller's bytes, interned to integers once,
// matched by go-udiff's own bounded LCS (so the same lines pair up), and the hunks are runs
// of lines printed straight from the input.

// contextLines is the unchanged lines shown around each change.
const contextLines = 3

// noNewline follows a last line that has no line ending.
const noNewline = "\n\\ No newline at end of file\n"

// UnifiedDiff is a line-based unified diff of old and new, "" when they are equal.
func UnifiedDiff(oldLabel, newLabel string, old, new []byte) string {
	u, ok := unifiedOf(old, new)
	if !ok {
		return udiffUnified(oldLabel, newLabel, old, new)
	}
	var b strings.Builder
	b.Grow(u.size(oldLabel, newLabel))
	u.write(&b, oldLabel, newLabel) // a strings.Builder does not fail
	return b.String()
}

// WriteUnified writes UnifiedDiff(oldLabel, newLabel, old, new) to w without building it
// in memory.
func WriteUnified(w io.Writer, oldLabel, newLabel string, old, new []byte) error {
	u, ok := unifiedOf(old, new)
	if !ok {
		_, err := io.WriteString(w, udiffUnified(oldLabel, newLabel, old, new))
		return err
	}
	return u.write(w, oldLabel, newLabel)
}

// udiffUnified is go-udiff's unified diff: the reference, and the way out for the edit
// scripts unifiedOf does not follow (none that go-udiff's LCS is known to produce).
func udiffUnified(oldLabel, newLabel string, old, new []byte) string {
	o, n := string(old), string(new)
	out, err := udiff.ToUnified(oldLabel, newLabel, o, udiff.Lines(o, n), contextLines)
	if err != nil { // edits from udiff.Lines always apply; keep a readable fallback anyway
		return "--- " + oldLabel + "\n+++ " + newLabel + "\n"
	}
	return out
}

// lines is a text cut into lines: line i is src[off[i]:off[i+1]], with its line ending
// (the last one may have none).
type lines struct {
	src []byte
	off []int32
}

func cutLines(src []byte) lines {
	n := bytes.Count(src, []byte{'\n'})
	off := make([]int32, 1, n+2)
	for i := 0; ; {
		j := bytes.IndexByte(src[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		off = append(off, int32(i))
	}
	if int(off[len(off)-1]) < len(src) {
		off = append(off, int32(len(src)))
	}
	return lines{src, off}
}

func (l lines) n() int               { return len(l.off) - 1 }
func (l lines) line(i int) []byte    { return l.src[l.off[i]:l.off[i+1]] }
func (l lines) span(i, j int) []byte { return l.src[l.off[i]:l.off[j]] }

// endsOpen reports whether the last line lacks a line ending.
func (l lines) endsOpen() bool { return len(l.src) > 0 && l.src[len(l.src)-1] != '\n' }

// intern numbers the lines of a and b so that two lines get the same number exactly when
// their bytes are equal: the LCS then compares integers, not strings. The numbers come from
// an open-addressing table filled to two thirds at most (4 bytes a slot).
func intern(a, b lines) (ra, rb []rune) {
	na, nb := a.n(), b.n()
	size := uint64(na+nb)*3/2 + 1
	table := make([]int32, size) // 1 + the number of the first line with some bytes; 0 is free
	seed := maphash.MakeSeed()
	at := func(ref int32) []byte {
		if int(ref) < na {
			return a.line(int(ref))
		}
		return b.line(int(ref) - na)
	}
	number := func(ref int32, l []byte) rune {
		i, _ := bits.Mul64(maphash.Bytes(seed, l), size) // the hash scaled to [0, size)
		for ; ; i++ {
			if i == size {
				i = 0
			}
			switch r := table[i]; {
			case r == 0:
				table[i] = ref + 1
				return ref
			case bytes.Equal(at(r-1), l):
				return r - 1
			}
		}
	}
	ra, rb = make([]rune, na), make([]rune, nb)
	for i := range ra {
		ra[i] = number(int32(i), a.line(i))
	}
	for i := range rb {
		rb[i] = number(int32(na+i), b.line(i))
	}
	return ra, rb
}

// lineEdit replaces old lines [start, end) by new lines [newStart, newEnd).
type lineEdit struct{ start, end, newStart, newEnd int }

// run is consecutive lines of one kind in a uhunk: ' ' and '-' are old lines, '+' new ones.
type run struct {
	kind     byte
	from, to int
}

type uhunk struct {
	fromLine, toLine   int // 1-based, as printed
	fromCount, toCount int
	runs               []run
}

func (h *uhunk) add(kind byte, from, to int) {
	if to <= from {
		return
	}
	switch kind {
	case '-':
		h.fromCount += to - from
	case '+':
		h.toCount += to - from
	default:
		h.fromCount += to - from
		h.toCount += to - from
	}
	if k := len(h.runs) - 1; k >= 0 && h.runs[k].kind == kind && h.runs[k].to == from {
		h.runs[k].to = to
		return
	}
	h.runs = append(h.runs, run{kind, from, to})
}

// equal adds the old lines [from, to) that exist as context, and says how many it added.
func (h *uhunk) equal(a lines, from, to int) int {
	from, to = max(from, 0), min(to, a.n())
	if to <= from {
		return 0
	}
	h.add(' ', from, to)
	return to - from
}

type unified struct {
	a, b  lines
	hunks []uhunk
}

// unifiedOf computes the hunks go-udiff would print for old and new. ok is false for the
// edit scripts whose handling by go-udiff it does not reproduce (a line end glued to
// another line), and for texts of 2 GB or more.
func unifiedOf(old, new []byte) (u unified, ok bool) {
	if len(old) >= math.MaxInt32 || len(new) >= math.MaxInt32 {
		return u, false
	}
	if bytes.Equal(old, new) {
		return u, true
	}
	a, b := cutLines(old), cutLines(new)
	u.a, u.b = a, b
	ra, rb := intern(a, b)
	diffs := lcs.DiffRunes(ra, rb)
	na, nb := a.n(), b.n()

	// go-udiff's lineEdits takes a slow path when an edit inserts at the end of the old
	// text, ends at an old last line without a line ending or inserts a new one: there it
	// merges adjacent edits and widens edits to whole lines (which, for edits of whole lines,
	// changes nothing in the cases accepted below).
	slow := false
	edits := make([]lineEdit, 0, len(diffs))
	for i, d := range diffs {
		e := lineEdit{d.Start, d.End, d.ReplStart, d.ReplEnd}
		if e.start > e.end || e.newStart > e.newEnd || e.end > na || e.newEnd > nb ||
			i > 0 && (e.start < edits[len(edits)-1].end || e.newStart < edits[len(edits)-1].newEnd) {
			return u, false // unsorted or overlapping: go-udiff sorts or refuses
		}
		if e.start == na && na > 0 && a.endsOpen() {
			return u, false // an insertion after an old last line without a line ending
		}
		insertsOpen := e.newEnd > e.newStart && e.newEnd == nb && b.endsOpen()
		if insertsOpen && e.end < na {
			return u, false // go-udiff would glue the next old line to the last new one
		}
		if e.start == na || e.end == na && a.endsOpen() || insertsOpen {
			slow = true
		}
		edits = append(edits, e)
	}
	if slow {
		merged := edits[:0]
		for _, e := range edits {
			if k := len(merged) - 1; k >= 0 && merged[k].end == e.start {
				merged[k].end = e.end
				merged[k].newEnd = e.newEnd
				continue
			}
			merged = append(merged, e)
		}
		edits = merged
	}

	// go-udiff's toUnified, in lines. toLine is the new side's line at old line last: it
	// counts the context inside a uhunk too, which go-udiff's does not (its new-side
	// numbers come out short after a uhunk that holds context between two edits).
	gap := 2 * contextLines
	var h *uhunk
	last, toLine := 0, 0
	for _, e := range edits {
		switch {
		case h != nil && e.start == last:
		case h != nil && e.start <= last+gap:
			h.equal(a, last, e.start)
			toLine += e.start - last
		default:
			if h != nil {
				h.equal(a, last, last+contextLines)
				u.hunks = append(u.hunks, *h)
			}
			toLine += e.start - last
			h = &uhunk{fromLine: e.start + 1, toLine: toLine + 1}
			delta := h.equal(a, e.start-contextLines, e.start)
			h.fromLine -= delta
			h.toLine -= delta
		}
		h.add('-', e.start, e.end)
		last = e.end
		h.add('+', e.newStart, e.newEnd)
		toLine += e.newEnd - e.newStart
	}
	if h != nil {
		h.equal(a, last, last+contextLines)
		u.hunks = append(u.hunks, *h)
	}
	return u, true
}

// appendHeader appends the uhunk's @@ line.
func appendHeader(dst []byte, h *uhunk) []byte {
	dst = append(dst, "@@"...)
	dst = appendRange(dst, " -", h.fromLine, h.fromCount)
	dst = appendRange(dst, " +", h.toLine, h.toCount)
	return append(dst, " @@\n"...)
}

func appendRange(dst []byte, sign string, line, count int) []byte {
	dst = append(dst, sign...)
	switch {
	case count > 1:
		dst = strconv.AppendInt(dst, int64(line), 10)
		dst = append(dst, ',')
		return strconv.AppendInt(dst, int64(count), 10)
	case line == 1 && count == 0:
		return append(dst, "0,0"...) // GNU diff's way of saying "empty"
	default:
		return strconv.AppendInt(dst, int64(line), 10)
	}
}

// side is the text whose lines a run of kind holds.
func (u *unified) side(kind byte) lines {
	if kind == '+' {
		return u.b
	}
	return u.a
}

// size is the length of what write writes.
func (u *unified) size(oldLabel, newLabel string) int {
	if len(u.hunks) == 0 {
		return 0
	}
	n := len("--- \n+++ \n") + len(oldLabel) + len(newLabel)
	var scratch [64]byte
	for i := range u.hunks {
		h := &u.hunks[i]
		n += len(appendHeader(scratch[:0], h))
		for _, r := range h.runs {
			s := u.side(r.kind)
			n += r.to - r.from + len(s.span(r.from, r.to))
			if r.to == s.n() && s.endsOpen() {
				n += len(noNewline)
			}
		}
	}
	return n
}

// lineWriter is a writer with a buffer of its own (bufio.Writer, strings.Builder,
// bytes.Buffer): the diff goes to it line by line, without another buffer.
type lineWriter interface {
	io.Writer
	io.ByteWriter
	io.StringWriter
}

// write writes the diff to w, through a buffer when w has none.
func (u *unified) write(w io.Writer, oldLabel, newLabel string) error {
	if len(u.hunks) == 0 {
		return nil
	}
	lw, ok := w.(lineWriter)
	var bw *bufio.Writer
	if !ok {
		bw = bufio.NewWriterSize(w, 32<<10)
		lw = bw
	}
	e := errWriter{w: lw}
	e.str("--- ")
	e.str(oldLabel)
	e.str("\n+++ ")
	e.str(newLabel)
	e.str("\n")
	var header [64]byte
	for i := range u.hunks {
		h := &u.hunks[i]
		e.bytes(appendHeader(header[:0], h))
		for _, r := range h.runs {
			s := u.side(r.kind)
			for k := r.from; k < r.to && e.err == nil; k++ {
				l := s.line(k)
				e.byte(r.kind)
				e.bytes(l)
				if l[len(l)-1] != '\n' {
					e.str(noNewline)
				}
			}
		}
	}
	if bw != nil && e.err == nil {
		e.err = bw.Flush()
	}
	return e.err
}

// errWriter keeps the first error and writes nothing after it.
type errWriter struct {
	w   lineWriter
	err error
}

func (e *errWriter) byte(c byte) {
	if e.err == nil {
		e.err = e.w.WriteByte(c)
	}
}

func (e *errWriter) bytes(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

func (e *errWriter) str(s string) {
	if e.err == nil {
		_, e.err = e.w.WriteString(s)
	}
}
