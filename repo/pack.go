package repo

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// geometricFactor is the progression packs are kept in (git repack --geometric=2): sorted
// by object count, each pack holds at least twice as many objects as all smaller ones
// together. A new pack that breaks it is merged with the smaller packs until it holds
// again, so every object is copied O(log n) times over a history of n objects, and no
// merge reads more than twice what it writes.
const geometricFactor = 2

// MaybePack packs the loose objects when there are too many (see maybePack). A failure to
// pack never fails the commit that triggered it; the next commit tries again.
func (r *Repo) MaybePack() {
	if h, err := r.Head(); err == nil {
		_ = r.maybePack(h)
	}
}

// maybePack packs the loose objects when there are more than PackThreshold of them. Like
// `git gc --auto`, it estimates the count from a few fan-out directories instead of listing
// them all, so the check costs four directory reads per commit. head is HEAD.
func (r *Repo) maybePack(head Hash) error {
	t := r.store.Opts.PackThreshold
	if t <= 0 {
		return nil
	}
	// Looking costs four directory reads; once every 16 commits is often enough for a
	// threshold of hundreds of objects.
	if head[0]%16 != 0 && t >= 64 {
		return nil
	}
	n := 0
	for _, d := range []string{"00", "01", "02", "03"} {
		es, _ := os.ReadDir(filepath.Join(r.GitDir, "objects", d))
		n += len(es)
	}
	if n*64 <= t {
		return nil
	}
	return r.Pack()
}

// Pack moves every loose object into a new pack, then merges the smallest packs as the
// geometric progression requires (geometricFactor). The loose objects are stored as git's
// pack-objects stores a history: an object is a delta against the same file's (tree's,
// commit's) next version, the newest version whole, so HEAD reads without deltas. Merges
// copy entries as they are stored. Pack and index are durable (installPack) before any
// loose object or old pack is removed; nothing unreachable is dropped. The caller holds
// the exclusive lock.
func (r *Repo) Pack() error {
	loose, err := r.looseObjects()
	if err != nil {
		return err
	}
	if len(loose) > 0 {
		if _, err := r.packLoose(loose); err != nil {
			return err
		}
		for _, p := range loose {
			_ = os.Remove(r.loosePath(p))
		}
		r.Reset()
	}
	return r.mergeGeometric()
}

// loosePacked is a loose object read for packing, and the object it is to be a delta of.
type loosePacked struct {
	typ  plumbing.ObjectType
	data []byte
	base Hash
}

// maxPackDepth bounds the delta chains of the packs ckpt writes: git's pack.depth.
const maxPackDepth = 50

