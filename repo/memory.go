package repo

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/memory"
)

// Memory is a repository held in go-git's memory storage, for the unit tests of the layers
// above: the same object encoding (objects.go), commit rules (prepare, reject) and history
// reading (gitReader) as a *Repo, with refs compared and swapped in memory. It has no work
// tree, index, reflog or lock file: CommitRequest's Disk, Touch and Appendable are ignored,
// and WithWriteLock serialises the goroutines that share one Memory.
type Memory struct {
	lock   sync.RWMutex // WithWriteLock, WithReadLock
	refs   sync.Mutex   // compare-and-swap of refs
	g      *gitReader
	author Signature
	now    func() time.Time
}

// NewMemory returns an empty repository whose commits are signed by author at the time now
// gives.
func NewMemory(author Signature, now func() time.Time) *Memory {
	s := memory.NewStorage()
	if err := s.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, MainRef)); err != nil {
		panic(err) // an empty memory storage always takes a HEAD
	}
	return &Memory{g: &gitReader{storage: s}, author: author, now: now}
}

func (m *Memory) objects() objectStore { return objectStore{s: m.g.storage} }

// Head returns the commit main points to (ZeroHash before the first commit).
func (m *Memory) Head() (Hash, error) { return m.Ref(MainRef) }

// Resolve turns a revision into a commit, as (*Repo).Resolve.
func (m *Memory) Resolve(rev string) (Hash, error) { return m.g.resolve(rev, m.Head, m.Ref) }

// Log walks first parents from start, newest first, as (*Repo).Log.
func (m *Memory) Log(start Hash, fn func(CommitInfo) bool) error { return m.g.log(start, fn) }

// CommitInfo returns one commit.
func (m *Memory) CommitInfo(h Hash) (CommitInfo, error) {
	c, err := m.g.commit(h)
	if err != nil {
		return CommitInfo{}, err
	}
	return infoOf(c), nil
}

// Files returns every file of a commit's tree.
func (m *Memory) Files(h Hash) (map[string][]byte, error) {
	ents, err := m.g.fileHashes(h)
	if err != nil {
		return nil, err
	}
	return m.g.blobs(h, ents)
}

// ReadFile returns one file of a commit, or ErrNoFile.
func (m *Memory) ReadFile(h Hash, name string) ([]byte, error) { return m.g.readFile(h, name) }

// FileHashes returns the blob ids of a commit's files.
func (m *Memory) FileHashes(h Hash) (map[string]Hash, error) { return m.g.fileHashes(h) }

// Blob reads one blob.
func (m *Memory) Blob(h Hash) ([]byte, error) { return m.g.blob(h) }

// IsAncestor reports whether a is an ancestor of b (or equal).
func (m *Memory) IsAncestor(a, b Hash) (bool, error) { return m.g.isAncestor(a, b) }

// MergeBase returns the best common ancestor of a and b (ZeroHash when none).
func (m *Memory) MergeBase(a, b Hash) (Hash, error) { return m.g.mergeBase(a, b) }

// Prepare writes the objects of req's commit without moving main.
func (m *Memory) Prepare(req CommitRequest) (*Prepared, error) {
	for name := range req.Files {
		if err := ValidFileName(name); err != nil {
			return nil, err
		}
	}
	head, err := m.Head()
	if err != nil {
		return nil, err
	}
	for _, p := range req.Parents {
		if _, err := m.g.storage.EncodedObject(plumbing.CommitObject, p); err != nil {
			return nil, fmt.Errorf("memory: %w: %s is not a commit this repository holds; nothing committed", ErrMissingParent, p)
		}
	}
	var ht Hash
	var old map[string]Hash
	if head != ZeroHash {
		if ht, err = m.g.commitTree(head); err != nil {
			return nil, err
		}
		if old, err = m.g.treeFiles(ht); err != nil {
			return nil, err
		}
	}
	p, err := prepare(m.objects(), req, head, old, ht, m.author, m.now)
	if err != nil {
		return nil, err
	}
	p.to = m
	return p, nil
}

