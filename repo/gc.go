package repo

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/ckpt-dev/ckpt/internal/hint"
)

// ErrMergePending refuses to rewrite history while a merge is pending (MERGE_HEAD).
var ErrMergePending = errors.New("a merge is pending")

// Recommit is one commit of a rewritten first-parent history: it keeps the tree, author,
// committer and second parents of From, and takes Message.
type Recommit struct {
	From    Hash
	Message string
}

// RewriteMain rewrites main's first-parent history, as gc's squash needs. plan is given that
// history, oldest first, and returns the index start of the first commit it changes and the
// commits that replace it and everything after it, in order: each one is the first parent of
// the next, and the first one's is the commit before start (none when start is 0). A start
// below 0 changes nothing. main moves from its head to the last one by compare-and-swap,
// with reason in the reflog; the old commits stay reachable through the reflog, and
// nothing is deleted (Repack does that). It returns main before and after. The caller holds
// the exclusive lock.
func (r *Repo) RewriteMain(reason string, plan func(chain []CommitInfo) (start int, commits []Recommit, err error)) (before, after Hash, err error) {
	// A pack a killed writer left without index hides its objects; index it first.
	_, _ = r.indexOrphanPacks()
	head, err := r.Head()
	if err != nil || head == ZeroHash {
		return head, head, err
	}
	var chain []CommitInfo // oldest first
	if err := r.Log(head, func(ci CommitInfo) bool { chain = append(chain, ci); return true }); err != nil {
		return head, head, err
	}
	slices.Reverse(chain)
	start, commits, err := plan(chain)
	if err != nil || start < 0 || len(commits) == 0 {
		return head, head, err
	}
	if start >= len(chain) {
		return head, head, fmt.Errorf("rewrite %s: start %d beyond %d commits", r.GitDir, start, len(chain))
	}
	g := r.reader()
	w := r.objects()
	parent := ZeroHash
	if start > 0 {
		parent = chain[start-1].Hash
	}
	for _, rc := range commits {
		c, err := g.commit(rc.From)
		if err != nil {
			return head, head, err
		}
		parents := slices.Clone(c.ParentHashes)
		switch {
		case parent == ZeroHash && len(parents) > 0:
			parents = parents[1:]
		case parent != ZeroHash && len(parents) == 0:
			parents = []Hash{parent}
		case parent != ZeroHash:
			parents[0] = parent
		}
		if len(parents) == 0 {
			parents = nil
		}
		o, err := commitObject(c.TreeHash, parents, c.Author, c.Committer, rc.Message)
		if err != nil {
			return head, head, err
		}
		h, err := w.put(o)
		if err != nil {
			return head, head, err
		}
		parent = h
	}
	if err := w.sync(); err != nil {
		return head, head, err
	}
	if err := r.store.updateRef(r.GitDir, refUpdate{name: MainRef, old: head, new: parent, msg: reason}, r.store.Opts.Author); err != nil {
		return head, head, err
	}
	r.Reset()
	return head, parent, nil
}

// DefaultPruneAge is how long gc keeps an unreachable object: git prune's default.
const DefaultPruneAge = 14 * 24 * time.Hour

// RepackReport says what Repack did.
type RepackReport struct {
	// Packed is the number of reachable objects, all in one pack afterwards.
	Packed int
	// Pruned is the number of unreachable objects deleted (older than the grace period).
	Pruned int
	// Kept is the number of unreachable objects kept because they are younger than it.
	Kept int
	// Missing is the number of objects a root leads to that the repository does not hold.
	Missing int
	// PacksRemoved is the number of packs deleted.
	PacksRemoved int
}

