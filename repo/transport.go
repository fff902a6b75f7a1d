package repo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	gitcfg "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/ckpt-dev/ckpt/internal/hint"
)

// The transport repository (<home>/state/transport.git) is what travels: a bare repository
// whose refs/heads/sessions/<id> mirror every session's main and refs/heads/knowledge the
// knowledge repository's, so that one remote repository holds a whole store and one git
// push or fetch moves it. Objects are copied between it and the sessions in-process, so a
// thousand sessions cost one network round trip, not a thousand processes.

// SessionRefPrefix is where sessions live in the transport and remote repositories.
const SessionRefPrefix = "refs/heads/sessions/"

// KnowledgeRef is the knowledge repository's branch in the transport and remote.
const KnowledgeRef = "refs/heads/knowledge"

// ErrNoRemote is returned for a remote name the store does not know.
var ErrNoRemote = errors.New("no such remote")

// ErrRejectedPush means the remote refused a non-fast-forward update: someone pushed first.
var ErrRejectedPush = errors.New("push rejected: the remote has commits you do not have")

// TransportDir is the transport repository.
func (st *Store) TransportDir() string { return filepath.Join(st.StateDir(), "transport.git") }

// Transport opens (creating if needed) the transport repository.
func (st *Store) Transport() (*Repo, error) {
	dir := st.TransportDir()
	// The transport is a mirror of what the sessions hold: losing it to a power cut loses
	// nothing, so its writes are not fsynced one by one.
	quick := *st
	quick.Opts.Fsync = false
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); errors.Is(err, fs.ErrNotExist) {
		// Made before its lock is taken: two processes may make it at once (shared).
		spec := repoSpec{id: "transport", head: KnowledgeRef, bare: true, shared: true}
		if _, err := os.Stat(dir); err == nil {
			spec.inPlace = true // a directory an older ckpt began: completed where it is
		}
		if err := quick.makeRepo(dir, spec, nil); err != nil {
			return nil, err
		}
	}
	return &Repo{ID: "transport", Dir: dir, GitDir: dir, WorkDir: "", LockName: ".transport", store: &quick, keepPacksOpen: true}, nil
}

// remotes are kept in <home>/state/remotes.json: {"origin": "URL"}.
func (st *Store) remotesPath() string { return filepath.Join(st.StateDir(), "remotes.json") }

// Remotes returns the store's remotes, name -> URL.
func (st *Store) Remotes() (map[string]string, error) {
	out := map[string]string{}
	b, err := os.ReadFile(st.remotesPath())
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("%s: %w", st.remotesPath(), err)
	}
	return out, nil
}

// SetRemote adds or changes a remote ("" URL removes it).
func (st *Store) SetRemote(name, url string) error {
	rs, err := st.Remotes()
	if err != nil {
		return err
	}
	if url == "" {
		delete(rs, name)
	} else {
		rs[name], _, _ = StripCredentials(url) // git's credential helper keeps those
	}
	if err := os.MkdirAll(st.StateDir(), DirPerm); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(rs, "", "  ")
	if err := WriteFileAtomic(st.remotesPath(), append(b, '\n'), FilePerm, st.Opts.Fsync); err != nil {
		return err
	}
	// An older ckpt left it world-readable, with passwords in it: private from now on.
	return os.Chmod(st.remotesPath(), FilePerm&^umask())
}

// RemoteURL returns the URL of a remote, or ErrNoRemote.
func (st *Store) RemoteURL(name string) (string, error) {
	rs, err := st.Remotes()
	if err != nil {
		return "", err
	}
	u, ok := rs[name]
	if !ok {
		return "", hint.New(fmt.Errorf("%s: %w", name, ErrNoRemote), "ckpt remote add %s URL", name)
	}
	return u, nil
}

// has reports whether the repository holds object h.
func (r *Repo) has(h Hash) bool {
	return r.reader().storage.HasEncodedObject(h) == nil
}

// CopyHistory copies into dst every object of the history of head in src that dst lacks,
// walking back from head until it reaches commits dst already has, as one new pack (see
// Copier). It returns the number of objects copied.
func CopyHistory(src, dst *Repo, head Hash) (int, error) {
	c := NewCopier(dst)
	if err := c.Copy(src, head); err != nil {
		c.Abort()
		return 0, err
	}
	return c.Finish()
}

