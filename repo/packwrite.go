package repo

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
)

// packWriter writes a pack entry by entry, so that an entry another pack holds already is
// copied as it is stored there (its compressed bytes, its delta) instead of being inflated,
// compared with others and compressed again: what git's pack-objects calls reusing pack
// data. New entries hold an object whole or as a delta against an object written before it
// in the same pack (an offset delta); the deltas are go-git's (packfile.DiffDelta), the
// index go-git's idxfile writer and encoder. The pack is put in place by installPack, in
// git's order. Every base precedes its deltas, and no entry names a base outside the pack.
type packWriter struct {
	r     *Repo
	fsys  *gitFS
	tmp   billy.File
	w     *bufio.Writer
	sum   hash.Hash
	off   int64
	want  uint32
	n     uint32
	index idxfile.Writer
	at    map[Hash]int64 // offset of every object written
	head  []byte
	zbuf  bytes.Buffer
}

// newPackWriter starts a pack of exactly count objects in r; -1 when the count is not
// known before the end (finish then writes it into the header and checksums the pack).
func (r *Repo) newPackWriter(count int) (*packWriter, error) {
	fsys := newGitFS(r.GitDir, r.store.Opts.Fsync)
	tmp, err := fsys.TempFile(filepath.Join("objects", "pack"), "tmp_pack_")
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", r.GitDir, err)
	}
	pw := &packWriter{r: r, fsys: fsys, tmp: tmp, want: uint32(count), at: make(map[Hash]int64, max(count, 0))}
	if count >= 0 {
		pw.sum = sha1.New() // else computed when finished
	}
	pw.w = bufio.NewWriterSize(tmp, 1<<16)
	var hdr [12]byte
	copy(hdr[:], "PACK")
	binary.BigEndian.PutUint32(hdr[4:], 2)
	binary.BigEndian.PutUint32(hdr[8:], uint32(max(count, 0)))
	pw.index.OnHeader(uint32(max(count, 0)))
	if err := pw.write(hdr[:]); err != nil {
		pw.abort()
		return nil, err
	}
	return pw, nil
}

func (pw *packWriter) write(b []byte) error {
	if pw.sum != nil {
		pw.sum.Write(b)
	}
	_, err := pw.w.Write(b)
	pw.off += int64(len(b))
	return err
}

// has reports whether the pack holds h already.
func (pw *packWriter) has(h Hash) bool { _, ok := pw.at[h]; return ok }

