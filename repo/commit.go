package repo

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/ckpt-dev/ckpt/internal/hint"
)

// CommitRequest is one commit: the complete new set of files (the tree is exactly these
// files) and its message.
type CommitRequest struct {
	Files   map[string][]byte
	Message string
	// Trigger is only used for the first commit's default message.
	Trigger string
	// Parents defaults to the current HEAD. A merge gives HEAD and the other side.
	Parents []Hash
	// When defaults to the store's clock.
	When time.Time
	// Force commits even when the tree equals HEAD's (a merge commit, say).
	Force bool
	// Disk, Touch and Appendable say how Apply treats the work tree (see WorkTreeUpdate):
	// the bytes the caller read (compare and swap), files to repair though the tree does not
	// change them, and files an agent appends to.
	Disk       map[string][]byte
	Touch      []string
	Appendable []string
}

// Commit writes req as a new commit on main and updates the work tree and index. It returns
// the new commit and true, or HEAD and false when the files equal HEAD's (nothing to commit).
// The caller holds the repository's exclusive lock.
func (r *Repo) Commit(req CommitRequest) (Hash, bool, error) {
	return r.commit(req, true)
}

func (r *Repo) commit(req CommitRequest, maybePack bool) (Hash, bool, error) {
	p, err := r.Prepare(req)
	if err != nil {
		return ZeroHash, false, err
	}
	if err := p.Apply(); err != nil {
		return ZeroHash, false, err
	}
	if !p.Changed() {
		return p.Commit(), false, nil
	}
	if maybePack {
		_ = r.maybePack(p.Commit())
	}
	return p.Commit(), true, nil
}

// Prepared is a commit whose objects are written but which main does not point to yet:
// Apply makes it the new HEAD (work tree, ref, index), Undo takes an applied commit back.
// Two repositories updated together (a session and the knowledge repository) prepare both,
// then apply both, undoing the first if the second fails.
type Prepared struct {
	head    Hash
	commit  Hash
	tree    Hash
	files   map[string]Hash // the new tree: name -> blob
	oldTree map[string]Hash
	message string
	applied bool
	// to is the repository the commit goes to: a *Repo, or a Memory in tests.
	to preparedTarget
	// work and undoWork are what Apply does to a *Repo's work tree, and how it is undone.
	work     WorkTreeUpdate
	undoWork func()
	// Repaired are the files Apply brought back to the tree's bytes although the commit
	// did not change them (CommitRequest.Touch); Kept are files that hold, after the tree's
	// bytes, what an agent appended meanwhile (CommitRequest.Appendable).
	Repaired, Kept []string
}

// preparedTarget applies and undoes prepared commits.
type preparedTarget interface {
	apply(p *Prepared) error
	undo(p *Prepared) error
}

// Commit is the prepared commit's hash (HEAD's when nothing changed).
func (p *Prepared) Commit() Hash {
	if p == nil {
		return ZeroHash
	}
	return p.commit
}

// Changed is false when the files equal HEAD's: there is nothing to apply.
func (p *Prepared) Changed() bool { return p != nil && p.commit != p.head }

// Apply makes the prepared commit the new HEAD (see (*Repo).applyPrepared).
func (p *Prepared) Apply() error {
	if p == nil || p.applied {
		return nil
	}
	return p.to.apply(p)
}

// Undo takes an applied commit back: main returns to the previous HEAD (only if it still
// points to this commit), and the work tree and index to their previous state. The commit
// object stays, unreferenced, as git would leave it.
func (p *Prepared) Undo() error {
	if p == nil || !p.applied {
		return nil
	}
	return p.to.undo(p)
}

// prepare hashes req's files and tree and, unless they equal HEAD's, writes the blobs that
// HEAD lacks, the tree and the commit through w. head is HEAD (ZeroHash before the first
// commit), oldTree its files.
func prepare(w objectStore, req CommitRequest, head Hash, oldTree map[string]Hash, headTree Hash, author Signature, now func() time.Time) (*Prepared, error) {
	parents := req.Parents
	if parents == nil && head != ZeroHash {
		parents = []Hash{head}
	}
	blobs := make(map[string]*plumbing.MemoryObject, len(req.Files))
	files := make(map[string]Hash, len(req.Files))
	for name, data := range req.Files {
		blobs[name] = blobObject(data)
		files[name] = blobs[name].Hash()
	}
	tree, err := treeObject(files)
	if err != nil {
		return nil, err
	}
	p := &Prepared{head: head, commit: head, files: files, tree: tree.Hash(), oldTree: oldTree}
	if head != ZeroHash && headTree == p.tree && !req.Force && len(parents) == 1 && parents[0] == head {
		return p, nil
	}
	var objs []*plumbing.MemoryObject
	for name, o := range blobs {
		if h, ok := oldTree[name]; ok && h == files[name] {
			continue // unchanged: HEAD's blob, maybe packed, is this one
		}
		objs = append(objs, o)
	}
	objs = append(objs, tree)
	when := req.When
	if when.IsZero() {
		when = now()
	}
	p.message = req.Message
	if p.message == "" {
		p.message = "checkpoint(" + req.Trigger + ")\n"
	}
	sig := signature(author, when)
	c, err := commitObject(p.tree, parents, sig, sig, p.message)
	if err != nil {
		return nil, err
	}
	p.commit = c.Hash()
	if err := w.putAll(append(objs, c)); err != nil {
		return nil, err
	}
	return p, w.sync()
}

