package search

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
)

// The history index of one repository is one flat file, a cache of what git already holds:
// every line each commit introduced, with where and when. It is laid out for queries: the
// folded text of every line comes first, so that a query reads only the header and that
// text and scans it with one search over one buffer; the rest of the file (which commit,
// file, section and line, and the text as written) is read only when a line matches, and
// decoded only for the lines that match.
//
//	header   64 bytes, little endian:
//	         magic "ckptsrch", version u32, level u32 (heading levels the files were split
//	         at, see layout.key), head [20]byte (the commit the index covers), commits u32,
//	         strings-bytes u32, records u32, folded-bytes u32, lines-bytes u32,
//	         CRC-32C of the folded text u32, CRC-32C of the rest u32
//	folded   every line case-folded, each ending in '\n': the text queries scan
//	commits  36 bytes each: hash [20]byte, unix seconds i64, zone offset seconds i32,
//	         generation u32 (1 + the largest generation of its parents: orders commits
//	         that share a time)
//	strings  file names and section ids: uvarint length, bytes; records name them by
//	         their position in this list
//	records  24 bytes each, in the order of the folded lines: commit u32, file u32,
//	         section u32, line number u32, offset of the folded line u32, offset of the line u32
//	lines    the same lines as written, each ending in '\n': what hits show
const (
	indexMagic   = "ckptsrch"
	indexVersion = 1
	headerSize   = 64
	commitSize   = 36
	recordSize   = 24
)

// castagnoli is made when first used: every ckpt process would otherwise build it at start.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// errCorrupt means an index file cannot be trusted; it is rebuilt.
var errCorrupt = errors.New("corrupt index")

// header is an index file's header.
type header struct {
	level      int
	head       repo.Hash
	nCommits   int
	stringsLen int
	nRecords   int
	foldedLen  int
	linesLen   int
	crcFolded  uint32
	crcRest    uint32
}

// restLen is the size of everything after the folded text.
func (h header) restLen() int {
	return h.nCommits*commitSize + h.stringsLen + h.nRecords*recordSize + h.linesLen
}

// parseHeader reads a header and checks it against the file's size. Anything unexpected
// is errCorrupt: a torn write, another version's format, a file that is not ours.
func parseHeader(b []byte, size int64) (header, error) {
	if len(b) < headerSize || string(b[:8]) != indexMagic {
		return header{}, errCorrupt
	}
	le := binary.LittleEndian
	if le.Uint32(b[8:]) != indexVersion {
		return header{}, errCorrupt
	}
	h := header{
		level:      int(le.Uint32(b[12:])),
		head:       repo.Hash(b[16:36]),
		nCommits:   int(le.Uint32(b[36:])),
		stringsLen: int(le.Uint32(b[40:])),
		nRecords:   int(le.Uint32(b[44:])),
		foldedLen:  int(le.Uint32(b[48:])),
		linesLen:   int(le.Uint32(b[52:])),
		crcFolded:  le.Uint32(b[56:]),
		crcRest:    le.Uint32(b[60:]),
	}
	want := uint64(headerSize) + uint64(h.foldedLen) + uint64(h.nCommits)*commitSize +
		uint64(h.stringsLen) + uint64(h.nRecords)*recordSize + uint64(h.linesLen)
	if want != uint64(size) {
		return header{}, errCorrupt
	}
	return h, nil
}

// index is an index file. Its folded text is loaded when it is opened; the rest when
// first needed (loadRest). Its slices point into the caller's buffers.
type index struct {
	header
	folded []byte

	loaded  bool
	commits []byte
	strs    []string
	records []byte
	lines   []byte

	f    *os.File // where the rest is read from; nil once loaded or when built in memory
	rest *[]byte  // the buffer it is read into
}

// openIndex opens an index file and reads its header and folded text into buf; rest is the
// buffer loadRest will use. A missing file is (nil, nil); a damaged one is errCorrupt. The
// caller closes the index.
func openIndex(path string, buf, rest *[]byte) (*index, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ix, err := readFolded(f, buf)
	if err != nil {
		f.Close()
		return nil, err
	}
	ix.f, ix.rest = f, rest
	return ix, nil
}

