package repo

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// History rewriting: every version of every file mapped through a function (a redaction),
// with the refs, packed-refs and reflogs that named the old commits moved to the new ones,
// and the objects only the old history reached pruned, so that what was replaced is in no
// object of the repository afterwards. New objects are encoded by go-git
// (object.Tree.Encode, object.Commit.Encode) into its storer (objects.go).

// RewriteOptions say how RewriteHistory maps history.
type RewriteOptions struct {
	// Blob maps a file's content, given the path it was first met at. It is called once per
	// distinct blob, so it must not depend on the path for its result. Returning equal bytes
	// keeps the blob.
	Blob func(path string, data []byte) ([]byte, error)
	// Message maps a commit message (and reflog messages); nil keeps them.
	Message func(msg string) string
	// Keep are commits left as they are, with all their ancestors: history a remote has.
	Keep []Hash
	// DryRun computes the new history without writing an object.
	DryRun bool
	// Reason is the reflog message of the ref updates.
	Reason string
}

// RefMove is one ref a rewrite moves.
type RefMove struct {
	Name     string
	Old, New Hash
}

// Rewrite is a rewritten history whose objects are written but whose refs have not moved:
// Finish moves them and prunes the old objects.
type Rewrite struct {
	// Commits maps each commit that changed to its new hash; commits left as they were
	// (unchanged, or kept) are not in it.
	Commits map[Hash]Hash
	// Blobs maps each blob that changed to its new hash.
	Blobs map[Hash]Hash
	// Refs are the refs that move.
	Refs []RefMove
	// Kept counts the commits RewriteOptions.Keep protected.
	Kept int

	r *Repo
	o RewriteOptions
}

// New returns the commit that replaces h (h itself when it did not change).
func (rw *Rewrite) New(h Hash) Hash {
	if n, ok := rw.Commits[h]; ok {
		return n
	}
	return h
}

// Changed reports whether the rewrite changes anything.
func (rw *Rewrite) Changed() bool { return len(rw.Commits) > 0 }

// RewriteHistory maps every commit reachable from the refs, HEAD and the reflogs (except
// those o.Keep protects) through o, writing the new blobs, trees and commits. Authors,
// committers and dates are kept; a signature, which the new commit would invalidate, is
// dropped. No ref moves until Finish. The caller holds the repository's exclusive lock.
func (r *Repo) RewriteHistory(o RewriteOptions) (*Rewrite, error) {
	if mh, err := r.MergeHead(); err != nil || mh != ZeroHash {
		if err == nil {
			err = fmt.Errorf("%s: %w (MERGE_HEAD %s)", r.ID, ErrMergePending, short(mh))
		}
		return nil, err
	}
	rw := &Rewrite{Commits: map[Hash]Hash{}, Blobs: map[Hash]Hash{}, r: r, o: o}
	refs, err := r.rewritableRefs()
	if err != nil {
		return nil, err
	}
	logged, err := r.reflogHashes()
	if err != nil {
		return nil, err
	}
	keep, err := r.commitsReachable(o.Keep)
	if err != nil {
		return nil, err
	}
	var roots []Hash
	for _, n := range sortedKeys(refs) {
		roots = append(roots, refs[n])
	}
	roots = append(roots, logged...)
	order, err := r.commitsParentsFirst(roots, keep)
	if err != nil {
		return nil, err
	}
	for h := range keep {
		if r.has(h) {
			rw.Kept++
		}
	}
	g := r.reader()
	trees := map[Hash]Hash{}
	for _, h := range order {
		c, err := g.commit(h)
		if err != nil {
			return nil, err
		}
		tree, err := rw.tree(c.TreeHash, "", trees)
		if err != nil {
			return nil, err
		}
		parents := make([]Hash, len(c.ParentHashes))
		moved := false
		for i, p := range c.ParentHashes {
			parents[i] = rw.New(p)
			moved = moved || parents[i] != p
		}
		msg := c.Message
		if o.Message != nil {
			msg = o.Message(msg)
		}
		if tree == c.TreeHash && !moved && msg == c.Message {
			continue
		}
		nc := &object.Commit{Author: c.Author, Committer: c.Committer, MergeTag: c.MergeTag, Message: msg,
			TreeHash: tree, ParentHashes: parents, Encoding: c.Encoding, ExtraHeaders: c.ExtraHeaders}
		obj := &plumbing.MemoryObject{}
		if err := nc.Encode(obj); err != nil {
			return nil, fmt.Errorf("encode commit: %w", err)
		}
		nh, err := rw.store(obj)
		if err != nil {
			return nil, err
		}
		rw.Commits[h] = nh
	}
	for _, n := range sortedKeys(refs) {
		if nh := rw.New(refs[n]); nh != refs[n] {
			rw.Refs = append(rw.Refs, RefMove{n, refs[n], nh})
		}
	}
	if !o.DryRun {
		if err := r.objects().sync(); err != nil { // durable before Finish moves a ref
			return nil, err
		}
	}
	return rw, nil
}