// Copier copies histories from any number of repositories into one new pack of dst: a push
// of a thousand sessions writes one pack into the transport, not a thousand. The pack is
// written by go-git's encoder, whose delta selection stores each version of a file (and
// each tree) as a delta against a similar one (writePack); each commit is stored as a delta
// against its first parent (sources.DeltaObject).
type Copier struct {
	dst  *Repo
	objs sources
	// trees are the trees and commits in the pack, which no tree entry may name as a file.
	trees map[Hash]bool
}

// NewCopier starts a pack in dst.
func NewCopier(dst *Repo) *Copier {
	return &Copier{dst: dst, objs: sources{from: map[Hash]storer.EncodedObjectStorer{}, base: map[Hash]Hash{}, depth: map[Hash]int{}}, trees: map[Hash]bool{}}
}

// Copy adds the history of head in src that dst lacks. Every commit and tree is checked
// on the way (treecheck.go) and every tree entry must be a blob: a refusal leaves dst as it
// was, once the caller aborts the pack.
func (cp *Copier) Copy(src *Repo, head Hash) error {
	dst, g := cp.dst, src.reader()
	have := func(h Hash) bool { return cp.objs.from[h] != nil || dst.has(h) }
	order, err := g.newHistory(head, have)
	if err != nil {
		return err
	}
	for _, c := range order {
		entries, err := g.checkedTree(c)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if cp.trees[e.hash] {
				return notBlob(c.hash, e, plumbing.TreeObject)
			}
			if have(e.hash) {
				continue
			}
			o, err := g.storage.EncodedObject(plumbing.AnyObject, e.hash)
			if err != nil {
				return fmt.Errorf("copy object %s: %w", short(e.hash), err)
			}
			if o.Type() != plumbing.BlobObject {
				return notBlob(c.hash, e, o.Type())
			}
			cp.objs.add(e.hash, g.storage)
		}
		if !have(c.tree) {
			cp.objs.add(c.tree, g.storage)
			cp.trees[c.tree] = true
		}
		if !have(c.hash) {
			first := ZeroHash
			if len(c.parents) > 0 {
				first = c.parents[0]
			}
			cp.objs.addCommit(c.hash, first, g.storage)
			cp.trees[c.hash] = true
		}
	}
	return nil
}

func notBlob(commit Hash, e rawEntry, typ plumbing.ObjectType) error {
	return &TreeError{Commit: commit, Entry: e.name, HasEntry: true, Problem: fmt.Sprintf("%s is a %s, not a blob", short(e.hash), typ)}
}

// Finish writes the pack and its index (nothing when no object was copied) and returns the
// number of objects copied.
func (cp *Copier) Finish() (int, error) {
	n := len(cp.objs.order)
	if _, err := cp.dst.writePack(&cp.objs, cp.objs.order); err != nil {
		return 0, fmt.Errorf("write pack in %s: %w", cp.dst.GitDir, err)
	}
	cp.dst.Reset()
	return n, nil
}

// Abort drops the pack being assembled: nothing was written yet.
func (cp *Copier) Abort() { cp.objs = sources{} }

// sources is the object storer go-git's pack encoder reads a Copier's objects from: each
// object from the repository it was found in.
type sources struct {
	from  map[Hash]storer.EncodedObjectStorer
	order []Hash
	// base is the commit each commit is stored as a delta against, depth the length of
	// its chain (see addCommit).
	base  map[Hash]Hash
	depth map[Hash]int
}

// maxDeltaDepth bounds a chain of commit deltas, as git's pack.depth (and go-git's delta
// selection) bound every chain: reading an object costs one step per link.
const maxDeltaDepth = 50

func (s *sources) add(h Hash, from storer.EncodedObjectStorer) {
	s.from[h] = from
	s.order = append(s.order, h)
}

// addCommit adds commit h, whose first parent is parent. go-git's delta selection tries
// deltas for blobs and trees only, but git also stores a commit as a delta against a similar
// one, which in a session's history (long messages that differ in a few words) is a third of
// a pack. So a commit whose first parent travels in the same pack, in a chain shorter than
// maxDeltaDepth, is offered to the encoder as a delta against it (DeltaObject).
func (s *sources) addCommit(h, parent Hash, from storer.EncodedObjectStorer) {
	s.add(h, from)
	if d, ok := s.depth[parent]; ok && parent != ZeroHash && d+1 < maxDeltaDepth {
		s.base[h], s.depth[h] = parent, d+1
		return
	}
	s.depth[h] = 0
}