// Repack puts every object reachable from a root into one pack and deletes what that makes
// redundant, and unreachable objects whose file is older than pruneBefore (zero:
// DefaultPruneAge ago), like `git repack -a -d` then `git prune --expire`.
//
// Roots are main, every ref under refs/ (refs/ckpt/* included), HEAD and the pseudo-refs
// (MERGE_HEAD, ORIG_HEAD, ...), both sides of every reflog entry, and the index's blobs and
// trees. Order: the new pack is written to a temporary file, fsynced and renamed into place,
// then its index the same way, then the pack directory is fsynced; only then are loose
// objects and old packs deleted. A pack is deleted only when each of its objects is in the
// new pack or it is old enough to prune (judged by the pack's file time). A kill at any
// moment therefore leaves every reachable object in place. The caller holds the exclusive
// lock.
func (r *Repo) Repack(pruneBefore time.Time) (RepackReport, error) {
	var rep RepackReport
	if pruneBefore.IsZero() {
		pruneBefore = time.Now().Add(-DefaultPruneAge)
	}
	// Without a valid main the roots are unknown: prune nothing. A mirror (the transport
	// repository) has no main of its own; its refs are its roots.
	if r.WorkDir != "" {
		if _, err := r.readMain(); err != nil {
			return rep, err
		}
	}
	if _, err := r.indexOrphanPacks(); err != nil {
		return rep, err
	}
	r.Reset()
	roots, err := r.gcRoots()
	if err != nil {
		return rep, err
	}
	reach, missing, err := r.walk(roots)
	if err != nil {
		return rep, err
	}
	rep.Packed, rep.Missing = len(reach), len(missing)
	loose, err := r.looseObjects()
	if err != nil {
		return rep, err
	}
	packs, err := r.packContents()
	if err != nil {
		return rep, err
	}
	present := map[Hash]bool{}
	for _, h := range loose {
		present[h] = true
	}
	for _, p := range packs {
		for _, h := range p.objects {
			present[h] = true
		}
	}

	// The pack that holds every reachable object afterwards: an existing one when it
	// already does, nothing reachable is loose and it holds nothing due for pruning; else
	// a new one.
	target := ""
	looseReachable := false
	for _, h := range loose {
		looseReachable = looseReachable || reach[h]
	}
	if !looseReachable {
		for _, p := range packs {
			if p.holdsAll(reach) && (p.mtime.After(pruneBefore) || p.holdsOnly(reach)) {
				target = p.name
				break
			}
		}
	}
	if target == "" && len(reach) > 0 {
		objs := make([]Hash, 0, len(reach))
		for h := range reach {
			objs = append(objs, h)
		}
		sort.Slice(objs, func(i, j int) bool { return bytes.Compare(objs[i][:], objs[j][:]) < 0 })
		if target, err = r.writePack(r.reader().storage, objs); err != nil {
			return rep, err
		}
		r.Reset()
	}

	// Everything reachable is durable in target from here on. after is what is left.
	after := map[Hash]bool{}
	for h := range reach {
		after[h] = true
	}
	for _, p := range packs {
		if p.name == target {
			for _, h := range p.objects {
				after[h] = true // a kept pack may hold young unreachable objects
			}
		}
	}
	for _, h := range loose {
		if reach[h] {
			_ = os.Remove(r.loosePath(h))
			continue
		}
		if fi, err := os.Stat(r.loosePath(h)); err == nil && !fi.ModTime().Before(pruneBefore) {
			after[h] = true
			continue
		}
		_ = os.Remove(r.loosePath(h))
	}
	for _, p := range packs {
		if p.name == target {
			continue
		}
		drop := !p.keep && (!p.mtime.After(pruneBefore) || p.holdsOnly(reach))
		if !drop {
			for _, h := range p.objects {
				after[h] = true
			}
			continue
		}
		if err := r.removePack(p.name); err != nil {
			return rep, err
		}
		rep.PacksRemoved++
	}
	for h := range present {
		switch {
		case !after[h]:
			rep.Pruned++
		case !reach[h]:
			rep.Kept++
		}
	}
	r.removeGarbage(pruneBefore)
	r.Reset()
	return rep, nil
}

