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
		_ = r.maybePack()
	}
	return p.Commit(), true, nil
}

// Prepared is a commit whose objects are written but which main does not point to yet:
// Apply makes it the new HEAD (work tree, ref, index), Undo takes an applied commit back.
// Two repositories updated together (a session and the knowledge repository) prepare both,
// then apply both, undoing the first if the second fails.
type Prepared struct {
	r       *Repo
	head    Hash
	commit  Hash
	tree    Hash
	files   map[string][]byte
	entries []treeEntry
	oldTree map[string]Hash
	message string
	work    WorkTreeUpdate
	undo    func()
	applied bool
	// Repaired are the files Apply brought back to the tree's bytes although the commit
	// did not change them (CommitRequest.Touch); Kept are files that hold, after the tree's
	// bytes, what an agent appended meanwhile (CommitRequest.Appendable).
	Repaired, Kept []string
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
	entries := make([]treeEntry, 0, len(req.Files))
	for name, data := range req.Files {
		entries = append(entries, treeEntry{name: name, hash: objectHash(plumbing.BlobObject, data)})
	}
	treeData := encodeTree(entries)
	treeHash := objectHash(plumbing.TreeObject, treeData)
	p := &Prepared{r: r, head: head, commit: head, files: req.Files, entries: entries, tree: treeHash,
		work: WorkTreeUpdate{Files: req.Files, Disk: req.Disk, Touch: req.Touch, Appendable: req.Appendable}}
	if head != ZeroHash {
		ht, files, err := r.headTree(head)
		if err != nil {
			return nil, err
		}
		p.oldTree, p.work.Old = files, files
		if ht == treeHash && !req.Force && len(parents) == 1 && parents[0] == head {
			return p, nil
		}
	}
	ow := newObjectWriter(r.GitDir, st.Opts.Fsync)
	for _, e := range entries {
		if p.oldTree[e.name] == e.hash {
			continue // unchanged: HEAD's blob, maybe packed, is this one
		}
		if _, err := ow.write(plumbing.BlobObject, req.Files[e.name]); err != nil {
			return nil, err
		}
	}
	if _, err := ow.write(plumbing.TreeObject, treeData); err != nil {
		return nil, err
	}
	when := req.When
	if when.IsZero() {
		when = st.Opts.Now()
	}
	msg := req.Message
	if msg == "" {
		msg = "checkpoint(" + req.Trigger + ")\n"
	}
	p.message = msg
	if p.commit, err = ow.write(plumbing.CommitObject, encodeCommit(treeHash, parents, st.Opts.Author, when, msg)); err != nil {
		return nil, err
	}
	if err := ow.flush(); err != nil {
		return nil, err
	}
	return p, nil
}

// Apply makes the prepared commit the new HEAD: the work tree first (a crash after it leaves
// the new bytes on disk, which the next `ckpt commit` records, rather than a HEAD that the
// disk contradicts), then the ref (compare-and-swap against the HEAD seen by Prepare), then
// the index. Only the files the commit changes (and those named in Touch) are written, each
// only while it holds the bytes the caller read (Disk). A commit with nothing to commit
// still repairs the Touch files.
func (p *Prepared) Apply() error {
	if p == nil || p.applied {
		return nil
	}
	r, st := p.r, p.r.store
	w, err := r.applyWorkTree(p.work)
	if err != nil {
		return err
	}
	p.Kept = w.kept
	if !p.Changed() {
		p.Repaired = w.written
		return nil
	}
	if err := st.updateRef(r.GitDir, refUpdate{name: MainRef, old: p.head, new: p.commit, msg: "commit: " + p.message}, st.Opts.Author); err != nil {
		w.undo()
		return err
	}
	p.undo, p.applied = w.undo, true
	files := make(map[string]Hash, len(p.entries))
	for _, e := range p.entries {
		files[e.name] = e.hash
	}
	r.known = knownHead{commit: p.commit, tree: p.tree, files: files}
	// The commit is durable from here on; the index is bookkeeping a later commit redoes.
	_ = st.writeIndex(r.GitDir, r.WorkDir, p.entries, p.onDisk(w))
	return nil
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
		return ok && objectHash(plumbing.BlobObject, b) == h
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

// Undo takes an applied commit back: main returns to the previous HEAD (only if it still
// points to this commit), and the work tree and index to their previous state. The commit
// object stays, unreferenced, as git would leave it.
func (p *Prepared) Undo() error {
	if !p.applied {
		return nil
	}
	r, st := p.r, p.r.store
	var err error
	if p.head == ZeroHash {
		err = st.deleteRef(r.GitDir, MainRef, p.commit)
	} else {
		err = st.updateRef(r.GitDir, refUpdate{name: MainRef, old: p.commit, new: p.head, msg: "undo: " + firstLine(p.message)}, st.Opts.Author)
	}
	if err != nil {
		return err
	}
	p.undo()
	p.applied = false
	if p.head != ZeroHash {
		old := make([]treeEntry, 0, len(p.oldTree))
		for name, h := range p.oldTree {
			old = append(old, treeEntry{name, h})
		}
		_ = st.writeIndex(r.GitDir, r.WorkDir, old, nil)
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
	entries := make([]treeEntry, 0, len(files))
	for name, data := range files {
		entries = append(entries, treeEntry{name, objectHash(plumbing.BlobObject, data)})
	}
	treeData := encodeTree(entries)
	// The same bytes rejected again (a hook committing a broken file every minute) are
	// the newest rejected write already: no new ref.
	if last, err := r.Rejected(); err == nil && len(last) > 0 {
		if t, err := r.reader().commitTree(last[0].Hash); err == nil && t == objectHash(plumbing.TreeObject, treeData) {
			return last[0].Name, last[0].Hash, nil
		}
	}
	ow := newObjectWriter(r.GitDir, st.Opts.Fsync)
	for _, e := range entries {
		if _, err := ow.write(plumbing.BlobObject, files[e.name]); err != nil {
			return "", ZeroHash, err
		}
	}
	treeHash, err := ow.write(plumbing.TreeObject, treeData)
	if err != nil {
		return "", ZeroHash, err
	}
	var parents []Hash
	if head != ZeroHash {
		parents = []Hash{head}
	}
	c, err := ow.write(plumbing.CommitObject, encodeCommit(treeHash, parents, st.Opts.Author, st.Opts.Now(), message))
	if err != nil {
		return "", ZeroHash, err
	}
	if err := ow.flush(); err != nil {
		return "", ZeroHash, err
	}
	refs, err := listRefs(r.GitDir, RejectedPrefix)
	if err != nil {
		return "", ZeroHash, err
	}
	n := 0
	for name := range refs {
		if k, err := strconv.Atoi(strings.TrimPrefix(name, RejectedPrefix)); err == nil && k > n {
			n = k
		}
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