// entryHeader is the type and size header of an entry, then for an offset delta the
// distance back to its base.
func (pw *packWriter) entryHeader(typ plumbing.ObjectType, size int64, base int64) []byte {
	b := pw.head[:0]
	c := byte(typ)<<4 | byte(size&15)
	size >>= 4
	for size > 0 {
		b = append(b, c|0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	b = append(b, c)
	if typ == plumbing.OFSDeltaObject {
		rel := uint64(pw.off - base)
		var tmp [10]byte
		i := len(tmp) - 1
		tmp[i] = byte(rel & 0x7f)
		for rel >>= 7; rel > 0; rel >>= 7 {
			rel--
			i--
			tmp[i] = 0x80 | byte(rel&0x7f)
		}
		b = append(b, tmp[i:]...)
	}
	pw.head = b
	return b
}

// entry writes one entry: its header, then data, already compressed.
func (pw *packWriter) entry(h Hash, typ plumbing.ObjectType, size int64, base Hash, data []byte) error {
	if pw.has(h) {
		return nil
	}
	if pw.n == pw.want && pw.sum != nil {
		return fmt.Errorf("pack %s: more objects than the %d announced", pw.r.GitDir, pw.want)
	}
	var baseOff int64
	if typ == plumbing.OFSDeltaObject {
		var ok bool
		if baseOff, ok = pw.at[base]; !ok {
			return fmt.Errorf("pack %s: delta base %s of %s not written before it", pw.r.GitDir, short(base), short(h))
		}
	}
	hdr := pw.entryHeader(typ, size, baseOff)
	crc := crc32.Update(crc32.ChecksumIEEE(hdr), crc32.IEEETable, data)
	start := pw.off
	if err := pw.write(hdr); err != nil {
		return err
	}
	if err := pw.write(data); err != nil {
		return err
	}
	pw.at[h] = start
	pw.index.Add(h, uint64(start), crc)
	pw.n++
	return nil
}

// zlib writers are reused: a new one allocates its tables (hundreds of KB). Whole objects
// are compressed at zlib's default level, as git compresses pack entries; deltas, a few
// hundred bytes each, at the fastest, which makes them hardly bigger but costs a fraction:
// resetting the default level's tables costs more than compressing a delta.
var (
	zlibWriters     = sync.Pool{New: func() any { w, _ := zlib.NewWriterLevel(nil, zlib.DefaultCompression); return w }}
	zlibFastWriters = sync.Pool{New: func() any { w, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed); return w }}
	// Entries up to storeBelow bytes (most deltas of a push) are stored, not compressed:
	// building Huffman tables cost more than the few bytes they would save.
	zlibStoreWriters = sync.Pool{New: func() any { w, _ := zlib.NewWriterLevel(nil, zlib.NoCompression); return w }}
)

const storeBelow = 128

func (pw *packWriter) compress(data []byte, pool *sync.Pool) []byte {
	if len(data) < storeBelow {
		pool = &zlibStoreWriters
	}
	pw.zbuf.Reset()
	zw := pool.Get().(*zlib.Writer)
	zw.Reset(&pw.zbuf)
	zw.Write(data)
	zw.Close()
	pool.Put(zw)
	return pw.zbuf.Bytes()
}

// writeWhole writes object h whole.
func (pw *packWriter) writeWhole(h Hash, typ plumbing.ObjectType, data []byte) error {
	if pw.has(h) {
		return nil
	}
	return pw.entry(h, typ, int64(len(data)), ZeroHash, pw.compress(data, &zlibWriters))
}

// writeDelta writes object h as delta, a delta against base, which the pack holds already.
func (pw *packWriter) writeDelta(h, base Hash, delta []byte) error {
	if pw.has(h) {
		return nil
	}
	return pw.entry(h, plumbing.OFSDeltaObject, int64(len(delta)), base, pw.compress(delta, &zlibFastWriters))
}

// copyEntry copies the entry of h at off in pack p as it is stored there. A delta's base,
// named base, must be in this pack already: the copy becomes an offset delta against it.
func (pw *packWriter) copyEntry(h Hash, p *packFile, off int64, base Hash) error {
	if pw.has(h) {
		return nil
	}
	defer runtime.KeepAlive(p)
	e, err := p.header(off)
	if err != nil {
		return err
	}
	end, err := p.entryEnd(off)
	if err != nil {
		return err
	}
	data := p.pack.data[e.data:end]
	typ := e.typ
	if typ == plumbing.OFSDeltaObject || typ == plumbing.REFDeltaObject {
		typ = plumbing.OFSDeltaObject
	}
	return pw.entry(h, typ, e.size, base, data)
}

// finish completes the pack and its index and puts both in place (installPack). It
// returns the pack's name.
func (pw *packWriter) finish() (string, error) {
	if pw.sum != nil && pw.n != pw.want {
		pw.abort()
		return "", fmt.Errorf("pack %s: %d objects written, %d announced", pw.r.GitDir, pw.n, pw.want)
	}
	if err := pw.w.Flush(); err != nil {
		pw.abort()
		return "", err
	}
	if pw.sum == nil {
		if err := pw.countAndSum(); err != nil {
			pw.abort()
			return "", err
		}
	}
	var sum Hash
	copy(sum[:], pw.sum.Sum(nil))
	if _, err := pw.tmp.Write(sum[:]); err != nil {
		pw.abort()
		return "", err
	}
	if err := pw.tmp.Close(); err != nil {
		pw.abort()
		return "", err
	}
	if err := pw.index.OnFooter(sum); err != nil {
		pw.abort()
		return "", err
	}
	idx, err := pw.index.Index()
	if err != nil {
		pw.abort()
		return "", err
	}
	var b bytes.Buffer
	if _, err := idxfile.NewEncoder(&b).Encode(idx); err != nil {
		pw.abort()
		return "", err
	}
	name, err := pw.r.installPack(pw.fsys, pw.tmp.Name(), b.Bytes(), sum)
	if err != nil {
		pw.abort()
	}
	return name, err
}

// countAndSum writes the number of objects into the header of a pack whose count was not
// known at the start, and checksums the pack as it now is.
func (pw *packWriter) countAndSum() error {
	wa, ok := pw.tmp.(io.WriterAt)
	if !ok {
		return fmt.Errorf("pack %s: cannot write the header", pw.r.GitDir)
	}
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], pw.n)
	if _, err := wa.WriteAt(n[:], 8); err != nil {
		return err
	}
	pw.sum = sha1.New()
	buf := make([]byte, 1<<16)
	for off := int64(0); off < pw.off; {
		k, err := pw.tmp.ReadAt(buf[:min(int64(len(buf)), pw.off-off)], off)
		if k == 0 && err != nil {
			return err
		}
		pw.sum.Write(buf[:k])
		off += int64(k)
	}
	return nil
}