func (m *Memory) apply(p *Prepared) error {
	if !p.Changed() {
		return nil
	}
	if err := m.swapRef(MainRef, p.head, p.commit); err != nil {
		return err
	}
	p.applied = true
	return nil
}

func (m *Memory) undo(p *Prepared) error {
	if err := m.swapRef(MainRef, p.commit, p.head); err != nil {
		return err
	}
	p.applied = false
	return nil
}

// Commit writes req as a new commit on main: the new commit and true, or HEAD and false
// when the files equal HEAD's.
func (m *Memory) Commit(req CommitRequest) (Hash, bool, error) {
	p, err := m.Prepare(req)
	if err != nil {
		return ZeroHash, false, err
	}
	if err := p.Apply(); err != nil {
		return ZeroHash, false, err
	}
	return p.Commit(), p.Changed(), nil
}

// Reject keeps a rejected write under refs/ckpt/rejected/<n>, as (*Repo).Reject.
func (m *Memory) Reject(files map[string][]byte, message string) (string, Hash, error) {
	head, err := m.Head()
	if err != nil {
		return "", ZeroHash, err
	}
	last, err := m.Rejected()
	if err != nil {
		return "", ZeroHash, err
	}
	var lastTree Hash
	if len(last) > 0 {
		lastTree, _ = m.g.commitTree(last[0].Hash)
	}
	c, again, err := reject(m.objects(), files, message, head, lastTree, m.author, m.now())
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
		if err := m.swapRef(name, ZeroHash, c); errors.Is(err, ErrMoved) {
			continue
		} else if err != nil {
			return "", ZeroHash, err
		}
		return name, c, nil
	}
}

// Rejected lists the rejected writes, newest first.
func (m *Memory) Rejected() ([]RefInfo, error) {
	refs, err := m.Refs(RejectedPrefix)
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

// Ref reads a ref (ZeroHash when absent).
func (m *Memory) Ref(name string) (Hash, error) {
	ref, err := m.g.storage.Reference(plumbing.ReferenceName(name))
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return ZeroHash, nil
	}
	if err != nil {
		return ZeroHash, err
	}
	return ref.Hash(), nil
}

// Refs lists the refs under prefix.
func (m *Memory) Refs(prefix string) (map[string]Hash, error) {
	iter, err := m.g.storage.IterReferences()
	if err != nil {
		return nil, err
	}
	out := map[string]Hash{}
	err = iter.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() == plumbing.HashReference && strings.HasPrefix(ref.Name().String(), prefix) {
			out[ref.Name().String()] = ref.Hash()
		}
		return nil
	})
	return out, err
}

// SetRef points name at h (ZeroHash deletes it), whatever it held.
func (m *Memory) SetRef(name string, h Hash) error {
	m.refs.Lock()
	defer m.refs.Unlock()
	if h == ZeroHash {
		return m.g.storage.RemoveReference(plumbing.ReferenceName(name))
	}
	return m.g.storage.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(name), h))
}

// swapRef moves name from old (ZeroHash: absent) to new (ZeroHash: deleted), or fails with
// ErrMoved: the compare-and-swap refs.go makes on disk.
func (m *Memory) swapRef(name string, old, new Hash) error {
	m.refs.Lock()
	defer m.refs.Unlock()
	cur, err := m.Ref(name)
	if err != nil {
		return err
	}
	if cur != old {
		return fmt.Errorf("update %s: %w (expected %s, found %s)", name, ErrMoved, short(old), short(cur))
	}
	if new == ZeroHash {
		return m.g.storage.RemoveReference(plumbing.ReferenceName(name))
	}
	return m.g.storage.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(name), new))
}

// WithWriteLock runs fn holding the repository's exclusive lock.
func (m *Memory) WithWriteLock(fn func() error) error {
	m.lock.Lock()
	defer m.lock.Unlock()
	return fn()
}

// WithReadLock runs fn holding the repository's shared lock.
func (m *Memory) WithReadLock(fn func() error) error {
	m.lock.RLock()
	defer m.lock.RUnlock()
	return fn()
}