func (s *sources) EncodedObject(t plumbing.ObjectType, h Hash) (plumbing.EncodedObject, error) {
	src, ok := s.from[h]
	if !ok {
		return nil, plumbing.ErrObjectNotFound
	}
	return src.EncodedObject(t, h)
}

// DeltaObject is how go-git's encoder asks for an object as it may be stored: a commit
// with a base (addCommit) as a delta made by go-git's packfile.GetDelta; any other object
// as its source holds it, so that a delta a source's pack holds already is reused when its
// base travels too.
func (s *sources) DeltaObject(t plumbing.ObjectType, h Hash) (plumbing.EncodedObject, error) {
	src, ok := s.from[h]
	if !ok {
		return nil, plumbing.ErrObjectNotFound
	}
	if base, ok := s.base[h]; ok {
		return s.commitDelta(h, base)
	}
	if d, ok := src.(storer.DeltaObjectStorer); ok {
		return d.DeltaObject(t, h)
	}
	return src.EncodedObject(t, h)
}

func (s *sources) commitDelta(h, base Hash) (plumbing.EncodedObject, error) {
	target, err := s.EncodedObject(plumbing.CommitObject, h)
	if err != nil {
		return nil, err
	}
	bo, err := s.EncodedObject(plumbing.CommitObject, base)
	if err != nil {
		return nil, err
	}
	d, err := packfile.GetDelta(bo, target)
	if err != nil {
		return nil, err
	}
	if d.Size() >= target.Size() {
		delete(s.base, h)
		return target, nil
	}
	return &deltaObject{EncodedObject: d, base: base, hash: h, size: target.Size()}, nil
}

// deltaObject is a delta as go-git's encoder takes one (plumbing.DeltaObject).
type deltaObject struct {
	plumbing.EncodedObject
	base, hash Hash
	size       int64
}

func (d *deltaObject) BaseHash() Hash    { return d.base }
func (d *deltaObject) ActualHash() Hash  { return d.hash }
func (d *deltaObject) ActualSize() int64 { return d.size }

func (s *sources) HasEncodedObject(h Hash) error {
	if _, ok := s.from[h]; !ok {
		return plumbing.ErrObjectNotFound
	}
	return nil
}

func (s *sources) EncodedObjectSize(h Hash) (int64, error) {
	src, ok := s.from[h]
	if !ok {
		return 0, plumbing.ErrObjectNotFound
	}
	return src.EncodedObjectSize(h)
}

var errReadOnly = errors.New("read-only object source")

func (s *sources) NewEncodedObject() plumbing.EncodedObject { return &plumbing.MemoryObject{} }
func (s *sources) SetEncodedObject(plumbing.EncodedObject) (Hash, error) {
	return ZeroHash, errReadOnly
}
func (s *sources) IterEncodedObjects(plumbing.ObjectType) (storer.EncodedObjectIter, error) {
	return nil, errReadOnly
}
func (s *sources) AddAlternate(string) error { return errReadOnly }

// FileHashes returns the blob ids of a commit's files, without reading them.
func (r *Repo) FileHashes(h Hash) (map[string]Hash, error) { return r.reader().fileHashes(h) }

func (g *gitReader) fileHashes(h Hash) (map[string]Hash, error) {
	t, err := g.commitTree(h)
	if err != nil {
		return nil, err
	}
	files, err := g.treeFiles(t)
	return files, withCommit(err, h)
}

// Blob reads one blob.
func (r *Repo) Blob(h Hash) ([]byte, error) { return r.reader().blob(h) }

// SetRef points name at h in the repository (ZeroHash deletes it), whatever it held.
func (r *Repo) SetRef(name string, h Hash) error {
	cur, err := readRef(r.GitDir, name)
	if err != nil {
		return err
	}
	if cur == h {
		return nil
	}
	if h == ZeroHash {
		return r.store.deleteRef(r.GitDir, name, cur)
	}
	return r.store.updateRef(r.GitDir, refUpdate{name: name, old: cur, new: h, msg: "ckpt transport"}, r.store.Opts.Author)
}

// Ref reads a ref (ZeroHash when absent).
func (r *Repo) Ref(name string) (Hash, error) { return readRef(r.GitDir, name) }

