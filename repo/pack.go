package repo

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// maxPacks is how many packs may pile up before they are merged into one.
const maxPacks = 8

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

// Pack moves every loose object into a new pack (with deltas), and merges the packs into one
// when more than maxPacks exist. Pack and index are durable (see writePack) before any loose
// object or old pack is removed; nothing unreachable is dropped. The caller holds the
// exclusive lock.
func (r *Repo) Pack() error {
	loose, err := r.looseObjects()
	if err != nil {
		return err
	}
	if len(loose) > 0 {
		if _, err := r.writePack(r.reader().storage, loose); err != nil {
			return err
		}
		for _, p := range loose {
			_ = os.Remove(r.loosePath(p))
		}
		r.Reset()
	}
	packs, err := r.packs()
	if err != nil || len(packs) <= maxPacks {
		return err
	}
	return r.mergePacks(packs)
}

func (r *Repo) loosePath(h Hash) string {
	s := h.String()
	return filepath.Join(r.GitDir, "objects", s[:2], s[2:])
}

func (r *Repo) looseObjects() ([]Hash, error) {
	var out []Hash
	for i := range 256 {
		d := fmt.Sprintf("%02x", i)
		es, err := os.ReadDir(filepath.Join(r.GitDir, "objects", d))
		if err != nil {
			continue
		}
		for _, e := range es {
			if len(e.Name()) != 38 {
				continue // tmp_obj_ files of a crashed writer
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
	if err := fsys.Rename(pack.Name(), filepath.Join(dir, name+".pack")); err != nil {
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

// mergePacks writes every packed object into one new pack and removes the old packs (not
// one that a .keep file protects). Nothing is dropped: unreachable objects are gc's to
// prune, after their grace period.
func (r *Repo) mergePacks(old []string) error {
	s := r.reader().storage
	iter, err := s.IterEncodedObjects(plumbing.AnyObject)
	if err != nil {
		return err
	}
	// An object can be in two packs (a restore writes an old version again, loose, and
	// a later pack takes it): each goes into the merged pack once, or git would find the
	// pack claiming more objects than its index.
	var all []Hash
	seen := map[Hash]bool{}
	err = iter.ForEach(func(o plumbing.EncodedObject) error {
		if h := o.Hash(); !seen[h] {
			seen[h] = true
			all = append(all, h)
		}
		return nil
	})
	if err != nil {
		return err
	}
	merged, err := r.writePack(s, all)
	if err != nil {
		return err
	}
	for _, p := range old {
		if p == merged || r.packKept(p) {
			continue
		}
		if err := r.removePack(p); err != nil {
			return err
		}
	}
	r.Reset()
	return nil
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