// packLoose writes the loose objects objs into one new pack. Each loose commit's objects
// are paired with those of its first parent when that is loose too: the parent's commit,
// tree and each file that changed become deltas against the child's, chains capped at
// maxPackDepth. Everything else is stored whole.
func (r *Repo) packLoose(objs []Hash) (string, error) {
	rd := r.reader().objs
	all := make(map[Hash]*loosePacked, len(objs))
	for _, h := range objs {
		typ, data, err := rd.readLoose(h)
		if err != nil {
			return "", fmt.Errorf("pack %s: %w", r.GitDir, err)
		}
		all[h] = &loosePacked{typ: typ, data: data}
	}
	pair := func(older, newer Hash) {
		o, n := all[older], all[newer]
		if o != nil && n != nil && older != newer && o.base == ZeroHash && o.typ == n.typ {
			o.base = newer
		}
	}
	for _, h := range objs {
		c := all[h]
		if c.typ != plumbing.CommitObject {
			continue
		}
		pc, terr := parseCommit(h, c.data)
		if terr != nil || len(pc.parents) == 0 || all[pc.parents[0]] == nil || all[pc.parents[0]].typ != plumbing.CommitObject {
			continue
		}
		pp, terr := parseCommit(pc.parents[0], all[pc.parents[0]].data)
		if terr != nil {
			continue
		}
		pair(pp.hash, h)
		pair(pp.tree, pc.tree)
		ot, nt := all[pp.tree], all[pc.tree]
		if ot == nil || nt == nil || ot.typ != plumbing.TreeObject || nt.typ != plumbing.TreeObject {
			continue
		}
		oe, err1 := parseTree(ot.data)
		ne, err2 := parseTree(nt.data)
		if err1 != nil || err2 != nil {
			continue
		}
		newer := make(map[string]Hash, len(ne))
		for _, e := range ne {
			newer[e.name] = e.hash
		}
		for _, e := range oe {
			if n, ok := newer[e.name]; ok {
				pair(e.hash, n)
			}
		}
	}
	// Cap the chains (and break a cycle: a file that went back to an older version).
	depth := map[Hash]int{}
	var chain func(h Hash, seen map[Hash]bool) int
	chain = func(h Hash, seen map[Hash]bool) int {
		if d, ok := depth[h]; ok {
			return d
		}
		o := all[h]
		if o.base == ZeroHash {
			depth[h] = 0
			return 0
		}
		if seen[h] {
			o.base = ZeroHash
			return 0
		}
		seen[h] = true
		d := chain(o.base, seen) + 1
		if d > maxPackDepth {
			o.base, d = ZeroHash, 0
		}
		depth[h] = d
		return d
	}
	for _, h := range objs {
		chain(h, map[Hash]bool{})
	}
	pw, err := r.newPackWriter(len(objs))
	if err != nil {
		return "", err
	}
	var emit func(h Hash) error
	emit = func(h Hash) error {
		o := all[h]
		if pw.has(h) {
			return nil
		}
		if o.base != ZeroHash {
			if err := emit(o.base); err != nil {
				return err
			}
			if d := diffDelta(all[o.base].data, o.data); len(d) < len(o.data)/2 {
				return pw.writeDelta(h, o.base, d)
			}
		}
		return pw.writeWhole(h, o.typ, o.data)
	}
	// Sorted, so that the same objects make the same pack.
	sorted := slices.Clone(objs)
	slices.SortFunc(sorted, func(a, b Hash) int { return bytes.Compare(a[:], b[:]) })
	for _, h := range sorted {
		if err := emit(h); err != nil {
			pw.abort()
			return "", err
		}
	}
	return pw.finish()
}

// mergeGeometric merges the smallest packs into one when they break the geometric
// progression (geometricFactor), copying their entries as they are stored (deltas and
// compressed bytes kept), then removes them. Packs a .keep file protects are left out.
func (r *Repo) mergeGeometric() error {
	names, err := r.packs()
	if err != nil || len(names) < 2 {
		return err
	}
	rd := r.reader().objs
	type sized struct {
		p     *packFile
		name  string
		count uint32
	}
	var packs []sized
	for _, p := range rd.packList(true) {
		name := filepath.Base(p.name)
		if r.packKept(name) || p.open() != nil {
			continue
		}
		packs = append(packs, sized{p, name, p.n})
	}
	slices.SortStableFunc(packs, func(a, b sized) int { return cmp.Compare(a.count, b.count) })
	// git's split_pack_geometry: the largest packs that already form the progression stay;
	// the rest roll up into one, which then may swallow the next pack too.
	split := 0
	for i := len(packs) - 1; i > 0; i-- {
		if uint64(packs[i].count) < geometricFactor*uint64(packs[i-1].count) {
			split = i + 1
			break
		}
	}
	total := uint64(0)
	for _, p := range packs[:split] {
		total += uint64(p.count)
	}
	for split < len(packs) && uint64(packs[split].count) < geometricFactor*total {
		total += uint64(packs[split].count)
		split++
	}
	if split < 2 {
		return nil
	}
	merge := make([]*packFile, split)
	for i, p := range packs[:split] {
		merge[i] = p.p
	}
	merged, err := r.copyPacks(merge)
	if err != nil {
		return err
	}
	for _, p := range packs[:split] {
		if p.name == merged {
			continue
		}
		if err := r.removePack(p.name); err != nil {
			return err
		}
	}
	r.Reset()
	return nil
}

// packedObject is an entry of a pack as copyPacks and the Copier see it.
type packedObject struct {
	p   *packFile
	off int64
}