// tree rewrites tree h (at path dir) and returns its new hash; trees caches the answers.
func (rw *Rewrite) tree(h Hash, dir string, trees map[Hash]Hash) (Hash, error) {
	if n, ok := trees[h]; ok {
		return n, nil
	}
	g := rw.r.reader()
	t, err := object.GetTree(g.storage, h)
	if err != nil {
		return ZeroHash, fmt.Errorf("read tree %s: %w", short(h), err)
	}
	entries := make([]object.TreeEntry, len(t.Entries))
	changed := false
	for i, e := range t.Entries {
		entries[i] = e
		var nh Hash
		switch {
		case e.Mode == filemode.Dir:
			nh, err = rw.tree(e.Hash, dir+e.Name+"/", trees)
		case e.Mode == filemode.Submodule:
			continue // a commit of another repository: not ours to rewrite
		default:
			nh, err = rw.blob(e.Hash, dir+e.Name)
		}
		if err != nil {
			return ZeroHash, err
		}
		if nh != e.Hash {
			entries[i].Hash, changed = nh, true
		}
	}
	if !changed {
		trees[h] = h
		return h, nil
	}
	obj := &plumbing.MemoryObject{}
	if err := (&object.Tree{Entries: entries}).Encode(obj); err != nil {
		return ZeroHash, fmt.Errorf("encode tree: %w", err)
	}
	nh, err := rw.store(obj)
	if err != nil {
		return ZeroHash, err
	}
	trees[h] = nh
	return nh, nil
}

func (rw *Rewrite) blob(h Hash, path string) (Hash, error) {
	if n, ok := rw.Blobs[h]; ok {
		return n, nil
	}
	if rw.o.Blob == nil {
		return h, nil
	}
	g := rw.r.reader()
	data, err := g.blob(h)
	if err != nil {
		return ZeroHash, err
	}
	out, err := rw.o.Blob(path, data)
	if err != nil {
		return ZeroHash, fmt.Errorf("%s: %w", path, err)
	}
	if bytes.Equal(out, data) {
		rw.Blobs[h] = h
		return h, nil
	}
	nh, err := rw.store(blobObject(out))
	if err != nil {
		return ZeroHash, err
	}
	rw.Blobs[h] = nh
	return nh, nil
}

// store writes obj through go-git's storer (nothing in a dry run) and returns its hash.
// The gitFS under the storer makes it durable before any ref can name it.
func (rw *Rewrite) store(obj *plumbing.MemoryObject) (Hash, error) {
	if rw.o.DryRun {
		return obj.Hash(), nil
	}
	return rw.r.objects().put(obj)
}

// Finish moves every ref of the rewrite (compare-and-swap: a ref that moved meanwhile is
// an error), except those the caller moved itself (moved: main, say, to a commit on top),
// then rewrites packed-refs and the reflogs to name the new commits, and prunes the objects
// nothing reaches any more. The caller holds the repository's exclusive lock.
func (rw *Rewrite) Finish(moved ...string) error {
	if rw.o.DryRun {
		return errors.New("finish a dry-run rewrite")
	}
	r, st := rw.r, rw.r.store
	skip := map[string]bool{}
	for _, n := range moved {
		skip[n] = true
	}
	msg := rw.o.Reason
	if msg == "" {
		msg = "rewrite history"
	}
	for _, m := range rw.Refs {
		if skip[m.Name] {
			continue
		}
		if err := st.updateRef(r.GitDir, refUpdate{name: m.Name, old: m.Old, new: m.New, msg: msg}, st.Opts.Author); err != nil {
			return err
		}
	}
	if err := rw.rewritePackedRefs(); err != nil {
		return err
	}
	if err := rw.rewriteReflogs(); err != nil {
		return err
	}
	r.Reset()
	return r.pruneUnreachable()
}