// gcRoots lists every object gc must keep with its history.
func (r *Repo) gcRoots() ([]Hash, error) {
	var roots []Hash
	add := func(h Hash) {
		if h != ZeroHash {
			roots = append(roots, h)
		}
	}
	refs, err := listRefs(r.GitDir, "refs/")
	if err != nil {
		return nil, fmt.Errorf("gc %s: %w", r.GitDir, err)
	}
	for _, h := range refs {
		add(h)
	}
	// HEAD (when detached) and the pseudo-refs git keeps: the first hash of each line.
	for _, name := range []string{"HEAD", "MERGE_HEAD", "ORIG_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "FETCH_HEAD", "AUTO_MERGE"} {
		b, err := os.ReadFile(filepath.Join(r.GitDir, name))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) > 0 && plumbing.IsHash(f[0]) {
				add(plumbing.NewHash(f[0]))
			}
		}
	}
	// Every reflog entry, old and new side: `git reflog` and fsck expect to read them all.
	logs := filepath.Join(r.GitDir, "logs")
	err = filepath.WalkDir(logs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || strings.HasSuffix(p, ".lock") {
			return nil
		}
		rel, _ := filepath.Rel(r.GitDir, p)
		for _, e := range readReflog(r.GitDir, filepath.ToSlash(rel)) {
			add(e.Old)
			add(e.New)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("gc %s: %w", r.GitDir, err)
	}
	idx, err := r.readIndex()
	if err != nil {
		// Torn by a crash (the index is not fsynced): the next commit writes it again.
		return nil, hint.New(err, "ckpt commit -s %s writes the index again", r.ID)
	}
	if idx != nil {
		for _, e := range idx.Entries {
			if e.Mode != filemode.Submodule {
				add(e.Hash)
			}
		}
		if idx.Cache != nil {
			for _, e := range idx.Cache.Entries {
				add(e.Hash)
			}
		}
		if idx.ResolveUndo != nil {
			for _, e := range idx.ResolveUndo.Entries {
				for _, h := range e.Stages {
					add(h)
				}
			}
		}
	}
	return roots, nil
}

// readIndex decodes .git/index, nil when there is none. An index gc cannot read stops gc:
// the blobs it names would otherwise be pruned.
func (r *Repo) readIndex() (*index.Index, error) {
	f, err := os.Open(filepath.Join(r.GitDir, "index"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	idx := &index.Index{}
	if err := index.NewDecoder(bufio.NewReader(f)).Decode(idx); err != nil {
		return nil, fmt.Errorf("gc: read %s: %w", f.Name(), err)
	}
	return idx, nil
}

// walk returns every object reachable from roots that the repository holds, and those it
// lacks. Blobs are only checked for presence, not read.
func (r *Repo) walk(roots []Hash) (map[Hash]bool, []Hash, error) {
	s := r.reader().storage
	seen := map[Hash]bool{}
	var missing []Hash
	lacks := map[Hash]bool{}
	stack := append([]Hash(nil), roots...)
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[h] || lacks[h] {
			continue
		}
		o, err := s.EncodedObject(plumbing.AnyObject, h)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			lacks[h] = true
			missing = append(missing, h)
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read object %s: %w", h, err)
		}
		seen[h] = true
		switch o.Type() {
		case plumbing.CommitObject:
			c := &object.Commit{}
			if err := c.Decode(o); err != nil {
				return nil, nil, fmt.Errorf("read commit %s: %w", h, err)
			}
			stack = append(stack, c.TreeHash)
			stack = append(stack, c.ParentHashes...)
		case plumbing.TreeObject:
			t := &object.Tree{}
			if err := t.Decode(o); err != nil {
				return nil, nil, fmt.Errorf("read tree %s: %w", h, err)
			}
			for _, e := range t.Entries {
				switch {
				case e.Mode == filemode.Submodule:
				case e.Mode == filemode.Dir:
					stack = append(stack, e.Hash)
				case seen[e.Hash] || lacks[e.Hash]:
				case s.HasEncodedObject(e.Hash) == nil:
					seen[e.Hash] = true
				default:
					lacks[e.Hash] = true
					missing = append(missing, e.Hash)
				}
			}
		case plumbing.TagObject:
			t := &object.Tag{}
			if err := t.Decode(o); err != nil {
				return nil, nil, fmt.Errorf("read tag %s: %w", h, err)
			}
			stack = append(stack, t.Target)
		}
	}
	return seen, missing, nil
}