// copyPacks writes every object of packs into one new pack, each entry copied as it is
// stored, and returns its name. An object in two of them is written once.
func (r *Repo) copyPacks(packs []*packFile) (string, error) {
	where := map[Hash]packedObject{}
	var order []Hash
	for _, p := range packs {
		names, err := p.byOffset()
		if err != nil {
			return "", err
		}
		for _, h := range names {
			if _, ok := where[h]; ok {
				continue
			}
			off, _ := p.find(h)
			where[h] = packedObject{p, off}
			order = append(order, h)
		}
	}
	pw, err := r.newPackWriter(len(order))
	if err != nil {
		return "", err
	}
	for _, h := range order {
		if err := pw.copyWithBase(h, where); err != nil {
			pw.abort()
			return "", err
		}
	}
	return pw.finish()
}

// copyWithBase copies the entry of h (where says where it is), its delta base first.
func (pw *packWriter) copyWithBase(h Hash, where map[Hash]packedObject) error {
	var stack []Hash
	for cur := h; ; {
		if pw.has(cur) {
			break
		}
		stack = append(stack, cur)
		if len(stack) > maxDeltaChain {
			return fmt.Errorf("pack %s: %w: delta chain too long", pw.r.GitDir, errCorruptPack)
		}
		po := where[cur]
		e, err := po.p.header(po.off)
		if err != nil {
			return err
		}
		base, ok := po.p.baseOf(e)
		if !ok {
			break
		}
		if _, known := where[base]; !known {
			return fmt.Errorf("pack %s: %w: delta base %s of %s not in the pack", pw.r.GitDir, errCorruptPack, short(base), short(cur))
		}
		cur = base
	}
	for i := len(stack) - 1; i >= 0; i-- {
		po := where[stack[i]]
		e, err := po.p.header(po.off)
		if err != nil {
			return err
		}
		base, _ := po.p.baseOf(e)
		if err := pw.copyEntry(stack[i], po.p, po.off, base); err != nil {
			return err
		}
	}
	return nil
}

func (r *Repo) loosePath(h Hash) string {
	s := h.String()
	return filepath.Join(r.GitDir, "objects", s[:2], s[2:])
}

func (r *Repo) looseObjects() ([]Hash, error) { return listLoose(r.GitDir) }

// listLoose lists the loose objects of a repository, one directory read per fan-out
// directory there is (the tmp_obj_ files of a crashed writer are not objects). objects/
// is read first: a repository just made, as a clone makes a thousand, has none of the
// 256, and trying each would cost 256 failed opens.
func listLoose(gitDir string) ([]Hash, error) {
	var out []Hash
	dirs, err := os.ReadDir(filepath.Join(gitDir, "objects"))
	if err != nil {
		return nil, nil
	}
	for _, de := range dirs {
		d := de.Name()
		if len(d) != 2 {
			continue
		}
		if _, err := hex.DecodeString(d); err != nil || strings.ToLower(d) != d {
			continue
		}
		es, err := os.ReadDir(filepath.Join(gitDir, "objects", d))
		if err != nil {
			continue
		}
		for _, e := range es {
			if len(e.Name()) != 38 {
				continue
			}
			if _, err := hex.DecodeString(e.Name()); err == nil {
				out = append(out, plumbing.NewHash(d+e.Name()))
			}
		}
	}
	return out, nil
}

func (r *Repo) packs() ([]string, error) {
	es, err := os.ReadDir(filepath.Join(r.GitDir, "objects", "pack"))
	if err != nil {
		return nil, nil
	}
	var out []string
	for _, e := range es {
		if n, ok := strings.CutSuffix(e.Name(), ".pack"); ok {
			if _, err := os.Stat(filepath.Join(r.GitDir, "objects", "pack", n+".idx")); err == nil {
				out = append(out, n)
			}
		}
	}
	return out, nil
}

// packWindow is how many objects go-git's delta selection compares each object with, as
// git's pack.window. Its chains stop at a depth of 50, as git's pack.depth.
const packWindow = 10

// afterPackRename, set only by tests, runs between the two renames of writePack: the moment
// a new .pack is in place and its .idx is not.
var afterPackRename func(pack string)