// rewritableRefs are the refs a rewrite moves: everything under refs/, and HEAD when it is
// detached. A ref to anything but a commit (an annotated tag) cannot be followed.
func (r *Repo) rewritableRefs() (map[string]Hash, error) {
	refs, err := listRefs(r.GitDir, "refs/")
	if err != nil {
		return nil, err
	}
	if b, err := os.ReadFile(filepath.Join(r.GitDir, "HEAD")); err == nil {
		if s := strings.TrimSpace(string(b)); plumbing.IsHash(s) {
			refs["HEAD"] = plumbing.NewHash(s)
		}
	}
	g := r.reader()
	for n, h := range refs {
		if _, err := g.commit(h); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
	}
	return refs, nil
}

// reflogFiles lists the reflogs under logs/.
func (r *Repo) reflogFiles() ([]string, error) {
	var out []string
	root := filepath.Join(r.GitDir, "logs")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() && !strings.HasSuffix(p, ".lock") {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// reflogHashes are the commits the reflogs name that still exist: git counts them as
// reachable, so they are history to rewrite too.
func (r *Repo) reflogHashes() ([]Hash, error) {
	files, err := r.reflogFiles()
	if err != nil {
		return nil, err
	}
	seen := map[Hash]bool{}
	var out []Hash
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		for _, l := range strings.Split(string(b), "\n") {
			f := strings.Fields(l)
			for _, s := range f[:min(2, len(f))] {
				if !plumbing.IsHash(s) {
					continue
				}
				h := plumbing.NewHash(s)
				if h != ZeroHash && !seen[h] && r.has(h) {
					if _, err := r.reader().commit(h); err == nil {
						seen[h] = true
						out = append(out, h)
					}
				}
			}
		}
	}
	return out, nil
}

// commitsParentsFirst returns the commits reachable from roots, minus keep, each after its
// parents.
func (r *Repo) commitsParentsFirst(roots []Hash, keep map[Hash]bool) ([]Hash, error) {
	g := r.reader()
	var order []Hash
	state := map[Hash]int{} // 1 visiting, 2 done
	type frame struct {
		h       Hash
		parents []Hash
		next    int
	}
	for _, root := range roots {
		if keep[root] || state[root] != 0 {
			continue
		}
		c, err := g.commit(root)
		if err != nil {
			return nil, err
		}
		stack := []frame{{root, c.ParentHashes, 0}}
		state[root] = 1
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.next == len(top.parents) {
				order = append(order, top.h)
				state[top.h] = 2
				stack = stack[:len(stack)-1]
				continue
			}
			p := top.parents[top.next]
			top.next++
			if keep[p] || state[p] != 0 {
				continue
			}
			pc, err := g.commit(p)
			if err != nil {
				return nil, err
			}
			state[p] = 1
			stack = append(stack, frame{p, pc.ParentHashes, 0})
		}
	}
	return order, nil
}

// rewritePackedRefs maps the hashes of packed-refs (which a loose ref shadows, but which
// still names the old commit) through the rewrite.
func (rw *Rewrite) rewritePackedRefs() error {
	path := filepath.Join(rw.r.GitDir, "packed-refs")
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	lines := strings.SplitAfter(string(b), "\n")
	changed := false
	for i, l := range lines {
		body := strings.TrimPrefix(l, "^")
		if len(body) < 40 || !plumbing.IsHash(body[:40]) {
			continue
		}
		if n := rw.New(plumbing.NewHash(body[:40])); n != plumbing.NewHash(body[:40]) {
			lines[i] = l[:len(l)-len(body)] + n.String() + body[40:]
			changed = true
		}
	}
	if !changed {
		return nil
	}
	st := rw.r.store
	f, err := createLockFile(path+".lock", time.Now().Add(st.Opts.LockTimeout))
	if err != nil {
		return err
	}
	return commitLockFile(f, path, []byte(strings.Join(lines, "")), st.Opts.Fsync)
}