// Refs lists the refs under prefix.
func (r *Repo) Refs(prefix string) (map[string]Hash, error) { return listRefs(r.GitDir, prefix) }

// IsAncestor reports whether a is an ancestor of b (or equal).
func (r *Repo) IsAncestor(a, b Hash) (bool, error) { return r.reader().isAncestor(a, b) }

func (g *gitReader) isAncestor(a, b Hash) (bool, error) {
	if a == b {
		return true, nil
	}
	seen := map[Hash]bool{}
	stack := []Hash{b}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if h == a {
			return true, nil
		}
		if seen[h] {
			continue
		}
		seen[h] = true
		c, err := g.commit(h)
		if err != nil {
			return false, err
		}
		stack = append(stack, c.ParentHashes...)
	}
	return false, nil
}

// MergeBase returns the best common ancestor of a and b (ZeroHash when none).
func (r *Repo) MergeBase(a, b Hash) (Hash, error) { return r.reader().mergeBase(a, b) }

func (g *gitReader) mergeBase(a, b Hash) (Hash, error) {
	ca, err := g.commit(a)
	if err != nil {
		return ZeroHash, err
	}
	cb, err := g.commit(b)
	if err != nil {
		return ZeroHash, err
	}
	bases, err := ca.MergeBase(cb)
	if err != nil {
		return ZeroHash, fmt.Errorf("merge base of %s and %s: %w", short(a), short(b), err)
	}
	if len(bases) == 0 {
		return ZeroHash, nil
	}
	return bases[0].Hash, nil
}

// Checkout points main at h (which the repository holds) and writes the files it changes
// to the work tree and index: a fast-forward. old is the HEAD this replaces
// (compare-and-swap); when it is h, main stays and only the work tree and index are
// written. disk, when not nil, is the work tree as the caller read it, and a file that
// changed since is not overwritten (ErrWorkTreeChanged).
func (r *Repo) Checkout(old, h Hash, disk map[string][]byte) error {
	files, err := r.Files(h)
	if err != nil {
		return err
	}
	var oldTree map[string]Hash
	if old != ZeroHash {
		t, err := r.reader().commitTree(old)
		if err != nil {
			return err
		}
		if oldTree, err = r.reader().treeFiles(t); err != nil {
			return withCommit(err, old)
		}
	}
	w, err := r.applyWorkTree(WorkTreeUpdate{Files: files, Old: oldTree, Disk: disk})
	if err != nil {
		return err
	}
	if old == h {
		// Only the work tree and the index are brought back to h (main is there already).
	} else if err := r.store.updateRef(r.GitDir, refUpdate{name: MainRef, old: old, new: h, msg: "fast-forward"}, r.store.Opts.Author); err != nil {
		w.undo()
		return err
	}
	hashes := make(map[string]Hash, len(files))
	for name, data := range files {
		hashes[name] = BlobHash(data)
	}
	p := &Prepared{work: WorkTreeUpdate{Disk: disk}}
	_ = r.store.writeIndex(r.GitDir, r.WorkDir, hashes, p.onDisk(w))
	return nil
}

// Materialize creates session id from commit h of src (the transport repository after a
// fetch): a new repository with that history, its files checked out.
func (st *Store) Materialize(id SessionID, src *Repo, h Hash, config map[string]string) (*Repo, error) {
	dir := st.SessionDir(id)
	if _, err := os.Stat(dir); err == nil {
		return nil, fmt.Errorf("%s: %w", dir, ErrExists)
	}
	return st.materialize(dir, string(id), string(id), src, h, config)
}

// MaterializeKnowledge creates the knowledge repository from commit h of src.
func (st *Store) MaterializeKnowledge(src *Repo, h Hash) (*Repo, error) {
	return st.materialize(st.KnowledgeDir(), "knowledge", KnowledgeLock, src, h, nil)
}

func (st *Store) materialize(dir, id, lockName string, src *Repo, h Hash, config map[string]string) (*Repo, error) {
	err := st.makeRepo(dir, repoSpec{id: id, head: MainRef, ckpt: config}, func(r *Repo) error {
		r.LockName = lockName
		if _, err := CopyHistory(src, r, h); err != nil {
			return err
		}
		return r.Checkout(ZeroHash, h, nil)
	})
	if err != nil {
		return nil, err
	}
	return st.openDir(dir, id)
}