func readFolded(f *os.File, buf *[]byte) (*index, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var hb [headerSize]byte
	if _, err := f.ReadAt(hb[:], 0); err != nil {
		return nil, errCorrupt
	}
	h, err := parseHeader(hb[:], fi.Size())
	if err != nil {
		return nil, err
	}
	*buf = slices.Grow((*buf)[:0], h.foldedLen)[:h.foldedLen]
	if _, err := f.ReadAt(*buf, headerSize); err != nil {
		return nil, errCorrupt
	}
	ix := &index{header: h, folded: *buf}
	if crc32.Checksum(ix.folded, castagnoli()) != h.crcFolded ||
		h.foldedLen > 0 && ix.folded[h.foldedLen-1] != '\n' {
		return nil, errCorrupt
	}
	return ix, nil
}

// close releases the file the index was read from.
func (ix *index) close() {
	if ix != nil && ix.f != nil {
		ix.f.Close()
		ix.f = nil
	}
}

// loadRest reads and checks everything after the folded text.
func (ix *index) loadRest() error {
	if ix.loaded {
		return nil
	}
	if ix.f == nil {
		return errCorrupt
	}
	n := ix.restLen()
	*ix.rest = slices.Grow((*ix.rest)[:0], n)[:n]
	if _, err := ix.f.ReadAt(*ix.rest, int64(headerSize+ix.foldedLen)); err != nil {
		return errCorrupt
	}
	return ix.splitRest(*ix.rest)
}

func (ix *index) splitRest(b []byte) error {
	if crc32.Checksum(b, castagnoli()) != ix.crcRest {
		return errCorrupt
	}
	cut := func(n int) []byte { s := b[:n]; b = b[n:]; return s }
	ix.commits = cut(ix.nCommits * commitSize)
	strs := cut(ix.stringsLen)
	ix.records = cut(ix.nRecords * recordSize)
	ix.lines = cut(ix.linesLen)
	ix.strs = ix.strs[:0]
	for len(strs) > 0 {
		n, k := binary.Uvarint(strs)
		if k <= 0 || n > uint64(len(strs)-k) {
			return errCorrupt
		}
		ix.strs = append(ix.strs, string(strs[k:k+int(n)]))
		strs = strs[k+int(n):]
	}
	if ix.linesLen > 0 && ix.lines[ix.linesLen-1] != '\n' {
		return errCorrupt
	}
	ix.loaded = true
	return nil
}

// parseIndex checks and splits a whole index file held in memory.
func parseIndex(b []byte) (*index, error) {
	h, err := parseHeader(b, int64(len(b)))
	if err != nil {
		return nil, err
	}
	ix := &index{header: h, folded: b[headerSize : headerSize+h.foldedLen]}
	if crc32.Checksum(ix.folded, castagnoli()) != h.crcFolded ||
		h.foldedLen > 0 && ix.folded[h.foldedLen-1] != '\n' {
		return nil, errCorrupt
	}
	if err := ix.splitRest(b[headerSize+h.foldedLen:]); err != nil {
		return nil, err
	}
	return ix, nil
}

// commitInfo is one commit of the index.
type commitInfo struct {
	hash repo.Hash
	when time.Time
	gen  uint32
}

func (ix *index) commit(i int) commitInfo {
	c := ix.commits[i*commitSize:]
	le := binary.LittleEndian
	return commitInfo{
		hash: repo.Hash(c[:20]),
		when: time.Unix(int64(le.Uint64(c[20:])), 0).In(zone(int(int32(le.Uint32(c[28:]))))),
		gen:  le.Uint32(c[32:]),
	}
}

// zone returns a fixed zone for an offset, reusing UTC for 0 so times print as git's do.
func zone(offset int) *time.Location {
	if offset == 0 {
		return time.UTC
	}
	return time.FixedZone("", offset)
}

// record is one indexed line.
type record struct {
	commit, file, section, line int
	foldedOff, lineOff          int
}

func (ix *index) record(i int) record {
	r := ix.records[i*recordSize:]
	le := binary.LittleEndian
	return record{
		commit: int(le.Uint32(r)), file: int(le.Uint32(r[4:])), section: int(le.Uint32(r[8:])),
		line: int(le.Uint32(r[12:])), foldedOff: int(le.Uint32(r[16:])), lineOff: int(le.Uint32(r[20:])),
	}
}

// recordAt finds the record whose folded line starts at off, by binary search: records
// are in the order of their lines.
func (ix *index) recordAt(off int) (record, bool) {
	lo, hi := 0, ix.nRecords
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if int(binary.LittleEndian.Uint32(ix.records[m*recordSize+16:])) < off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == ix.nRecords {
		return record{}, false
	}
	r := ix.record(lo)
	ok := r.foldedOff == off && r.commit < ix.nCommits && r.file < len(ix.strs) &&
		r.section < len(ix.strs) && r.lineOff < len(ix.lines)
	return r, ok
}