// Prepare writes the objects of req's commit (durably) without moving any ref or touching
// the work tree. The caller holds the repository's exclusive lock until Apply.
func (r *Repo) Prepare(req CommitRequest) (*Prepared, error) {
	st := r.store
	for name := range req.Files {
		if err := ValidFileName(name); err != nil {
			return nil, err
		}
	}
	head, err := r.readMain()
	if err != nil {
		return nil, err
	}
	parents := req.Parents
	if parents == nil && head != ZeroHash {
		parents = []Hash{head}
	}
	// A parent the repository lacks would make a commit git cannot walk past.
	for _, p := range parents {
		if p != r.known.commit && !r.isCommit(p) {
			return nil, hint.New(fmt.Errorf("%s: %w: %s is not a commit this repository holds; nothing committed", r.ID, ErrMissingParent, p), "ckpt doctor -s %s checks the repository", r.ID)
		}
	}
	var ht Hash
	var oldTree map[string]Hash
	if head != ZeroHash {
		if ht, oldTree, err = r.headTree(head); err != nil {
			return nil, err
		}
	}
	p, err := prepare(r.objects(), req, head, oldTree, ht, st.Opts.Author, st.Opts.Now)
	if err != nil {
		return nil, err
	}
	p.to = r
	p.work = WorkTreeUpdate{Files: req.Files, Old: oldTree, Disk: req.Disk, Touch: req.Touch, Appendable: req.Appendable, hashes: p.files}
	return p, nil
}

// apply makes a prepared commit the new HEAD: the work tree first (a crash after it leaves
// the new bytes on disk, which the next `ckpt commit` records, rather than a HEAD that the
// disk contradicts), then the ref (compare-and-swap against the HEAD seen by Prepare), then
// the index. Only the files the commit changes (and those named in Touch) are written, each
// only while it holds the bytes the caller read (Disk). A commit with nothing to commit
// still repairs the Touch files.
func (r *Repo) apply(p *Prepared) error {
	st := r.store
	w, err := r.applyWorkTree(p.work)
	if err != nil {
		return err
	}
	p.Kept = w.kept
	if !p.Changed() {
		p.Repaired = w.written
		// A process killed between moving main and writing the index left an index of the
		// tree before: nothing to commit now, but `git status` must agree.
		if len(w.written) > 0 || !r.indexHolds(p.files) {
			_ = st.writeIndex(r.GitDir, r.WorkDir, p.files, p.onDisk(w))
		}
		return nil
	}
	if err := st.updateRef(r.GitDir, refUpdate{name: MainRef, old: p.head, new: p.commit, msg: "commit: " + p.message}, st.Opts.Author); err != nil {
		w.undo()
		return err
	}
	p.undoWork, p.applied = w.undo, true
	r.known = knownHead{commit: p.commit, tree: p.tree, files: p.files}
	// The commit is durable from here on; the index is bookkeeping a later commit redoes.
	_ = st.writeIndex(r.GitDir, r.WorkDir, p.files, p.onDisk(w))
	return nil
}

// indexHolds reports whether the index names exactly these files with these blobs.
func (r *Repo) indexHolds(files map[string]Hash) bool {
	idx, err := r.readIndex()
	if err != nil || idx == nil || len(idx.Entries) != len(files) {
		return false
	}
	for _, e := range idx.Entries {
		if h, ok := files[e.Name]; !ok || h != e.Hash {
			return false
		}
	}
	return true
}

// onDisk says which entries the work tree holds exactly: the index records stat data only
// for those, so `git status` rehashes (and shows as modified) a file that holds more.
func (p *Prepared) onDisk(w *workTreeWrite) func(name string, h Hash) bool {
	return func(name string, h Hash) bool {
		if exact, ok := w.exact[name]; ok {
			return exact
		}
		if p.work.Disk == nil {
			return true // nothing written, nothing read: as before, trust the stat data
		}
		b, ok := p.work.Disk[name]
		return ok && BlobHash(b) == h
	}
}

