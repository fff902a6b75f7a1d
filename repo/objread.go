package repo

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// objectReader reads objects as git does, without go-git's storage: a loose object from
// its file, a packed one by looking its name up in the pack's index (the fan-out table,
// then a binary search over the sorted names; the index is memory-mapped and never
// decoded as a whole) and reading the entry at its offset, deltas applied with go-git's
// packfile.PatchDelta. go-git's storage decodes every index of a repository in full the
// first time it reads a packed object, which cost a third of a commit at 10,000 commits;
// this costs a few page faults whatever the history's length.
//
// Packs are listed by their .idx, as git lists them, newest first; a .idx whose .pack is
// missing or does not match is passed over. An object found nowhere makes the reader list
// the packs again once (a writer may have packed it meanwhile) before it says it is not
// there. Nothing it returns points into a mapping: a mapping is released only when no
// reader uses it any more.
type objectReader struct {
	gitDir string

	mu         sync.Mutex
	listed     bool
	listedAt   time.Time // modification time of objects/pack when listed
	listedWall time.Time // when it was listed
	packs      []*packFile
	cache      baseCache
	recent     recentCache
}

func newObjectReader(gitDir string) *objectReader { return &objectReader{gitDir: gitDir} }

// errCorruptPack is wrapped by every error about a pack or index that does not parse.
var errCorruptPack = errors.New("corrupt pack")

// packFile is one pack and its index, mapped when first needed.
type packFile struct {
	name string // path without extension
	once sync.Once
	err  error
	idx  *mapping
	// The .pack is mapped when an object is first found in the index (openPack): a
	// process that only looks objects up (the loose ones, newer than every pack) maps
	// no pack at all.
	packOnce sync.Once
	packErr  error
	pack     *mapping
	n        uint32 // objects
	// Offsets of the tables in idx.
	names, crcs, offs, offs64 int
	failed                    atomic.Bool // open failed: list it again next time
	// ends are the offsets of the entries, sorted (entryEnd), read when first needed.
	endsOnce sync.Once
	ends     []int64
	endNames []Hash
	endsErr  error
}

// Reset forgets the packs listed, after packs were added or removed.
func (o *objectReader) reset() {
	o.mu.Lock()
	o.listed, o.packs = false, nil
	o.cache = baseCache{}
	o.recent = recentCache{}
	o.mu.Unlock()
}