// MergeHead is the commit a pending merge brings in (MERGE_HEAD), or ZeroHash.
func (r *Repo) MergeHead() (Hash, error) {
	b, err := os.ReadFile(filepath.Join(r.GitDir, "MERGE_HEAD"))
	if errors.Is(err, fs.ErrNotExist) {
		return ZeroHash, nil
	}
	if err != nil {
		return ZeroHash, err
	}
	s := strings.TrimSpace(string(b))
	if !plumbing.IsHash(s) {
		return ZeroHash, fmt.Errorf("%s: malformed MERGE_HEAD", r.GitDir)
	}
	return plumbing.NewHash(s), nil
}

// MergeMessage is the message recorded with a pending merge (MERGE_MSG), "" when none.
func (r *Repo) MergeMessage() string {
	b, err := os.ReadFile(filepath.Join(r.GitDir, "MERGE_MSG"))
	if err != nil {
		return ""
	}
	return string(b)
}

// SetMergeHead records (or, with ZeroHash, clears) a pending merge, as git does, so that
// `git status` says a merge is in progress and the next commit gets both parents.
func (r *Repo) SetMergeHead(h Hash, msg string) error {
	p := filepath.Join(r.GitDir, "MERGE_HEAD")
	if h == ZeroHash {
		_ = os.Remove(filepath.Join(r.GitDir, "MERGE_MSG"))
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := WriteFileAtomic(filepath.Join(r.GitDir, "MERGE_MSG"), []byte(msg), FilePerm, r.store.Opts.Fsync); err != nil {
		return err
	}
	return WriteFileAtomic(p, []byte(h.String()+"\n"), FilePerm, r.store.Opts.Fsync)
}

// WriteWorkFiles writes into the work tree, without committing, the files that differ
// between old and files (a merge left with conflicts), each only while it holds the bytes
// of disk, the work tree as the caller read it (else ErrWorkTreeChanged, nothing written).
func (r *Repo) WriteWorkFiles(files, old, disk map[string][]byte) error {
	for name := range files {
		if err := ValidFileName(name); err != nil {
			return err
		}
	}
	oldTree := make(map[string]Hash, len(old))
	for name, b := range old {
		oldTree[name] = BlobHash(b)
	}
	_, err := r.applyWorkTree(WorkTreeUpdate{Files: files, Old: oldTree, Disk: disk})
	return err
}

// GitNetwork moves refs between the transport repository and a remote URL: the system git
// when it is installed (credential helpers, ~/.ssh/config and known_hosts work as users
// expect), else go-git's own transport.
type GitNetwork struct {
	// Git is the git binary; "" uses go-git.
	Git string
	// Progress receives git's progress output (a terminal), or nil for quiet.
	Progress io.Writer
}

// NewGitNetwork chooses the network: mode "system", "go-git" or "auto" (system git when on
// PATH).
func NewGitNetwork(mode string, progress io.Writer) (*GitNetwork, error) {
	n := &GitNetwork{Progress: progress}
	switch mode {
	case "", "auto":
		if p, err := exec.LookPath("git"); err == nil {
			n.Git = p
		}
	case "system":
		p, err := exec.LookPath("git")
		if err != nil {
			return nil, errors.New("remote.git = \"system\" but no git on PATH")
		}
		n.Git = p
	case "go-git":
	default:
		return nil, fmt.Errorf("remote.git = %q: want auto, system or go-git", mode)
	}
	return n, nil
}

// clearStaleLocks removes the `.lock` files a git process killed in the transport
// repository left behind (on its refs, packed-refs, HEAD, config, shallow), which would
// make every later fetch or push fail. The caller holds the transport's flock, so no other
// ckpt works there; a git child of a killed ckpt may still hold a lock for milliseconds,
// so a lock younger than staleLockAge is waited for until it goes or grows stale.
func clearStaleLocks(gitDir string) {
	deadline := time.Now().Add(staleLockAge + time.Second)
	for {
		young := false
		check := func(p string) {
			fi, err := os.Stat(p)
			switch {
			case err != nil:
			case time.Since(fi.ModTime()) > staleLockAge:
				_ = os.Remove(p)
			default:
				young = true
			}
		}
		for _, name := range []string{"packed-refs.lock", "HEAD.lock", "config.lock", "shallow.lock"} {
			check(filepath.Join(gitDir, name))
		}
		_ = filepath.WalkDir(filepath.Join(gitDir, "refs"), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".lock") {
				check(p)
			}
			return nil
		})
		if !young || time.Now().After(deadline) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Fetch brings the remote's refs matching refspecs into the transport repository.
func (n *GitNetwork) Fetch(t *Repo, url string, refspecs []string) error {
	clearStaleLocks(t.GitDir)
	if n.Git != "" {
		args := append([]string{"fetch", "--no-tags", "--prune", url}, refspecs...)
		err := n.run(t, args)
		if err != nil && strings.Contains(err.Error(), "cannot lock ref") {
			// A git left running by a killed ckpt moved a ref under this one: once it is
			// done, the fetch goes through.
			clearStaleLocks(t.GitDir)
			err = n.run(t, args)
		}
		return err
	}
	specs := make([]gitcfg.RefSpec, len(refspecs))
	for i, s := range refspecs {
		specs[i] = gitcfg.RefSpec(s)
	}
	rem := git.NewRemote(t.reader().storage, &gitcfg.RemoteConfig{Name: "ckpt", URLs: []string{url}})
	err := rem.Fetch(&git.FetchOptions{RemoteName: "ckpt", RefSpecs: specs, Tags: git.NoTags, Prune: true, Progress: n.Progress})
	if errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil
	}
	if err != nil && strings.Contains(err.Error(), "couldn't find remote ref") {
		return nil // an empty remote
	}
	if err != nil && strings.Contains(err.Error(), "remote repository is empty") {
		return nil
	}
	t.Reset()
	return err
}