// knownHead remembers the tree of the commit this process last made, so the next commit
// need not read it back through go-git.
type knownHead struct {
	commit, tree Hash
	files        map[string]Hash
}

// headTree returns HEAD's tree and its files.
func (r *Repo) headTree(head Hash) (Hash, map[string]Hash, error) {
	if r.known.commit == head && head != ZeroHash {
		return r.known.tree, r.known.files, nil
	}
	ht, err := r.reader().commitTree(head)
	if err != nil {
		return ZeroHash, nil, err
	}
	files, err := r.reader().treeFiles(ht)
	return ht, files, err
}

// undo takes an applied commit back (see Prepared.Undo).
func (r *Repo) undo(p *Prepared) error {
	st := r.store
	var err error
	if p.head == ZeroHash {
		err = st.deleteRef(r.GitDir, MainRef, p.commit)
	} else {
		err = st.updateRef(r.GitDir, refUpdate{name: MainRef, old: p.commit, new: p.head, msg: "undo: " + firstLine(p.message)}, st.Opts.Author)
	}
	if err != nil {
		return err
	}
	p.undoWork()
	p.applied = false
	if p.head != ZeroHash {
		_ = st.writeIndex(r.GitDir, r.WorkDir, p.oldTree, nil)
	}
	return nil
}

// Head returns the commit main points to (ZeroHash before the first commit).
func (r *Repo) Head() (Hash, error) { return r.readMain() }

// Reject keeps the bytes of a rejected write as a commit under refs/ckpt/rejected/<n>, off
// the main history: its parent is HEAD, its tree is HEAD's with the rejected files. It
// returns the ref name and the commit.
func (r *Repo) Reject(files map[string][]byte, message string) (string, Hash, error) {
	st := r.store
	head, err := r.Head()
	if err != nil {
		return "", ZeroHash, err
	}
	last, err := r.Rejected()
	if err != nil {
		return "", ZeroHash, err
	}
	var lastTree Hash
	if len(last) > 0 {
		if t, err := r.reader().commitTree(last[0].Hash); err == nil {
			lastTree = t
		}
	}
	c, again, err := reject(r.objects(), files, message, head, lastTree, st.Opts.Author, st.Opts.Now())
	if err != nil {
		return "", ZeroHash, err
	}
	if again {
		return last[0].Name, last[0].Hash, nil
	}
	n := 0
	if len(last) > 0 {
		n = last[0].N
	}
	for {
		n++
		name := RejectedPrefix + strconv.Itoa(n)
		err := st.updateRef(r.GitDir, refUpdate{name: name, old: ZeroHash, new: c, msg: "rejected write"}, st.Opts.Author)
		if errors.Is(err, ErrMoved) {
			continue // taken meanwhile
		}
		if err != nil {
			return "", ZeroHash, err
		}
		return name, c, nil
	}
}

// reject writes the commit of a rejected write: files on top of head. again is true, and
// nothing is written, when its tree is lastTree, that of the newest rejected write: the
// same bytes rejected again (a hook committing a broken file every minute) get no new ref.
func reject(w objectStore, files map[string][]byte, message string, head, lastTree Hash, author Signature, when time.Time) (Hash, bool, error) {
	blobs := make(map[string]Hash, len(files))
	objs := make([]*plumbing.MemoryObject, 0, len(files))
	for name, data := range files {
		o := blobObject(data)
		blobs[name] = o.Hash()
		objs = append(objs, o)
	}
	tree, err := treeObject(blobs)
	if err != nil {
		return ZeroHash, false, err
	}
	if lastTree != ZeroHash && tree.Hash() == lastTree {
		return ZeroHash, true, nil
	}
	for _, o := range append(objs, tree) {
		if _, err := w.put(o); err != nil {
			return ZeroHash, false, err
		}
	}
	var parents []Hash
	if head != ZeroHash {
		parents = []Hash{head}
	}
	sig := signature(author, when)
	c, err := commitObject(tree.Hash(), parents, sig, sig, message)
	if err != nil {
		return ZeroHash, false, err
	}
	h, err := w.put(c)
	if err == nil {
		err = w.sync()
	}
	return h, false, err
}

// Rejected lists the rejected writes, newest (highest n) first.
func (r *Repo) Rejected() ([]RefInfo, error) {
	refs, err := listRefs(r.GitDir, RejectedPrefix)
	if err != nil {
		return nil, err
	}
	out := make([]RefInfo, 0, len(refs))
	for name, h := range refs {
		n, _ := strconv.Atoi(strings.TrimPrefix(name, RejectedPrefix))
		out = append(out, RefInfo{Name: name, N: n, Hash: h})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].N > out[j].N })
	return out, nil
}

// RefInfo is a ref and its target.
type RefInfo struct {
	Name string
	N    int
	Hash Hash
}