// rewriteReflogs maps every reflog entry's commits through the rewrite and its message
// through RewriteOptions.Message; an entry naming an object that no longer exists is
// dropped, as `git reflog expire` would.
func (rw *Rewrite) rewriteReflogs() error {
	files, err := rw.r.reflogFiles()
	if err != nil {
		return err
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var out strings.Builder
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			l := sc.Text()
			head, msg, _ := strings.Cut(l, "\t")
			f := strings.SplitN(head, " ", 3)
			if len(f) < 3 || !plumbing.IsHash(f[0]) || !plumbing.IsHash(f[1]) {
				continue // malformed: git would not read it either
			}
			keep := true
			for i := range 2 {
				h := rw.New(plumbing.NewHash(f[i]))
				if h != ZeroHash && !rw.r.has(h) {
					keep = false
				}
				f[i] = h.String()
			}
			if !keep {
				continue
			}
			if rw.o.Message != nil {
				msg = firstLine(rw.o.Message(msg))
			}
			out.WriteString(strings.Join(f, " ") + "\t" + msg + "\n")
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		}
		if out.String() != string(b) {
			if err := WriteFileAtomic(p, []byte(out.String()), FilePerm, rw.r.store.Opts.Fsync); err != nil {
				return err
			}
		}
	}
	return nil
}

// PruneMirror drops the reflogs of a mirror such as the transport repository (they are
// not history anyone reads) and then every object its refs no longer reach: after a
// forced push replaced a remote's history, the old objects leave the mirror too. Refs a
// killed push left staged go first: they would keep the old history. The caller holds the
// repository's lock.
func (r *Repo) PruneMirror() error {
	if err := os.RemoveAll(filepath.Join(r.GitDir, "logs")); err != nil {
		return err
	}
	if err := clearPushStage(r); err != nil {
		return err
	}
	return r.pruneUnreachable()
}

// pruneUnreachable keeps only what the roots reach (the refs, HEAD and the pseudo-refs,
// the reflogs and the index, as gc's): it is gc's repack with no grace period, so that an
// object only old history reached is gone at once. The commit-graph and multi-pack-index,
// which name objects, go too (git rebuilds them). The caller holds the exclusive lock.
func (r *Repo) pruneUnreachable() error {
	if _, err := r.Repack(time.Now().Add(time.Hour)); err != nil {
		return err
	}
	for _, p := range []string{"objects/info/commit-graph", "objects/info/commit-graphs", "objects/pack/multi-pack-index", "objects/info/packs"} {
		_ = os.RemoveAll(filepath.Join(r.GitDir, filepath.FromSlash(p)))
	}
	r.Reset()
	return nil
}

func sortedKeys(m map[string]Hash) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Ancestors returns the commits reachable from heads (heads included) that the repository
// holds; a head it lacks is skipped.
func (r *Repo) Ancestors(heads ...Hash) (map[Hash]bool, error) { return r.commitsReachable(heads) }

// commitsReachable returns the commits reachable from heads that the repository holds.
func (r *Repo) commitsReachable(heads []Hash) (map[Hash]bool, error) {
	g := r.reader()
	seen := map[Hash]bool{}
	stack := append([]Hash(nil), heads...)
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[h] || h == ZeroHash || !r.has(h) {
			continue
		}
		c, err := g.commit(h)
		if err != nil {
			return nil, err
		}
		seen[h] = true
		stack = append(stack, c.ParentHashes...)
	}
	return seen, nil
}

// packNames lists the packs (pack-<hash>, with an index) of a git directory.
func packNames(gitDir string) []string {
	es, _ := os.ReadDir(filepath.Join(gitDir, "objects", "pack"))
	var out []string
	for _, e := range es {
		if n, ok := strings.CutSuffix(e.Name(), ".pack"); ok {
			out = append(out, n)
		}
	}
	return out
}

// looseNames lists the paths of the loose objects of a git directory.
func looseNames(gitDir string) []string {
	var out []string
	for i := range 256 {
		d := filepath.Join(gitDir, "objects", fmt.Sprintf("%02x", i))
		es, _ := os.ReadDir(d)
		for _, e := range es {
			if len(e.Name()) == 38 && plumbing.IsHash(fmt.Sprintf("%02x", i)+e.Name()) {
				out = append(out, filepath.Join(d, e.Name()))
			}
		}
	}
	return out
}

// Has reports whether the repository holds object h.
func (r *Repo) Has(h Hash) bool { return r.has(h) }

// BlobHash is the id git gives a file holding data.
func BlobHash(data []byte) Hash { return plumbing.ComputeHash(plumbing.BlobObject, data) }