// packList lists the packs (once, or again when relist is set and the pack directory may
// have changed since: its modification time moved, or was too close to the listing to
// tell, file times being as coarse as the kernel's clock tick).
func (o *objectReader) packList(relist bool) []*packFile {
	o.mu.Lock()
	defer o.mu.Unlock()
	dir := filepath.Join(o.gitDir, "objects", "pack")
	if o.listed && !relist {
		return o.packs
	}
	now := time.Now()
	fi, err := os.Stat(dir)
	var mtime time.Time
	if err == nil {
		mtime = fi.ModTime()
	}
	if o.listed && mtime.Equal(o.listedAt) && o.listedWall.Sub(mtime) > 50*time.Millisecond {
		return o.packs
	}
	es, _ := os.ReadDir(dir)
	o.listedAt, o.listedWall = mtime, now
	type named struct {
		name  string
		mtime int64
	}
	var found []named
	for _, e := range es {
		stem, ok := strings.CutSuffix(e.Name(), ".idx")
		if !ok || !strings.HasPrefix(stem, "pack-") {
			continue
		}
		var mt int64
		if fi, err := e.Info(); err == nil {
			mt = fi.ModTime().UnixNano()
		}
		found = append(found, named{filepath.Join(dir, stem), mt})
	}
	// Newest first, as git orders them: recent objects are looked for most.
	slices.SortStableFunc(found, func(a, b named) int {
		switch {
		case a.mtime > b.mtime:
			return -1
		case a.mtime < b.mtime:
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	old := map[string]*packFile{}
	for _, p := range o.packs {
		old[p.name] = p
	}
	packs := make([]*packFile, 0, len(found))
	for _, f := range found {
		if p, ok := old[f.name]; ok && !p.failed.Load() {
			packs = append(packs, p)
			continue
		}
		packs = append(packs, &packFile{name: f.name})
	}
	o.packs, o.listed = packs, true
	return packs
}

// open maps the index and the pack and checks that they belong together.
func (p *packFile) open() error {
	if err := p.openIndex(); err != nil {
		return err
	}
	return p.openPack()
}

// openIndex maps the index only.
func (p *packFile) openIndex() error {
	p.once.Do(func() {
		p.err = p.load()
		p.failed.Store(p.err != nil)
	})
	return p.err
}

// openPack maps the pack and checks that it belongs to the index (opened first).
func (p *packFile) openPack() error {
	p.packOnce.Do(func() {
		p.packErr = p.loadPack()
		if p.packErr != nil {
			p.failed.Store(true)
		}
	})
	return p.packErr
}

// locate returns the offset of h in the pack, mapping the pack when h is there. A pack that
// does not match its index holds nothing.
func (p *packFile) locate(h Hash) (int64, bool) {
	off, ok := p.find(h)
	if !ok || p.openPack() != nil {
		return 0, false
	}
	return off, true
}

func (p *packFile) load() error {
	idx, err := mapFile(p.name + ".idx")
	if err != nil {
		return err
	}
	bad := func(what string) error {
		idx.close()
		return fmt.Errorf("%s.idx: %w: %s", p.name, errCorruptPack, what)
	}
	d := idx.data
	if len(d) < 8+256*4+40 || !bytes.Equal(d[:4], []byte{0xff, 't', 'O', 'c'}) || binary.BigEndian.Uint32(d[4:]) != 2 {
		return bad("not a version 2 index")
	}
	fan := d[8 : 8+1024]
	prev := uint32(0)
	for i := range 256 {
		v := binary.BigEndian.Uint32(fan[i*4:])
		if v < prev {
			return bad("fan-out table not sorted")
		}
		prev = v
	}
	n := prev
	p.names = 8 + 1024
	p.crcs = p.names + int(n)*20
	p.offs = p.crcs + int(n)*4
	p.offs64 = p.offs + int(n)*4
	min := p.offs64 + 40
	if int64(n) > int64(len(d)) || len(d) < min || (len(d)-min)%8 != 0 {
		return bad("size does not match its object count")
	}
	p.idx, p.n = idx, n
	// Unmapped once no reader can reach the pack: a reader in another goroutine may be
	// inflating from it after the repository was reset. Every method that reads the
	// mappings keeps p alive until it is done with them.
	runtime.AddCleanup(p, func(m *mapping) { m.close() }, idx)
	return nil
}

// loadPack maps the pack of an open index and checks that they belong together.
func (p *packFile) loadPack() error {
	defer runtime.KeepAlive(p)
	d, n := p.idx.data, p.n
	pack, err := mapFile(p.name + ".pack")
	if err != nil {
		return err
	}
	pd := pack.data
	if len(pd) < 12+20 || string(pd[:4]) != "PACK" || binary.BigEndian.Uint32(pd[8:]) != n ||
		!bytes.Equal(pd[len(pd)-20:], d[len(d)-40:len(d)-20]) {
		pack.close()
		return fmt.Errorf("%s.pack: %w: does not match its index", p.name, errCorruptPack)
	}
	if v := binary.BigEndian.Uint32(pd[4:]); v != 2 && v != 3 {
		pack.close()
		return fmt.Errorf("%s.pack: %w: version %d", p.name, errCorruptPack, v)
	}
	p.pack = pack
	runtime.AddCleanup(p, func(m *mapping) { m.close() }, pack)
	return nil
}

// find returns the offset of h in the pack.
func (p *packFile) find(h Hash) (int64, bool) {
	defer runtime.KeepAlive(p)
	d := p.idx.data
	fan := d[8:]
	lo := uint32(0)
	if h[0] > 0 {
		lo = binary.BigEndian.Uint32(fan[(int(h[0])-1)*4:])
	}
	hi := binary.BigEndian.Uint32(fan[int(h[0])*4:])
	for lo < hi {
		mid := lo + (hi-lo)/2
		at := p.names + int(mid)*20
		switch c := bytes.Compare(d[at:at+20], h[:]); {
		case c == 0:
			return p.offset(mid)
		case c < 0:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return 0, false
}

// offset is the pack offset of the i-th name of the index.
func (p *packFile) offset(i uint32) (int64, bool) {
	d := p.idx.data
	v := binary.BigEndian.Uint32(d[p.offs+int(i)*4:])
	if v&0x80000000 == 0 {
		return int64(v), true
	}
	at := p.offs64 + int(v&0x7fffffff)*8
	if at+8 > len(d)-40 {
		return 0, false
	}
	off := binary.BigEndian.Uint64(d[at:])
	return int64(off), off < 1<<62
}

// entry is the header of a pack entry.
type entry struct {
	typ  plumbing.ObjectType
	size int64 // inflated size of the entry's data (of the delta, for a delta)
	base int64 // OFS_DELTA: offset of the base
	ref  Hash  // REF_DELTA: name of the base
	data int64 // offset of the compressed data
}

// header parses the entry at off.
func (p *packFile) header(off int64) (entry, error) {
	defer runtime.KeepAlive(p)
	d := p.pack.data
	end := int64(len(d) - 20)
	bad := func(what string) (entry, error) {
		return entry{}, fmt.Errorf("%s.pack at %d: %w: %s", p.name, off, errCorruptPack, what)
	}
	if off < 12 || off >= end {
		return bad("offset out of range")
	}
	i := off
	c := d[i]
	i++
	e := entry{typ: plumbing.ObjectType((c >> 4) & 7), size: int64(c & 15)}
	for shift := 4; c&0x80 != 0; shift += 7 {
		if i >= end || shift > 56 {
			return bad("bad size")
		}
		c = d[i]
		i++
		e.size |= int64(c&0x7f) << shift
	}
	switch e.typ {
	case plumbing.OFSDeltaObject:
		if i >= end {
			return bad("bad delta offset")
		}
		c = d[i]
		i++
		rel := int64(c & 0x7f)
		for c&0x80 != 0 {
			if i >= end || rel > 1<<55 {
				return bad("bad delta offset")
			}
			c = d[i]
			i++
			rel = (rel+1)<<7 | int64(c&0x7f)
		}
		if rel <= 0 || rel > off-12 {
			return bad("delta base out of range")
		}
		e.base = off - rel
	case plumbing.REFDeltaObject:
		if i+20 > end {
			return bad("bad delta base")
		}
		copy(e.ref[:], d[i:i+20])
		i += 20
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
	default:
		return bad("unknown entry type")
	}
	e.data = i
	return e, nil
}

// inflate decompresses size bytes of an entry's data.
func (p *packFile) inflate(e entry) ([]byte, error) {
	defer runtime.KeepAlive(p)
	d := p.pack.data[e.data : len(p.pack.data)-20]
	out, err := inflateSized(d, e.size)
	if err != nil {
		return nil, fmt.Errorf("%s.pack at %d: %w: %v", p.name, e.data, errCorruptPack, err)
	}
	return out, nil
}

// zlibReaders are reused: a new zlib reader allocates its 32 KB window.
var zlibReaders sync.Pool

// maxObjectSize bounds what the reader allocates for one object on the word of a header
// (a corrupt one could claim any size).
const maxObjectSize = 1 << 31

// inflateSized inflates a zlib stream that must hold exactly size bytes.
func inflateSized(z []byte, size int64) ([]byte, error) {
	if size < 0 || size > maxObjectSize {
		return nil, fmt.Errorf("object of %d bytes", size)
	}
	br := bytes.NewReader(z)
	var zr io.ReadCloser
	if v := zlibReaders.Get(); v != nil {
		zr = v.(io.ReadCloser)
		if err := zr.(zlib.Resetter).Reset(br, nil); err != nil {
			return nil, err
		}
	} else {
		var err error
		if zr, err = zlib.NewReader(br); err != nil {
			return nil, err
		}
	}
	defer zlibReaders.Put(zr)
	out := make([]byte, size)
	if _, err := io.ReadFull(zr, out); err != nil {
		return nil, err
	}
	return out, zlibEnd(zr)
}

// zlibEnd checks that a zlib stream ends where its data does, and its checksum, which the
// reader verifies only when it reaches the end.
func zlibEnd(zr io.Reader) error {
	var one [1]byte
	n, err := zr.Read(one[:])
	switch {
	case n != 0:
		return errors.New("more data than the header says")
	case err == io.EOF:
		return nil
	case err == nil:
		return errors.New("stream does not end")
	}
	return err
}

// maxDeltaChain bounds the chains the reader follows: git writes at most 4095 (its
// pack.depth limit), and a cycle in a corrupt pack must not loop.
const maxDeltaChain = 10000

// readPacked returns the type and content of the object at off. The caller owns what it
// returns.
func (o *objectReader) readPacked(p *packFile, off int64) (plumbing.ObjectType, []byte, error) {
	type link struct {
		p   *packFile
		off int64
		e   entry
	}
	var chain []link
	var typ plumbing.ObjectType
	var data []byte
	shared := false // data is the cache's
	for {
		if t, b, ok := o.cacheGet(p, off); ok {
			typ, data, shared = t, b, true
			break
		}
		e, err := p.header(off)
		if err != nil {
			return 0, nil, err
		}
		if len(chain) >= maxDeltaChain {
			return 0, nil, fmt.Errorf("%s.pack at %d: %w: delta chain too long", p.name, off, errCorruptPack)
		}
		if e.typ == plumbing.OFSDeltaObject {
			chain = append(chain, link{p, off, e})
			off = e.base
			continue
		}
		if e.typ == plumbing.REFDeltaObject {
			chain = append(chain, link{p, off, e})
			bp, boff, ok := o.locate(e.ref)
			if ok {
				p, off = bp, boff
				continue
			}
			// A base outside the packs (loose): read it whole.
			if typ, data, err = o.readLoose(e.ref); err != nil {
				return 0, nil, fmt.Errorf("%s.pack at %d: %w: delta base %s missing", p.name, off, errCorruptPack, e.ref)
			}
			break
		}
		if data, err = p.inflate(e); err != nil {
			return 0, nil, err
		}
		typ = e.typ
		shared = o.cachePut(p, off, typ, data)
		break
	}
	for i := len(chain) - 1; i >= 0; i-- {
		l := chain[i]
		delta, err := l.p.inflate(l.e)
		if err != nil {
			return 0, nil, err
		}
		if data, err = packfile.PatchDelta(data, delta); err != nil {
			return 0, nil, fmt.Errorf("%s.pack at %d: %w: %v", l.p.name, l.off, errCorruptPack, err)
		}
		shared = o.cachePut(l.p, l.off, typ, data)
	}
	if shared {
		data = slices.Clone(data)
	}
	return typ, data, nil
}

func (o *objectReader) cacheGet(p *packFile, off int64) (plumbing.ObjectType, []byte, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.cache.get(p, off)
}

// cachePut remembers a resolved object and reports whether it did.
func (o *objectReader) cachePut(p *packFile, off int64, typ plumbing.ObjectType, data []byte) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.cache.put(p, off, typ, data)
}

// locate finds the pack and offset of h.
func (o *objectReader) locate(h Hash) (*packFile, int64, bool) {
	for _, p := range o.packList(false) {
		if p.openIndex() != nil {
			continue
		}
		if off, ok := p.locate(h); ok {
			return p, off, true
		}
	}
	return nil, 0, false
}

// loosePath is where object h lives when it is loose.
func (o *objectReader) loosePath(h Hash) string {
	var b [40]byte
	hexHash(b[:], h)
	return filepath.Join(o.gitDir, "objects", string(b[:2]), string(b[2:]))
}

func hexHash(dst []byte, h Hash) {
	const digits = "0123456789abcdef"
	for i, c := range h {
		dst[i*2], dst[i*2+1] = digits[c>>4], digits[c&15]
	}
}

// readLoose reads a loose object whole: its file in one read, then the header, then the
// content into a buffer of the size the header declares.
func (o *objectReader) readLoose(h Hash) (plumbing.ObjectType, []byte, error) {
	raw, err := readObjectFile(o.loosePath(h))
	if err != nil {
		return 0, nil, err
	}
	zr, err := zlibReader(bytes.NewReader(raw))
	if err != nil {
		return 0, nil, fmt.Errorf("object %s: %w: %v", h, errCorruptPack, err)
	}
	defer zlibReaders.Put(zr)
	typ, size, rest, err := looseHeader(zr)
	if err != nil {
		return 0, nil, fmt.Errorf("object %s: %w", h, err)
	}
	data := make([]byte, size)
	n := copy(data, rest)
	if len(rest) > len(data) {
		return 0, nil, fmt.Errorf("object %s: %w: more data than the header says", h, errCorruptPack)
	}
	if _, err := io.ReadFull(zr, data[n:]); err != nil {
		return 0, nil, fmt.Errorf("object %s: %w", h, err)
	}
	if err := zlibEnd(zr); err != nil {
		return 0, nil, fmt.Errorf("object %s: %w", h, err)
	}
	return typ, data, nil
}

// zlibReader is a pooled zlib reader over r (return it to zlibReaders).
func zlibReader(r io.Reader) (io.ReadCloser, error) {
	if v := zlibReaders.Get(); v != nil {
		zr := v.(io.ReadCloser)
		if err := zr.(zlib.Resetter).Reset(r, nil); err != nil {
			zlibReaders.Put(zr)
			return nil, err
		}
		return zr, nil
	}
	return zlib.NewReader(r)
}

// looseHeader reads the header of a loose object ("blob 123\0") from its inflated stream;
// rest is what it read past the header.
func looseHeader(zr io.Reader) (plumbing.ObjectType, int64, []byte, error) {
	var buf [64]byte
	n, nul := 0, -1
	for nul < 0 && n < len(buf) {
		k, err := zr.Read(buf[n:])
		n += k
		nul = bytes.IndexByte(buf[:n], 0)
		if err != nil && nul < 0 {
			return 0, 0, nil, fmt.Errorf("%w: bad loose object header", errCorruptPack)
		}
	}
	if nul < 0 || nul > 40 {
		return 0, 0, nil, fmt.Errorf("%w: bad loose object header", errCorruptPack)
	}
	head := buf[:nul]
	kind, size, ok := strings.Cut(string(head), " ")
	typ, terr := plumbing.ParseObjectType(kind)
	sz, serr := strconv.ParseInt(size, 10, 64)
	if !ok || terr != nil || serr != nil || sz < 0 || sz > maxObjectSize || !typ.Valid() || typ >= plumbing.OFSDeltaObject {
		return 0, 0, nil, fmt.Errorf("%w: bad loose object header %q", errCorruptPack, head)
	}
	return typ, sz, buf[nul+1 : n], nil
}

// read returns the type and content of object h, or plumbing.ErrObjectNotFound. The
// caller owns what it gets. Small objects read lately are kept (recentCache): a push's
// secret scan and its copy read the same new blobs one after the other.
func (o *objectReader) read(h Hash) (plumbing.ObjectType, []byte, error) {
	o.mu.Lock()
	c, ok := o.recent.get(h)
	o.mu.Unlock()
	if ok {
		return c.typ, slices.Clone(c.data), nil
	}
	typ, data, err := o.readUncached(h)
	if err == nil && len(data) <= recentMax {
		o.mu.Lock()
		o.recent.put(h, cached{typ, slices.Clone(data)})
		o.mu.Unlock()
	}
	return typ, data, err
}

// readUncached looks in the packs it knows first (a lookup in a mapped index costs no
// system call, where a loose object that is not there costs a failed open; a long history
// is mostly packed), then for a loose file, then in packs written since it listed them.
func (o *objectReader) readUncached(h Hash) (plumbing.ObjectType, []byte, error) {
	for relist := range 2 {
		for _, p := range o.packList(relist == 1) {
			if p.openIndex() != nil {
				continue
			}
			if off, ok := p.locate(h); ok {
				return o.readPacked(p, off)
			}
		}
		// Loose, or packed meanwhile: then its loose file is gone and a new pack holds it.
		if typ, data, err := o.readLoose(h); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return typ, data, err
		}
	}
	return 0, nil, plumbing.ErrObjectNotFound
}

// info returns the type and size of object h without reading its content (a packed
// delta's base chain is followed to its end for the type; the size is the delta's target
// size, read from the delta's first bytes).
func (o *objectReader) info(h Hash) (plumbing.ObjectType, int64, error) {
	o.mu.Lock()
	c, ok := o.recent.get(h)
	o.mu.Unlock()
	if ok {
		return c.typ, int64(len(c.data)), nil
	}
	// The packs it knows first, as readUncached: a clone asks the transport, which holds
	// everything in a pack, about thousands of objects, and a failed open each cost more.
	for relist := range 2 {
		for _, p := range o.packList(relist == 1) {
			if p.openIndex() != nil {
				continue
			}
			if off, ok := p.locate(h); ok {
				return o.packedInfo(p, off)
			}
		}
		if relist == 1 {
			break
		}
		if raw, err := readObjectFile(o.loosePath(h)); err == nil {
			zr, err := zlibReader(bytes.NewReader(raw))
			if err != nil {
				return 0, 0, fmt.Errorf("object %s: %w: %v", h, errCorruptPack, err)
			}
			defer zlibReaders.Put(zr)
			typ, size, _, err := looseHeader(zr)
			if err != nil {
				return 0, 0, fmt.Errorf("object %s: %w", h, err)
			}
			return typ, size, nil
		}
	}
	return 0, 0, plumbing.ErrObjectNotFound
}

func (o *objectReader) packedInfo(p *packFile, off int64) (plumbing.ObjectType, int64, error) {
	e, err := p.header(off)
	if err != nil {
		return 0, 0, err
	}
	if e.typ != plumbing.OFSDeltaObject && e.typ != plumbing.REFDeltaObject {
		return e.typ, e.size, nil
	}
	// The target size is the second varint of the delta's data.
	size, err := deltaTargetSize(p, e)
	if err != nil {
		return 0, 0, err
	}
	for range maxDeltaChain {
		switch e.typ {
		case plumbing.OFSDeltaObject:
			off = e.base
		case plumbing.REFDeltaObject:
			bp, boff, ok := o.locate(e.ref)
			if !ok {
				t, _, err := o.info(e.ref)
				return t, size, err
			}
			p, off = bp, boff
		default:
			return e.typ, size, nil
		}
		if e, err = p.header(off); err != nil {
			return 0, 0, err
		}
	}
	return 0, 0, fmt.Errorf("%s.pack: %w: delta chain too long", p.name, errCorruptPack)
}

// deltaTargetSize reads the size of the object a delta makes, from the delta's header.
func deltaTargetSize(p *packFile, e entry) (int64, error) {
	defer runtime.KeepAlive(p)
	zr, err := zlib.NewReader(bytes.NewReader(p.pack.data[e.data : len(p.pack.data)-20]))
	if err != nil {
		return 0, fmt.Errorf("%s.pack: %w: %v", p.name, errCorruptPack, err)
	}
	defer zr.Close()
	br := bufio.NewReaderSize(zr, 32)
	if _, err := binary.ReadUvarint(br); err != nil {
		return 0, fmt.Errorf("%s.pack: %w: %v", p.name, errCorruptPack, err)
	}
	n, err := binary.ReadUvarint(br)
	if err != nil || n > maxObjectSize {
		return 0, fmt.Errorf("%s.pack: %w: bad delta header", p.name, errCorruptPack)
	}
	return int64(n), nil
}

func (o *objectReader) looseExists(h Hash) bool {
	_, err := os.Lstat(o.loosePath(h))
	return err == nil
}

// has reports whether the repository holds h, looking in the packs it knows first (no
// system call), then for the loose file, then in the packs written meanwhile.
func (o *objectReader) has(h Hash) bool {
	for relist := range 2 {
		for _, p := range o.packList(relist == 1) {
			if p.openIndex() != nil {
				continue
			}
			if _, ok := p.locate(h); ok {
				return true
			}
		}
		if relist == 0 && o.looseExists(h) {
			return true
		}
	}
	return false
}

// baseCache keeps recently resolved packed objects (the bases of deltas, mostly) so that
// walking a history whose commits and trees are deltas of one another inflates each link
// once: without it, reading the n-th object of a chain costs n inflations.
type baseCache struct {
	m     map[cacheKey]cached
	order []cacheKey
	bytes int
}

type cacheKey struct {
	p   *packFile
	off int64
}

type cached struct {
	typ  plumbing.ObjectType
	data []byte
}

// baseCacheBytes bounds the cache: enough for the chains of a session's history.
const baseCacheBytes = 8 << 20

func (c *baseCache) get(p *packFile, off int64) (plumbing.ObjectType, []byte, bool) {
	v, ok := c.m[cacheKey{p, off}]
	return v.typ, v.data, ok
}

// put remembers data, unless it is too big, and reports whether it did; nobody modifies
// what the cache holds.
func (c *baseCache) put(p *packFile, off int64, typ plumbing.ObjectType, data []byte) bool {
	if len(data) > baseCacheBytes/4 {
		return false
	}
	k := cacheKey{p, off}
	if c.m == nil {
		c.m = map[cacheKey]cached{}
	}
	if _, ok := c.m[k]; ok {
		return false
	}
	for c.bytes+len(data) > baseCacheBytes && len(c.order) > 0 {
		old := c.order[0]
		c.order = c.order[1:]
		c.bytes -= len(c.m[old].data)
		delete(c.m, old)
	}
	c.m[k] = cached{typ, data}
	c.order = append(c.order, k)
	c.bytes += len(data)
	return true
}

// readStorage is go-git's filesystem storage with its object reads served by an
// objectReader: go-git still writes every object (SetEncodedObject) and decodes what it
// reads (object.GetCommit, object.DecodeObject), but never loads a pack index to find one.
type readStorage struct {
	*filesystem.Storage
	objs *objectReader
}

func (s *readStorage) EncodedObject(t plumbing.ObjectType, h Hash) (plumbing.EncodedObject, error) {
	typ, data, err := s.objs.read(h)
	if err != nil {
		return nil, err
	}
	if t != plumbing.AnyObject && typ != t {
		return nil, plumbing.ErrObjectNotFound
	}
	return &readObject{h: h, t: typ, data: data}, nil
}

// DeltaObject is EncodedObject: deltas are resolved when read.
func (s *readStorage) DeltaObject(t plumbing.ObjectType, h Hash) (plumbing.EncodedObject, error) {
	return s.EncodedObject(t, h)
}

func (s *readStorage) HasEncodedObject(h Hash) error {
	if !s.objs.has(h) {
		return plumbing.ErrObjectNotFound
	}
	return nil
}

func (s *readStorage) EncodedObjectSize(h Hash) (int64, error) {
	_, n, err := s.objs.info(h)
	return n, err
}

var errReadOnly = errors.New("read-only object")

// readObject is an object as the reader found it: its name is known, so go-git never
// hashes it again.
type readObject struct {
	h    Hash
	t    plumbing.ObjectType
	data []byte
}

func (o *readObject) Hash() Hash                    { return o.h }
func (o *readObject) Type() plumbing.ObjectType     { return o.t }
func (o *readObject) SetType(t plumbing.ObjectType) { o.t = t }
func (o *readObject) Size() int64                   { return int64(len(o.data)) }
func (o *readObject) SetSize(int64)                 {}
func (o *readObject) Reader() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(o.data)), nil
}
func (o *readObject) Writer() (io.WriteCloser, error) { return nil, errReadOnly }

// withPrefix lists the objects whose names start with prefix (lower-case hex, at least
// two digits): loose ones from their fan-out directory, packed ones from each index's
// sorted names.
func (o *objectReader) withPrefix(prefix string) []Hash {
	if len(prefix) < 2 || len(prefix) > 40 {
		return nil
	}
	var out []Hash
	es, _ := os.ReadDir(filepath.Join(o.gitDir, "objects", prefix[:2]))
	for _, e := range es {
		if name := prefix[:2] + e.Name(); len(name) == 40 && strings.HasPrefix(name, prefix) && plumbing.IsHash(name) {
			out = append(out, plumbing.NewHash(name))
		}
	}
	low := prefix + strings.Repeat("0", 40-len(prefix))
	start := plumbing.NewHash(low)
	for _, p := range o.packList(true) {
		if p.open() != nil {
			continue
		}
		out = append(out, p.withPrefix(start, prefix)...)
	}
	return out
}

func (p *packFile) withPrefix(start Hash, prefix string) []Hash {
	defer runtime.KeepAlive(p)
	d := p.idx.data
	lo, hi := uint32(0), p.n
	for lo < hi {
		mid := lo + (hi-lo)/2
		at := p.names + int(mid)*20
		if bytes.Compare(d[at:at+20], start[:]) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	var out []Hash
	for i := lo; i < p.n; i++ {
		var h Hash
		copy(h[:], d[p.names+int(i)*20:])
		if !strings.HasPrefix(h.String(), prefix) {
			break
		}
		out = append(out, h)
	}
	return out
}

// recentCache keeps the content of objects read lately, by name, up to recentBytes.
type recentCache struct {
	m     map[Hash]cached
	order []Hash
	bytes int
}

const (
	recentBytes = 4 << 20
	recentMax   = 64 << 10 // bigger objects are not kept
)

func (c *recentCache) get(h Hash) (cached, bool) {
	v, ok := c.m[h]
	return v, ok
}

func (c *recentCache) put(h Hash, v cached) {
	if c.m == nil {
		c.m = map[Hash]cached{}
	}
	if _, ok := c.m[h]; ok {
		return
	}
	for c.bytes+len(v.data) > recentBytes && len(c.order) > 0 {
		old := c.order[0]
		c.order = c.order[1:]
		c.bytes -= len(c.m[old].data)
		delete(c.m, old)
	}
	c.m[h] = v
	c.order = append(c.order, h)
	c.bytes += len(v.data)
}

// looseSet lists every loose object once: what a Copier checks thousands of objects
// against, where one lstat each would cost more than the copy.
func (o *objectReader) looseSet() map[Hash]bool {
	hs, _ := listLoose(o.gitDir)
	out := make(map[Hash]bool, len(hs))
	for _, h := range hs {
		out[h] = true
	}
	return out
}

// hasPacked reports whether a pack holds h, without relisting the packs.
func (o *objectReader) hasPacked(h Hash) bool {
	for _, p := range o.packList(false) {
		if p.openIndex() != nil {
			continue
		}
		if _, ok := p.locate(h); ok {
			return true
		}
	}
	return false
}