// Push sends refspecs from the transport repository to the remote.
func (n *GitNetwork) Push(t *Repo, url string, refspecs []string) error {
	if len(refspecs) == 0 {
		return nil
	}
	clearStaleLocks(t.GitDir)
	if n.Git != "" {
		err := n.run(t, append([]string{"push", "--porcelain", url}, refspecs...))
		if err != nil && (strings.Contains(err.Error(), "[rejected]") || strings.Contains(err.Error(), "non-fast-forward") || strings.Contains(err.Error(), "fetch first")) {
			return hint.New(ErrRejectedPush, "ckpt pull first, then push again")
		}
		return err
	}
	specs := make([]gitcfg.RefSpec, len(refspecs))
	for i, s := range refspecs {
		specs[i] = gitcfg.RefSpec(s)
	}
	rem := git.NewRemote(t.reader().storage, &gitcfg.RemoteConfig{Name: "ckpt", URLs: []string{url}})
	err := rem.Push(&git.PushOptions{RemoteName: "ckpt", RefSpecs: specs, Progress: n.Progress})
	if errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil
	}
	if err != nil && strings.Contains(err.Error(), "non-fast-forward") {
		return hint.New(ErrRejectedPush, "ckpt pull first, then push again")
	}
	return err
}

func (n *GitNetwork) run(t *Repo, args []string) error {
	full := append([]string{"--git-dir=" + t.GitDir}, args...)
	if n.Progress == nil && (args[0] == "fetch" || args[0] == "push") {
		full = append(full[:2], append([]string{"--quiet"}, full[2:]...)...)
	}
	cmd := exec.Command(n.Git, full...)
	var out bytes.Buffer
	cmd.Stdout = &out
	if n.Progress != nil {
		cmd.Stderr = io.MultiWriter(&out, n.Progress)
	} else {
		cmd.Stderr = &out
	}
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	cmd.SysProcAttr = gitProcAttr()
	// Pdeathsig follows the thread that started the child: keep it alive until git ends.
	runtime.LockOSThread()
	err := cmd.Run()
	runtime.UnlockOSThread()
	t.Reset()
	if err != nil {
		return fmt.Errorf("git %s: %s", args[0], strings.TrimSpace(out.String()))
	}
	return nil
}

// SyncFS makes everything written under the store durable with one syncfs call: a clone
// writes thousands of objects unsynced, then syncs once.
func (st *Store) SyncFS() error { return syncFS(st.Home) }

// Quick returns a copy of the store whose writes are not fsynced one by one; the caller
// makes them durable with SyncFS.
func (st *Store) Quick() *Store {
	q := *st
	q.Opts.Fsync = false
	return &q
}