// writePack encodes objs, read from src, into one new pack of r with go-git's packfile
// encoder and its delta selection, indexes it with go-git's idxfile writer, and puts both in
// place in git's order: the pack is written to a temporary file and fsynced, the index to
// another, fsynced; then the pack is renamed into place, then the index, each rename followed
// by an fsync of the directory. Between the two renames go-git's readers do
// not see the pack (gitFS hides a .pack without its .idx) and git, which lists packs by
// their .idx, does not either. A kill at any moment therefore leaves no pack, a complete
// pack without index (indexed by the next gc or doctor, see indexOrphanPacks), or both.
// The index is always written anew, so a torn one left by another writer is replaced. It
// returns the pack's name, "" when objs is empty.
func (r *Repo) writePack(src storer.EncodedObjectStorer, objs []Hash) (string, error) {
	if len(objs) == 0 {
		return "", nil
	}
	fsys := newGitFS(r.GitDir, r.store.Opts.Fsync)
	dir := filepath.Join("objects", "pack")
	fail := func(err error) (string, error) { return "", fmt.Errorf("pack %s: %w", r.GitDir, err) }
	pack, err := fsys.TempFile(dir, "tmp_pack_")
	if err != nil {
		return fail(err)
	}
	defer fsys.Remove(pack.Name()) // after the rename, a no-op
	bw := bufio.NewWriterSize(pack, 1<<16)
	sum, err := packfile.NewEncoder(bw, src, false).Encode(objs, packWindow)
	if err == nil {
		err = bw.Flush()
	}
	var idx []byte
	if err == nil {
		idx, err = indexPack(pack)
	}
	if cerr := pack.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(err)
	}
	return r.installPack(fsys, pack.Name(), idx, plumbing.Hash(sum))
}

// installPack puts a pack written to the temporary file packTmp (fsynced when it was
// closed) and its index idx in place, in git's order: the index is written to a temporary
// file and fsynced; then the pack is renamed into place, then the index, each rename
// followed by an fsync of the directory. It returns the pack's name.
func (r *Repo) installPack(fsys *gitFS, packTmp string, idx []byte, sum Hash) (string, error) {
	dir := filepath.Join("objects", "pack")
	fail := func(err error) (string, error) { return "", fmt.Errorf("pack %s: %w", r.GitDir, err) }
	index, err := fsys.TempFile(dir, "tmp_idx_")
	if err != nil {
		return fail(err)
	}
	defer fsys.Remove(index.Name())
	_, err = index.Write(idx)
	if cerr := index.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(err)
	}
	name := "pack-" + sum.String()
	if err := fsys.Rename(packTmp, filepath.Join(dir, name+".pack")); err != nil {
		return fail(err)
	}
	if err := fsys.syncDirs(); err != nil {
		return fail(err)
	}
	if afterPackRename != nil {
		afterPackRename(filepath.Join(r.GitDir, dir, name+".pack"))
	}
	if err := fsys.Rename(index.Name(), filepath.Join(dir, name+".idx")); err != nil {
		return fail(err)
	}
	if err := fsys.syncDirs(); err != nil {
		return fail(err)
	}
	return name, nil
}

// indexPack reads a pack back from its start and returns its version 2 index, written by
// go-git's idxfile writer and encoder.
func indexPack(f io.ReadSeeker) ([]byte, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	iw := new(idxfile.Writer)
	parser, err := packfile.NewParser(packfile.NewScanner(f), iw)
	if err != nil {
		return nil, err
	}
	if _, err := parser.Parse(); err != nil {
		return nil, err
	}
	idx, err := iw.Index()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := idxfile.NewEncoder(&b).Encode(idx); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// packKept reports whether a .keep file protects a pack from deletion, as in git.
func (r *Repo) packKept(name string) bool {
	_, err := os.Stat(filepath.Join(r.GitDir, "objects", "pack", name+".keep"))
	return err == nil
}

// removePack deletes a pack: the .pack file first and the .idx last, so that no .pack is
// left without its index (an .idx alone is ignored by git and by go-git alike).
func (r *Repo) removePack(name string) error {
	base := filepath.Join(r.GitDir, "objects", "pack", name)
	for _, ext := range []string{".pack", ".rev", ".bitmap", ".mtimes", ".promisor", ".idx"} {
		if err := os.Remove(base + ext); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", base+ext, err)
		}
	}
	return nil
}

// packInfo is one pack and the objects its index lists.
type packInfo struct {
	name    string
	objects []Hash
	mtime   time.Time
	keep    bool
}

