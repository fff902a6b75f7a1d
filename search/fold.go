package search

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// foldRune maps a rune to the form both the query and the text are compared in. Lowering
// the upper case (rather than lowering alone) puts ς and σ, or the Kelvin sign and k, in one
// class, as strings.EqualFold does.
func foldRune(r rune) rune { return unicode.ToLower(unicode.ToUpper(r)) }

// appendFold appends the case-folded form of s to dst. Newlines stay where they are, so a
// folded text has the same lines as the original; invalid UTF-8 is copied byte for byte.
func appendFold(dst, s []byte) []byte {
	dst = slices.Grow(dst, len(s))
	for i := 0; i < len(s); {
		// Runs of ASCII, the bulk of any checkpoint, go eight bytes at a time while there is
		// room, then through a table.
		out := dst[len(dst):cap(dst)]
		k := 0
		for i+8 <= len(s) && k+8 <= len(out) {
			w := binary.LittleEndian.Uint64(s[i:])
			if w&highBits != 0 {
				break
			}
			binary.LittleEndian.PutUint64(out[k:], lowerWord(w))
			i += 8
			k += 8
		}
		for i < len(s) && k < len(out) && s[i] < utf8.RuneSelf {
			out[k] = lowerASCII[s[i]]
			i++
			k++
		}
		dst = dst[:len(dst)+k]
		if i == len(s) {
			break
		}
		if s[i] < utf8.RuneSelf { // out of room: a multi-byte fold grew the text
			dst = slices.Grow(dst, len(s)-i)
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, s[i])
		} else {
			dst = utf8.AppendRune(dst, foldRune(r))
		}
		i += n
	}
	return dst
}

const highBits = 0x8080808080808080

// lowerWord lowers the ASCII letters among eight ASCII bytes: a byte b gets its high bit
// set in b+0x3f when b >= 'A' and in b+0x25 when b > 'Z' (no byte carries into the next,
// as every b < 0x80), and the letters get the 0x20 bit.
func lowerWord(w uint64) uint64 {
	upper := (w + 0x3f3f3f3f3f3f3f3f) &^ (w + 0x2525252525252525) & highBits
	return w | upper>>2
}

var lowerASCII = func() (t [utf8.RuneSelf]byte) {
	for c := range t {
		t[c] = byte(unicode.ToLower(rune(c)))
	}
	return t
}()

