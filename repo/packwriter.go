package repo

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
)

// packWriter streams objects into a new pack file and writes its index, without asking git
// or go-git to parse the pack afterwards. A blob may be stored as a delta against an earlier
// blob of the same pack (consecutive versions of a checkpoint differ in a few lines), so a
// copy of a session's history is small and `git push` can reuse the deltas as they are.
type packWriter struct {
	dir     string // objects/pack
	tmp     *os.File
	w       *bufio.Writer
	crc     hash.Hash32
	offset  int64
	zw      *zlib.Writer
	zbuf    bytes.Buffer
	entries []packEntry
	index   map[Hash]int // position in entries
}

type packEntry struct {
	hash   Hash
	offset int64
	crc    uint32
}

// Object types in the pack format.
const (
	packCommit   = 1
	packTree     = 2
	packBlob     = 3
	packOfsDelta = 6
)

func newPackWriter(gitDir string) (*packWriter, error) {
	dir := filepath.Join(gitDir, "objects", "pack")
	if err := os.MkdirAll(dir, DirPerm); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(dir, "tmp_pack_")
	if err != nil {
		return nil, err
	}
	pw := &packWriter{dir: dir, tmp: tmp, crc: crc32.NewIEEE(), index: map[Hash]int{}}
	pw.w = bufio.NewWriterSize(tmp, 1<<16)
	pw.zw, _ = zlib.NewWriterLevel(&pw.zbuf, zlib.BestSpeed)
	// Header: "PACK", version 2, object count (patched when the pack is finished).
	if _, err := pw.w.Write([]byte{'P', 'A', 'C', 'K', 0, 0, 0, 2, 0, 0, 0, 0}); err != nil {
		return nil, err
	}
	pw.offset = 12
	return pw, nil
}

func packType(t plumbing.ObjectType) byte {
	switch t {
	case plumbing.CommitObject:
		return packCommit
	case plumbing.TreeObject:
		return packTree
	default:
		return packBlob
	}
}

// has reports whether the pack already holds h.
func (pw *packWriter) has(h Hash) bool { _, ok := pw.index[h]; return ok }

// add writes one object. base, when not zero, is an object of this pack that content is
// stored as a delta against (baseContent is its content); a delta is used only when it is
// less than half the size of the object.
func (pw *packWriter) add(h Hash, t plumbing.ObjectType, content []byte, base Hash, baseContent []byte) error {
	if pw.has(h) {
		return nil
	}
	start := pw.offset
	pw.crc.Reset()
	typ, payload := packType(t), content
	var ofs []byte
	if i, ok := pw.index[base]; ok && base != ZeroHash {
		if d := makeDelta(baseContent, content); len(d) < len(content)/2 {
			typ, payload = packOfsDelta, d
			ofs = encodeOfs(start - pw.entries[i].offset)
		}
	}
	head := objectHeader(typ, len(payload))
	pw.zbuf.Reset()
	pw.zw.Reset(&pw.zbuf)
	if _, err := pw.zw.Write(payload); err != nil {
		return err
	}
	if err := pw.zw.Close(); err != nil {
		return err
	}
	for _, part := range [][]byte{head, ofs, pw.zbuf.Bytes()} {
		if _, err := pw.w.Write(part); err != nil {
			return err
		}
		pw.crc.Write(part)
		pw.offset += int64(len(part))
	}
	pw.index[h] = len(pw.entries)
	pw.entries = append(pw.entries, packEntry{hash: h, offset: start, crc: pw.crc.Sum32()})
	return nil
}

// objectHeader is the type and size of a pack entry, 7 bits of size per byte.
func objectHeader(typ byte, size int) []byte {
	b := []byte{typ<<4 | byte(size&0x0f)}
	size >>= 4
	for size > 0 {
		b[len(b)-1] |= 0x80
		b = append(b, byte(size&0x7f))
		size >>= 7
	}
	return b
}

// encodeOfs is the negative offset of an OFS_DELTA's base, in git's big-endian base-128
// with the off-by-one per byte.
func encodeOfs(off int64) []byte {
	b := []byte{byte(off & 0x7f)}
	for off >>= 7; off > 0; off >>= 7 {
		off--
		b = append([]byte{byte(0x80 | off&0x7f)}, b...)
	}
	return b
}

