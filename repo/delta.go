package repo

import (
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// diffDelta returns a git delta that makes dst out of src. A new version of a checkpoint
// is most often its parent with one place edited: then the delta is what the two share at
// each end, copied, and the middle inserted, found with two comparisons instead of go-git's
// block index of src (packfile.DiffDelta, which a push of 20,000 versions spent a tenth of
// its time in). So is a small object's (a tree, a commit) that keeps half of its parent's
// bytes, where a block index would find little more. Other pairs get go-git's delta.
func diffDelta(src, dst []byte) []byte {
	if d := edgeDelta(src, dst); d != nil {
		return d
	}
	return packfile.DiffDelta(src, dst)
}

// edgeDelta is the delta of diffDelta's common cases, or nil when the middle of dst that
// differs from src is more than an eighth of its length (half, up to smallObject bytes),
// or either is empty (go-git's decoder refuses a delta against nothing, git's one shorter
// than 4 bytes) or src is too large for a delta's offsets.
func edgeDelta(src, dst []byte) []byte {
	if len(src) == 0 || len(dst) == 0 || len(src) > 1<<32-1 {
		return nil
	}
	n := min(len(src), len(dst))
	p := 0
	for p < n && src[p] == dst[p] {
		p++
	}
	s := 0
	for s < n-p && src[len(src)-1-s] == dst[len(dst)-1-s] {
		s++
	}
	mid := dst[p : len(dst)-s]
	if len(mid) > len(dst)/8 && (len(dst) > smallObject || len(mid) > len(dst)/2) {
		return nil
	}
	out := make([]byte, 0, 32+len(mid)+len(mid)/127)
	out = appendDeltaSize(out, len(src))
	out = appendDeltaSize(out, len(dst))
	out = appendDeltaCopy(out, 0, p)
	for len(mid) > 0 {
		k := min(len(mid), 127)
		out = append(out, byte(k))
		out = append(out, mid[:k]...)
		mid = mid[k:]
	}
	return appendDeltaCopy(out, len(src)-s, s)
}

// smallObject is the size up to which edgeDelta takes a middle of up to half the object.
const smallObject = 1 << 10

// appendDeltaSize appends a delta header's size: 7 bits a byte, low bits first.
func appendDeltaSize(out []byte, n int) []byte {
	for n >= 0x80 {
		out = append(out, byte(n)|0x80)
		n >>= 7
	}
	return append(out, byte(n))
}

// appendDeltaCopy appends copy instructions for src[off:off+n]: each names its offset's and
// size's non-zero bytes in its first byte; a size is at most 3 bytes.
func appendDeltaCopy(out []byte, off, n int) []byte {
	const maxCopy = 1<<24 - 1
	for n > 0 {
		k := min(n, maxCopy)
		at := len(out)
		cmd := byte(0x80)
		out = append(out, 0)
		for i := range 4 {
			if b := byte(off >> (8 * i)); b != 0 {
				cmd |= 1 << i
				out = append(out, b)
			}
		}
		for i := range 3 {
			if b := byte(k >> (8 * i)); b != 0 {
				cmd |= 0x10 << i
				out = append(out, b)
			}
		}
		out[at] = cmd
		off += k
		n -= k
	}
	return out
}
