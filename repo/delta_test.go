package repo

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// checkDelta fails unless diffDelta's delta of src and dst rebuilds dst with go-git's (and
// git's) delta decoder.
func checkDelta(t *testing.T, src, dst []byte) []byte {
	t.Helper()
	d := diffDelta(src, dst)
	got, err := packfile.PatchDelta(src, d)
	if err != nil || !bytes.Equal(got, dst) {
		t.Fatalf("delta of %d bytes against %d: %v; rebuilt %q, want %q", len(dst), len(src), err, got, dst)
	}
	return d
}

// TestDiffDelta: deltas of edited versions rebuild them, the one-edit case is small, and
// the edges of the encoding (empty sides, sizes and offsets of several bytes, an edit at
// either end) hold.
func TestDiffDelta(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 3))
	text := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = "abcdefgh \n"[rng.IntN(10)]
		}
		return b
	}
	base := text(8 << 10)
	big := text(70 << 10) // offsets and copies of three bytes
	edit := func(b []byte, at, cut int, ins string) []byte {
		return append(append(append([]byte{}, b[:at]...), ins...), b[at+cut:]...)
	}
	for _, tc := range []struct {
		name     string
		src, dst []byte
		max      int // largest delta expected; 0: any
	}{
		{"one edit", base, edit(base, 4000, 7, "rev  10599"), 40},
		{"edit at the start", base, edit(base, 0, 3, "xyz!"), 40},
		{"edit at the end", base, edit(base, len(base)-5, 5, "the end"), 40},
		{"appended", base, append(append([]byte{}, base...), "more\n"...), 40},
		{"shortened", base, base[:len(base)-300], 40},
		{"same", base, base, 20},
		{"small, its middle changed", base[:80], edit(base[:80], 21, 20, string(text(20))), 40},
		{"large file, one edit", big, edit(big, 66000, 1, "Q"), 40},
		{"to nothing", base, nil, 0},
		{"unrelated", base, text(8 << 10), 0},
		{"two far edits", base, edit(edit(base, 100, 3, "one"), 7000, 3, "two"), 0},
		{"long insert", base, edit(base, 4000, 0, string(text(900))), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := checkDelta(t, tc.src, tc.dst)
			if tc.max > 0 && len(d) > tc.max {
				t.Errorf("delta of %d bytes, want at most %d", len(d), tc.max)
			}
		})
	}
}

// FuzzDiffDelta: any delta diffDelta makes rebuilds its target.
func FuzzDiffDelta(f *testing.F) {
	f.Add([]byte("hello world\n"), []byte("hello there world\n"))
	f.Add([]byte{}, []byte("x"))
	f.Add(bytes.Repeat([]byte("ab"), 300), bytes.Repeat([]byte("ab"), 301))
	f.Fuzz(func(t *testing.T, src, dst []byte) {
		if len(src) == 0 {
			t.Skip("go-git decodes no delta against nothing; ckpt makes none")
		}
		checkDelta(t, src, dst)
	})
}