// foldMap folds line and returns, for every byte of the folded form, the offset in line of
// the rune it came from, plus a final entry len(line): it maps a match in the folded line
// back to the original's bytes. An ASCII line folds byte for byte: pos is then nil.
func foldMap(line string) (folded []byte, pos []int) {
	ascii := true
	for i := range len(line) {
		if line[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return appendFold(make([]byte, 0, len(line)), []byte(line)), nil
	}
	folded = make([]byte, 0, len(line))
	pos = make([]int, 0, len(line)+1)
	for i := 0; i < len(line); {
		r, n := utf8.DecodeRuneInString(line[i:])
		before := len(folded)
		if r == utf8.RuneError && n == 1 {
			folded = append(folded, line[i])
		} else {
			folded = utf8.AppendRune(folded, foldRune(r))
		}
		for range len(folded) - before {
			pos = append(pos, i)
		}
		i += n
	}
	return folded, append(pos, len(line))
}

// scanLines calls fn with the bounds [start, end) of every line of text (folded, lines
// ending in '\n' except perhaps the last) that holds every term. It looks for the first term
// only, which foldTerms makes the one with the rarest byte, and checks the others on the
// lines it finds. fn returns false to stop.
func scanLines(text []byte, terms [][]byte, fn func(start, end int) bool) {
	if len(terms) == 0 {
		return
	}
	find := newFinder(terms[0])
	for off := 0; off < len(text); {
		i := find.index(text[off:])
		if i < 0 {
			return
		}
		pos := off + i
		start := bytes.LastIndexByte(text[:pos], '\n') + 1
		end := len(text)
		if j := bytes.IndexByte(text[pos:], '\n'); j >= 0 {
			end = pos + j
		}
		if hasAll(text[start:end], terms[1:]) && !fn(start, end) {
			return
		}
		off = end + 1
	}
}

// byteRank says how common a byte is in checkpoint text (folded), higher for more common:
// English letters in order of frequency, then Markdown punctuation and digits, and the
// bytes of CJK characters in UTF-8. Unlisted bytes are rare.
var byteRank = func() (r [256]uint8) {
	for b := 0x80; b <= 0xBF; b++ { // continuation bytes
		r[b] = 250
	}
	for b := 0xE4; b <= 0xE9; b++ { // lead bytes of CJK characters
		r[b] = 240
	}
	const common = " etaoinsrhldcumfpgwybvkxjqz-.,:`()/_[]*#>0123456789"
	for i := range len(common) {
		r[common[i]] = uint8(255 - i)
	}
	r['\n'] = 255
	return r
}()

// rarest is the offset of the rarest byte of term.
func rarest(term []byte) int {
	at := 0
	for i, b := range term {
		if byteRank[b] < byteRank[term[at]] {
			at = i
		}
	}
	return at
}

// finder finds a term by its rarest byte, which bytes.IndexByte skips to much faster than
// bytes.Index matches a term that starts with a common letter. When even the rarest byte
// is common, bytes.Index does better.
type finder struct {
	term []byte
	at   int
}

func newFinder(term []byte) finder { return finder{term: term, at: rarest(term)} }

// index returns the offset of the first occurrence of the term in text, or -1.
func (f finder) index(text []byte) int {
	if len(f.term) == 0 || byteRank[f.term[f.at]] >= byteRank['s'] {
		return bytes.Index(text, f.term)
	}
	b := f.term[f.at]
	for off := f.at; off < len(text); {
		i := bytes.IndexByte(text[off:], b)
		if i < 0 {
			return -1
		}
		pos := off + i - f.at
		if pos+len(f.term) > len(text) {
			return -1
		}
		if bytes.Equal(text[pos:pos+len(f.term)], f.term) {
			return pos
		}
		off += i + 1
	}
	return -1
}

func hasAll(line []byte, terms [][]byte) bool {
	for _, t := range terms {
		if !bytes.Contains(line, t) {
			return false
		}
	}
	return true
}

// snippetRunes is how long a snippet may be, in characters.
const snippetRunes = 160

// snippet trims line to at most snippetRunes characters around the first match and returns
// it with the byte ranges, in the snippet, of every occurrence of every term.
func snippet(line string, terms [][]byte) (string, [][2]int) {
	line = strings.TrimSpace(line)
	folded, pos := foldMap(line)
	at := func(i int) int {
		if pos == nil {
			return i
		}
		return pos[i]
	}
	var ranges [][2]int
	for _, t := range terms {
		for off := 0; off < len(folded); {
			i := bytes.Index(folded[off:], t)
			if i < 0 || len(t) == 0 {
				break
			}
			a, b := off+i, off+i+len(t)
			ranges = append(ranges, [2]int{at(a), at(b)})
			off = b
		}
	}
	ranges = mergeRanges(ranges)
	if utf8.RuneCountInString(line) <= snippetRunes {
		return line, ranges
	}
	// Cut a window of snippetRunes characters that holds the first match, with as much
	// context before it as after when the match is short.
	first := 0
	if len(ranges) > 0 {
		first = ranges[0][0]
	}
	matchRunes := 0
	if len(ranges) > 0 {
		matchRunes = utf8.RuneCountInString(line[ranges[0][0]:ranges[0][1]])
	}
	n := utf8.RuneCountInString(line)
	startRune := utf8.RuneCountInString(line[:first]) - (snippetRunes-matchRunes)/2
	startRune = max(0, min(startRune, n-snippetRunes))
	from := runeOffset(line, startRune)
	to := runeOffset(line, startRune+snippetRunes)
	out := line[from:to]
	shift := 0
	if from > 0 {
		out = "…" + out
		shift = len("…")
	}
	if to < len(line) {
		out += "…"
	}
	var clipped [][2]int
	for _, r := range ranges {
		a, b := max(r[0], from), min(r[1], to)
		if a < b {
			clipped = append(clipped, [2]int{a - from + shift, b - from + shift})
		}
	}
	return out, clipped
}

// runeOffset is the byte offset of the n-th rune of s (len(s) past the end).
func runeOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// mergeRanges sorts ranges and joins those that overlap or touch.
func mergeRanges(rs [][2]int) [][2]int {
	if len(rs) < 2 {
		return rs
	}
	slices.SortFunc(rs, func(a, b [2]int) int { return cmp.Compare(a[0], b[0]) })
	out := rs[:1]
	for _, r := range rs[1:] {
		last := &out[len(out)-1]
		if r[0] <= last[1] {
			last[1] = max(last[1], r[1])
			continue
		}
		out = append(out, r)
	}
	return out
}