// holdsAll reports whether the pack holds every object of set.
func (p packInfo) holdsAll(set map[Hash]bool) bool {
	n := 0
	for _, h := range p.objects {
		if set[h] {
			n++
		}
	}
	return n == len(set)
}

// holdsOnly reports whether every object of the pack is in set.
func (p packInfo) holdsOnly(set map[Hash]bool) bool {
	for _, h := range p.objects {
		if !set[h] {
			return false
		}
	}
	return true
}

// packContents reads the index of every pack.
func (r *Repo) packContents() ([]packInfo, error) {
	names, err := r.packs()
	if err != nil {
		return nil, err
	}
	out := make([]packInfo, 0, len(names))
	for _, n := range names {
		base := filepath.Join(r.GitDir, "objects", "pack", n)
		fi, err := os.Stat(base + ".pack")
		if err != nil {
			return nil, err
		}
		f, err := os.Open(base + ".idx")
		if err != nil {
			return nil, err
		}
		idx := idxfile.NewMemoryIndex()
		err = idxfile.NewDecoder(bufio.NewReader(f)).Decode(idx)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s.idx: %w", base, err)
		}
		it, err := idx.Entries()
		if err != nil {
			return nil, err
		}
		p := packInfo{name: n, mtime: fi.ModTime(), keep: r.packKept(n)}
		for {
			e, err := it.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("read %s.idx: %w", base, err)
			}
			p.objects = append(p.objects, e.Hash)
		}
		it.Close()
		out = append(out, p)
	}
	return out, nil
}

// removeGarbage deletes what killed writers leave in objects/ once it is older than before:
// tmp_obj_ and tmp_pack_ files, temporary index files, an index whose pack is missing, and
// a pack without index that indexOrphanPacks could not read.
func (r *Repo) removeGarbage(before time.Time) {
	old := func(p string, than time.Time) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.ModTime().Before(than)
	}
	objects := filepath.Join(r.GitDir, "objects")
	dirs, _ := os.ReadDir(objects)
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		es, _ := os.ReadDir(filepath.Join(objects, d.Name()))
		for _, e := range es {
			n, p := e.Name(), filepath.Join(objects, d.Name(), e.Name())
			if e.IsDir() {
				continue
			}
			if d.Name() == "pack" {
				if stem, ok := strings.CutSuffix(n, ".pack"); ok && !exists(filepath.Join(objects, "pack", stem+".idx")) {
					if old(p, before) {
						_ = os.Remove(p) // indexOrphanPacks could not read it
					}
					continue
				}
				if stem, ok := strings.CutSuffix(n, ".idx"); ok && !exists(filepath.Join(objects, "pack", stem+".pack")) && old(p, before) {
					_ = os.Remove(p)
					continue
				}
			}
			if (strings.HasPrefix(n, "tmp_") || (strings.HasPrefix(n, ".") && strings.Contains(n, ".tmp-"))) && old(p, before) {
				_ = os.Remove(p)
			}
		}
	}
}

// indexOrphanPacks writes the missing index of every pack that has none and is older than
// a writer needs between its two renames. Such a pack (a git or ckpt process killed between
// them) is seen by neither git nor ckpt's go-git readers (gitFS hides it), so its objects
// cannot be read until it is indexed. It returns the number of packs indexed.
func (r *Repo) indexOrphanPacks() (int, error) {
	dir := filepath.Join(r.GitDir, "objects", "pack")
	es, _ := os.ReadDir(dir)
	n := 0
	for _, e := range es {
		stem, ok := strings.CutSuffix(e.Name(), ".pack")
		if !ok || exists(filepath.Join(dir, stem+".idx")) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if fi, err := os.Stat(p); err != nil || time.Since(fi.ModTime()) < staleLockAge {
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			return n, err
		}
		idx, err := indexPack(f)
		f.Close()
		if err != nil {
			return n, fmt.Errorf("%s has no index and cannot be read: %w", p, err)
		}
		if err := WriteFileAtomic(filepath.Join(dir, stem+".idx"), idx, 0o444, r.store.Opts.Fsync); err != nil {
			return n, err
		}
		n++
	}
	if n > 0 {
		r.Reset()
	}
	return n, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
