package repo

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
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
}

// Commit writes req as a new commit on main and updates the work tree and index. It returns
// the new commit and true, or HEAD and false when the files equal HEAD's (nothing to commit).
// The caller holds the repository's exclusive lock.
func (r *Repo) Commit(req CommitRequest) (Hash, bool, error) {
	return r.commit(req, true)
}

func (r *Repo) commit(req CommitRequest, maybePack bool) (Hash, bool, error) {
	st := r.store
	for name := range req.Files {
		if err := ValidFileName(name); err != nil {
			return ZeroHash, false, err
		}
	}
	head, err := readRef(r.GitDir, MainRef)
	if err != nil {
		return ZeroHash, false, err
	}
	parents := req.Parents
	if parents == nil && head != ZeroHash {
		parents = []Hash{head}
	}
	entries := make([]treeEntry, 0, len(req.Files))
	for name, data := range req.Files {
		entries = append(entries, treeEntry{name: name, hash: objectHash(plumbing.BlobObject, data)})
	}
	treeData := encodeTree(entries)
	treeHash := objectHash(plumbing.TreeObject, treeData)

	var oldTree map[string]Hash
	if head != ZeroHash {
		ht, err := r.reader().commitTree(head)
		if err != nil {
			return ZeroHash, false, err
		}
		if ht == treeHash && !req.Force && len(parents) == 1 && parents[0] == head {
			return head, false, nil
		}
		oldTree, err = r.reader().treeFiles(ht)
		if err != nil {
			return ZeroHash, false, err
		}
	}

	// The work tree first: a crash after this point leaves the new bytes on disk, which the
	// next `ckpt commit` records, rather than a HEAD that the disk contradicts.
	restore, err := r.writeWorkTree(req.Files, oldTree)
	if err != nil {
		return ZeroHash, false, err
	}
	fail := func(err error) (Hash, bool, error) {
		restore()
		return ZeroHash, false, err
	}

	ow := newObjectWriter(r.GitDir, st.Opts.Fsync)
	for _, e := range entries {
		if _, err := ow.write(plumbing.BlobObject, req.Files[e.name]); err != nil {
			return fail(err)
		}
	}
	if _, err := ow.write(plumbing.TreeObject, treeData); err != nil {
		return fail(err)
	}
	when := req.When
	if when.IsZero() {
		when = st.Opts.Now()
	}
	msg := req.Message
	if msg == "" {
		msg = "checkpoint(" + req.Trigger + ")\n"
	}
	commitHash, err := ow.write(plumbing.CommitObject, encodeCommit(treeHash, parents, st.Opts.Author, when, msg))
	if err != nil {
		return fail(err)
	}
	if err := ow.flush(); err != nil {
		return fail(err)
	}
	if err := st.updateRef(r.GitDir, refUpdate{name: MainRef, old: head, new: commitHash, msg: "commit: " + msg}, st.Opts.Author); err != nil {
		return fail(err)
	}
	// The commit is durable from here on; what follows is bookkeeping a later commit redoes.
	_ = st.writeIndex(r.GitDir, r.WorkDir, entries)
	if maybePack {
		_ = r.maybePack()
	}
	return commitHash, true, nil
}

// writeWorkTree writes the files that differ from the disk and removes versioned files that
// the new tree drops. It returns a function that puts the old bytes back, for a commit that
// fails after this point.
func (r *Repo) writeWorkTree(files map[string][]byte, oldTree map[string]Hash) (func(), error) {
	type saved struct {
		data   []byte
		exists bool
	}
	undo := map[string]saved{}
	restore := func() {
		for name, s := range undo {
			p := filepath.Join(r.WorkDir, name)
			if s.exists {
				_ = WriteFileAtomic(p, s.data, 0o644, r.store.Opts.Fsync)
			} else {
				_ = os.Remove(p)
			}
		}
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := filepath.Join(r.WorkDir, name)
		cur, err := os.ReadFile(p)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			restore()
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		if exists && bytes.Equal(cur, files[name]) {
			continue
		}
		undo[name] = saved{cur, exists}
		if err := WriteFileAtomic(p, files[name], 0o644, r.store.Opts.Fsync); err != nil {
			restore()
			return nil, fmt.Errorf("write %s: %w", p, err)
		}
	}
	for name := range oldTree {
		if _, keep := files[name]; keep {
			continue
		}
		p := filepath.Join(r.WorkDir, name)
		cur, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		undo[name] = saved{cur, true}
		if err := os.Remove(p); err != nil {
			restore()
			return nil, fmt.Errorf("remove %s: %w", p, err)
		}
	}
	return restore, nil
}

// Head returns the commit main points to (ZeroHash before the first commit).
func (r *Repo) Head() (Hash, error) { return readRef(r.GitDir, MainRef) }

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
	ow := newObjectWriter(r.GitDir, st.Opts.Fsync)
	for name, data := range files {
		h, err := ow.write(plumbing.BlobObject, data)
		if err != nil {
			return "", ZeroHash, err
		}
		entries = append(entries, treeEntry{name, h})
	}
	treeData := encodeTree(entries)
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