// abort drops the pack being written.
func (pw *packWriter) abort() {
	_ = pw.tmp.Close()
	_ = pw.fsys.Remove(pw.tmp.Name())
}

// sortEntries lists the entries by offset, with their names (once).
func (p *packFile) sortEntries() error {
	p.endsOnce.Do(func() {
		type ent struct {
			off  int64
			name Hash
		}
		ents := make([]ent, 0, p.n)
		d := p.idx.data
		for i := range p.n {
			o, ok := p.offset(i)
			if !ok {
				p.endsErr = fmt.Errorf("%s.idx: %w: bad offset", p.name, errCorruptPack)
				return
			}
			var h Hash
			copy(h[:], d[p.names+int(i)*20:])
			ents = append(ents, ent{o, h})
		}
		runtime.KeepAlive(p)
		slices.SortFunc(ents, func(a, b ent) int { return cmp.Compare(a.off, b.off) })
		p.ends = make([]int64, len(ents))
		p.endNames = make([]Hash, len(ents))
		for i, e := range ents {
			p.ends[i], p.endNames[i] = e.off, e.name
		}
	})
	return p.endsErr
}

// byOffset returns the names of the pack's objects in the order of their entries.
func (p *packFile) byOffset() ([]Hash, error) {
	if err := p.sortEntries(); err != nil {
		return nil, err
	}
	return p.endNames, nil
}

// entryAt returns the index (in offset order) of the entry at off.
func (p *packFile) entryAt(off int64) (int, error) {
	if err := p.sortEntries(); err != nil {
		return 0, err
	}
	i, ok := slices.BinarySearch(p.ends, off)
	if !ok {
		return 0, fmt.Errorf("%s.pack: %w: no entry at %d", p.name, errCorruptPack, off)
	}
	return i, nil
}

// entryEnd is where the entry at off ends: at the next entry, or at the pack's trailer.
func (p *packFile) entryEnd(off int64) (int64, error) {
	i, err := p.entryAt(off)
	if err != nil {
		return 0, err
	}
	if i+1 == len(p.ends) {
		return int64(len(p.pack.data) - 20), nil
	}
	return p.ends[i+1], nil
}

// baseOf names the base of a delta entry; ok is false for an entry that is no delta.
func (p *packFile) baseOf(e entry) (Hash, bool) {
	switch e.typ {
	case plumbing.REFDeltaObject:
		return e.ref, true
	case plumbing.OFSDeltaObject:
		i, err := p.entryAt(e.base)
		if err != nil {
			return ZeroHash, true // named nowhere: the caller refuses it
		}
		return p.endNames[i], true
	}
	return ZeroHash, false
}