// makeDelta encodes target as git delta instructions against base: copy the common
// prefix, insert the middle, copy the common suffix. Versions of a checkpoint share
// almost everything, so this simple delta is nearly as small as a full diff's.
func makeDelta(base, target []byte) []byte {
	var d []byte
	d = appendVarint(d, len(base))
	d = appendVarint(d, len(target))
	p := 0
	for p < len(base) && p < len(target) && base[p] == target[p] {
		p++
	}
	s := 0
	for s < len(base)-p && s < len(target)-p && base[len(base)-1-s] == target[len(target)-1-s] {
		s++
	}
	d = appendCopy(d, 0, p)
	for mid := target[p : len(target)-s]; len(mid) > 0; {
		n := min(len(mid), 127)
		d = append(append(d, byte(n)), mid[:n]...)
		mid = mid[n:]
	}
	return appendCopy(d, len(base)-s, s)
}

func appendVarint(d []byte, n int) []byte {
	for n >= 0x80 {
		d = append(d, byte(n&0x7f|0x80))
		n >>= 7
	}
	return append(d, byte(n))
}

// appendCopy adds copy instructions for base[off:off+n], 64 KiB at most each.
func appendCopy(d []byte, off, n int) []byte {
	for n > 0 {
		size := min(n, 0x10000)
		op := byte(0x80)
		var args []byte
		for i := range 4 {
			if v := byte(off >> (8 * i)); v != 0 {
				op |= 1 << i
				args = append(args, v)
			}
		}
		if size != 0x10000 { // a size of zero means 64 KiB
			for i := range 3 {
				if v := byte(size >> (8 * i)); v != 0 {
					op |= 0x10 << i
					args = append(args, v)
				}
			}
		}
		d = append(append(d, op), args...)
		off += size
		n -= size
	}
	return d
}

// finish patches the object count, writes the trailer and the version 2 index, fsyncs both
// when sync is set, and renames them into place. An empty pack is discarded.
func (pw *packWriter) finish(sync bool) (string, error) {
	defer os.Remove(pw.tmp.Name())
	if len(pw.entries) == 0 {
		pw.tmp.Close()
		return "", nil
	}
	if err := pw.w.Flush(); err != nil {
		return "", err
	}
	// The count is known only now: patch the header, then hash the whole pack.
	if _, err := pw.tmp.WriteAt(binary.BigEndian.AppendUint32(nil, uint32(len(pw.entries))), 8); err != nil {
		return "", err
	}
	sum := sha1.New()
	if _, err := pw.tmp.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	if _, err := io.Copy(sum, pw.tmp); err != nil {
		return "", err
	}
	var packSum Hash
	copy(packSum[:], sum.Sum(nil))
	if _, err := pw.tmp.Write(packSum[:]); err != nil {
		return "", err
	}
	if sync {
		if err := pw.tmp.Sync(); err != nil {
			return "", err
		}
	}
	if err := pw.tmp.Close(); err != nil {
		return "", err
	}
	base := filepath.Join(pw.dir, "pack-"+packSum.String())
	idx := pw.index2(packSum)
	if err := WriteFileAtomic(base+".idx", idx, 0o444, sync); err != nil {
		return "", err
	}
	if err := os.Rename(pw.tmp.Name(), base+".pack"); err != nil {
		return "", err
	}
	_ = os.Chmod(base+".pack", 0o444)
	if sync {
		if err := syncDir(pw.dir); err != nil {
			return "", err
		}
	}
	return "pack-" + packSum.String(), nil
}

// index2 is the pack's version 2 index: fan-out, sorted ids, CRCs, offsets.
func (pw *packWriter) index2(packSum Hash) []byte {
	es := append([]packEntry(nil), pw.entries...)
	sort.Slice(es, func(i, j int) bool { return bytes.Compare(es[i].hash[:], es[j].hash[:]) < 0 })
	var b bytes.Buffer
	b.Write([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2})
	var fan [256]uint32
	for _, e := range es {
		fan[e.hash[0]]++
	}
	var total uint32
	for i := range fan {
		total += fan[i]
		b.Write(binary.BigEndian.AppendUint32(nil, total))
	}
	for _, e := range es {
		b.Write(e.hash[:])
	}
	for _, e := range es {
		b.Write(binary.BigEndian.AppendUint32(nil, e.crc))
	}
	var large []int64
	for _, e := range es {
		if e.offset < 1<<31 {
			b.Write(binary.BigEndian.AppendUint32(nil, uint32(e.offset)))
		} else {
			b.Write(binary.BigEndian.AppendUint32(nil, uint32(1<<31|len(large))))
			large = append(large, e.offset)
		}
	}
	for _, off := range large {
		b.Write(binary.BigEndian.AppendUint64(nil, uint64(off)))
	}
	b.Write(packSum[:])
	idxSum := sha1.Sum(b.Bytes())
	b.Write(idxSum[:])
	return b.Bytes()
}