// lineText returns the line as written that starts at off.
func (ix *index) lineText(off int) string {
	end := bytes.IndexByte(ix.lines[off:], '\n')
	return string(ix.lines[off : off+end])
}

// builder accumulates an index: the records of an older index file, then new ones.
type builder struct {
	level   int
	commits []byte
	known   map[repo.Hash]commitRef
	strs    []string
	strIdx  map[string]uint32
	records []byte
	folded  []byte
	lines   []byte
}

// commitRef is what the builder knows of an indexed commit.
type commitRef struct {
	idx uint32
	gen uint32
}

func newBuilder(level int) *builder {
	return &builder{level: level, known: map[repo.Hash]commitRef{}, strIdx: map[string]uint32{}}
}

// builderFrom starts a builder with everything an existing index holds.
func builderFrom(ix *index) *builder {
	b := newBuilder(ix.level)
	b.commits = append([]byte(nil), ix.commits...)
	for i := range ix.nCommits {
		c := ix.commit(i)
		b.known[c.hash] = commitRef{uint32(i), c.gen}
	}
	for _, s := range ix.strs {
		b.str(s)
	}
	b.records = append([]byte(nil), ix.records...)
	b.folded = append([]byte(nil), ix.folded...)
	b.lines = append([]byte(nil), ix.lines...)
	return b
}

func (b *builder) str(s string) uint32 {
	if i, ok := b.strIdx[s]; ok {
		return i
	}
	i := uint32(len(b.strs))
	b.strs = append(b.strs, s)
	b.strIdx[s] = i
	return i
}

func (b *builder) addCommit(h repo.Hash, when time.Time, gen uint32) uint32 {
	idx := uint32(len(b.commits) / commitSize)
	var c [commitSize]byte
	copy(c[:20], h[:])
	le := binary.LittleEndian
	_, off := when.Zone()
	le.PutUint64(c[20:], uint64(when.Unix()))
	le.PutUint32(c[28:], uint32(int32(off)))
	le.PutUint32(c[32:], gen)
	b.commits = append(b.commits, c[:]...)
	b.known[h] = commitRef{idx, gen}
	return idx
}

func (b *builder) addLine(commit uint32, file string, section sections.ID, line int, text []byte) {
	var r [recordSize]byte
	le := binary.LittleEndian
	le.PutUint32(r[0:], commit)
	le.PutUint32(r[4:], b.str(file))
	le.PutUint32(r[8:], b.str(string(section)))
	le.PutUint32(r[12:], uint32(line))
	le.PutUint32(r[16:], uint32(len(b.folded)))
	le.PutUint32(r[20:], uint32(len(b.lines)))
	b.records = append(b.records, r[:]...)
	b.folded = append(appendFold(b.folded, text), '\n')
	b.lines = append(append(b.lines, text...), '\n')
}

// bytes renders the index file for head.
func (b *builder) bytes(head repo.Hash) ([]byte, error) {
	var strs []byte
	for _, s := range b.strs {
		strs = binary.AppendUvarint(strs, uint64(len(s)))
		strs = append(strs, s...)
	}
	size := headerSize + len(b.commits) + len(strs) + len(b.records) + len(b.folded) + len(b.lines)
	if uint64(size) > 1<<32-1 {
		return nil, fmt.Errorf("index of %d bytes: too large", size)
	}
	out := make([]byte, headerSize, size)
	le := binary.LittleEndian
	copy(out, indexMagic)
	le.PutUint32(out[8:], indexVersion)
	le.PutUint32(out[12:], uint32(b.level))
	copy(out[16:36], head[:])
	le.PutUint32(out[36:], uint32(len(b.commits)/commitSize))
	le.PutUint32(out[40:], uint32(len(strs)))
	le.PutUint32(out[44:], uint32(len(b.records)/recordSize))
	le.PutUint32(out[48:], uint32(len(b.folded)))
	le.PutUint32(out[52:], uint32(len(b.lines)))
	out = append(out, b.folded...)
	rest := len(out)
	out = append(out, b.commits...)
	out = append(out, strs...)
	out = append(out, b.records...)
	out = append(out, b.lines...)
	le.PutUint32(out[56:], crc32.Checksum(out[headerSize:rest], castagnoli()))
	le.PutUint32(out[60:], crc32.Checksum(out[rest:], castagnoli()))
	return out, nil
}
