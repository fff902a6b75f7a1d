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

	"github.com/go-git/go-git/v5/plumbing"

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
	return &Repo{ID: "transport", Dir: dir, GitDir: dir, WorkDir: "", LockName: ".transport", store: &quick, keepPacksOpen: true, mirror: true}, nil
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
// of a thousand sessions writes one pack into the transport, not a thousand. An object a
// source holds in a pack is copied as it is stored there (packWriter.copyEntry): its
// compressed bytes, and its delta when the delta's base travels in the same pack. Any
// other object (loose, or a delta against an object that does not travel) is stored as a
// delta against the same file's version in the first parent (the parent's tree, the
// parent commit) when that travels too and the delta is small, else whole; chains stay
// under maxPackDepth. The pack never names a base outside itself.
type Copier struct {
	dst *Repo
	pw  *packWriter // started by the first object copied
	// trees are the trees and commits in the pack, which no tree entry may name as a file.
	trees map[Hash]bool
	depth map[Hash]int  // delta chain length of each object written
	busy  map[Hash]bool // objects emit is writing, waiting for their bases
	loose map[Hash]bool // dst's loose objects (has)
}

// NewCopier starts a pack in dst.
func NewCopier(dst *Repo) *Copier {
	return &Copier{dst: dst, trees: map[Hash]bool{}, depth: map[Hash]int{}, busy: map[Hash]bool{}}
}

// copied reports whether the pack being written holds h.
func (cp *Copier) copied(h Hash) bool { return cp.pw != nil && cp.pw.has(h) }

// has reports whether dst holds h, or the pack being written does. dst's loose objects
// are listed once (the caller holds dst's lock: nobody else adds or packs any meanwhile).
func (cp *Copier) has(h Hash) bool {
	if cp.copied(h) {
		return true
	}
	objs := cp.dst.reader().objs
	if cp.loose == nil {
		cp.loose = objs.looseSet()
	}
	return cp.loose[h] || objs.hasPacked(h)
}

// Copy adds the history of head in src that dst lacks. Every commit and tree is checked
// on the way (treecheck.go) and every tree entry must be a blob, before any object of it is
// written: a refusal leaves dst as it was, once the caller aborts the pack.
func (cp *Copier) Copy(src *Repo, head Hash) error {
	g := src.reader()
	have := cp.has
	order, err := g.newHistory(head, have)
	if err != nil {
		return err
	}
	// What travels, in order (parents before children), each with the object it may be
	// a delta of: its version in the first parent.
	var send []Hash
	hint := map[Hash]Hash{}
	add := func(h, like Hash) {
		if _, ok := hint[h]; ok || have(h) {
			return
		}
		hint[h] = like
		send = append(send, h)
	}
	files := map[Hash]map[string]Hash{} // commit -> its files, for its children's hints
	for _, c := range order {
		entries, err := g.checkedTree(c)
		if err != nil {
			return err
		}
		var parentTree Hash
		var parentFiles map[string]Hash
		if len(c.parents) > 0 {
			if pf, ok := files[c.parents[0]]; ok {
				parentFiles = pf
				parentTree = files[c.parents[0]][""]
			} else if pc, err := g.commitObject(c.parents[0], c.hash); err == nil {
				parentTree = pc.tree
				if pe, err := g.tree(pc.tree); err == nil {
					parentFiles = map[string]Hash{}
					for _, e := range pe {
						parentFiles[e.name] = e.hash
					}
				}
			}
		}
		mine := make(map[string]Hash, len(entries)+1)
		mine[""] = c.tree
		for _, e := range entries {
			mine[e.name] = e.hash
			if cp.trees[e.hash] {
				return notBlob(c.hash, e, plumbing.TreeObject)
			}
			if _, ok := hint[e.hash]; ok || have(e.hash) {
				continue
			}
			typ, _, err := g.objs.info(e.hash)
			if err != nil {
				return fmt.Errorf("copy object %s: %w", short(e.hash), err)
			}
			if typ != plumbing.BlobObject {
				return notBlob(c.hash, e, typ)
			}
			add(e.hash, parentFiles[e.name])
		}
		files[c.hash] = mine
		if !have(c.tree) {
			cp.trees[c.tree] = true
		}
		add(c.tree, parentTree)
		if !have(c.hash) {
			cp.trees[c.hash] = true
		}
		first := ZeroHash
		if len(c.parents) > 0 {
			first = c.parents[0]
		}
		add(c.hash, first)
	}
	if len(send) == 0 {
		return nil
	}
	if cp.pw == nil {
		if cp.pw, err = cp.dst.newPackWriter(-1); err != nil {
			return err
		}
	}
	travels := func(h Hash) bool { _, ok := hint[h]; return ok && h != ZeroHash }
	for _, h := range send {
		if err := cp.emit(g.objs, h, hint, travels, 0); err != nil {
			return err
		}
	}
	return nil
}

// emit writes object h of src into the pack, after the base it is to be a delta of. A base
// that is itself waiting for h (an older version stored as a delta of a newer one, whose
// hint is the older) is not waited for: h is then stored another way.
func (cp *Copier) emit(src *objectReader, h Hash, hint map[Hash]Hash, travels func(Hash) bool, level int) error {
	if cp.copied(h) {
		return nil
	}
	if level > maxDeltaChain {
		return fmt.Errorf("copy object %s: %w: delta chain too long", short(h), errCorruptPack)
	}
	cp.busy[h] = true
	defer delete(cp.busy, h)
	waits := func(b Hash) bool { return !cp.busy[b] && travels(b) }
	pw := cp.pw
	if p, off, ok := src.locate(h); ok {
		e, err := p.header(off)
		if err != nil {
			return err
		}
		base, isDelta := p.baseOf(e)
		if !isDelta {
			cp.depth[h] = 0
			return pw.copyEntry(h, p, off, ZeroHash)
		}
		if !cp.copied(base) && waits(base) {
			if err := cp.emit(src, base, hint, travels, level+1); err != nil {
				return err
			}
		}
		if cp.copied(base) {
			cp.depth[h] = cp.depth[base] + 1
			return pw.copyEntry(h, p, off, base)
		}
	}
	typ, data, err := src.read(h)
	if err != nil {
		return fmt.Errorf("copy object %s: %w", short(h), err)
	}
	if like := hint[h]; like != ZeroHash && like != h && waits(like) {
		if !cp.copied(like) {
			if err := cp.emit(src, like, hint, travels, level+1); err != nil {
				return err
			}
		}
		if d := cp.depth[like] + 1; cp.copied(like) && d <= maxPackDepth {
			if _, old, err := src.read(like); err == nil {
				if delta := diffDelta(old, data); len(delta) < len(data)*3/4 {
					cp.depth[h] = d
					return pw.writeDelta(h, like, delta)
				}
			}
		}
	}
	cp.depth[h] = 0
	return pw.writeWhole(h, typ, data)
}

func notBlob(commit Hash, e rawEntry, typ plumbing.ObjectType) error {
	return &TreeError{Commit: commit, Entry: e.name, HasEntry: true, Problem: fmt.Sprintf("%s is a %s, not a blob", short(e.hash), typ)}
}

// Finish completes the pack and its index (nothing when no object was copied) and returns
// the number of objects copied.
func (cp *Copier) Finish() (int, error) {
	if cp.pw == nil {
		return 0, nil
	}
	n := int(cp.pw.n)
	_, err := cp.pw.finish()
	cp.pw = nil
	if err != nil {
		return 0, fmt.Errorf("write pack in %s: %w", cp.dst.GitDir, err)
	}
	cp.dst.Reset()
	return n, nil
}

// Abort drops the pack being assembled.
func (cp *Copier) Abort() {
	if cp.pw != nil {
		cp.pw.abort()
		cp.pw = nil
	}
}

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

// CommitFiles is what the secret scan of a push needs of a commit.
type CommitFiles struct {
	Parents []Hash
	Message string
	Files   map[string]Hash // the blob ids of its files
}

// CommitFiles reads commit h and its tree, both parsed and checked as a copy checks them
// (treecheck.go), without go-git's commit decoder: a push scans thousands.
func (r *Repo) CommitFiles(h Hash) (CommitFiles, error) {
	g := r.reader()
	typ, data, err := g.rawObject(h)
	switch {
	case errors.Is(err, plumbing.ErrObjectNotFound):
		return CommitFiles{}, fmt.Errorf("commit %s: %w", short(h), ErrBadRevision)
	case err != nil:
		return CommitFiles{}, fmt.Errorf("read commit %s: %w", short(h), err)
	case typ != plumbing.CommitObject:
		return CommitFiles{}, &TreeError{Commit: h, Object: h, Problem: fmt.Sprintf("%s is a %s, not a commit", short(h), typ)}
	}
	c, terr := parseCommit(h, data)
	if terr != nil {
		return CommitFiles{}, terr
	}
	out := CommitFiles{Parents: c.parents}
	if i := bytes.Index(data, []byte("\n\n")); i >= 0 {
		out.Message = string(data[i+2:])
	}
	out.Files, err = g.treeFiles(c.tree)
	return out, withCommit(err, h)
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
	return r.store.updateRef(r.GitDir, refUpdate{name: name, old: cur, new: h, msg: "ckpt transport", logExisting: r.mirror}, r.store.Opts.Author)
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
	if n.Git == "" && !goGitBuilt {
		return nil, ErrGoGitElsewhere
	}
	return n, nil
}

// ErrGoGitElsewhere says that the network must go through go-git's transports, which this
// build of ckpt leaves out (the ckpt_lean build tag): the command is for the full build.
var ErrGoGitElsewhere = errors.New("go-git's network transports are not in this build of ckpt")

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
	err := goGitFetch(t.reader().storage, url, refspecs, n.Progress)
	t.Reset()
	return err
}

// Push sends refspecs from the transport repository to the remote.
func (n *GitNetwork) Push(t *Repo, url string, refspecs []string) error {
	if len(refspecs) == 0 {
		return nil
	}
	clearStaleLocks(t.GitDir)
	// Refs a killed push left staged would keep what they reach in the transport (and out
	// of PruneMirror's reach) until the next push of many refs: every push clears them.
	if err := clearPushStage(t); err != nil {
		return err
	}
	if n.Git != "" {
		args := refspecs
		if len(refspecs) >= manySpecs {
			spec, unstage, err := stagePush(t, refspecs)
			if err != nil {
				return err
			}
			if spec != "" {
				defer unstage()
				args = []string{spec}
			}
		}
		err := n.run(t, append([]string{"push", "--porcelain", url}, args...))
		if err != nil && (strings.Contains(err.Error(), "[rejected]") || strings.Contains(err.Error(), "non-fast-forward") || strings.Contains(err.Error(), "fetch first")) {
			return hint.New(ErrRejectedPush, "ckpt pull first, then push again")
		}
		return err
	}
	return goGitPush(t.reader().storage, url, refspecs, n.Progress)
}

// manySpecs is how many refspecs make Push name its refs through pushStage: git matches
// each refspec given on its command line against every ref of the repository, which for
// a thousand sessions (and their thousand tracking refs) cost a second of CPU, twice what
// the rest of the push cost; a pattern is matched once per ref.
const manySpecs = 32

// pushStage is where the transport holds, for the time of a push, the refs it sends.
const pushStage = "refs/ckpt/push/"

// clearPushStage deletes every ref under pushStage.
func clearPushStage(t *Repo) error {
	staged, err := t.Refs(pushStage)
	if err != nil || len(staged) == 0 {
		return err
	}
	clear := make(map[string]Hash, len(staged))
	for ref := range staged {
		clear[ref] = ZeroHash
	}
	return t.SetRefs(clear, "ckpt push")
}

// stagePush points pushStage+<name> at each ref that refspecs (all "[+]refs/heads/X:
// refs/heads/X", with or without the same +) send (Push cleared what a push killed before
// left there), and returns the one refspec that sends them all and the func that
// clears them. Other refspecs are left to git as they are (spec "").
func stagePush(t *Repo, refspecs []string) (spec string, unstage func(), err error) {
	force := strings.HasPrefix(refspecs[0], "+")
	var names []string
	for _, rs := range refspecs {
		src, dst, ok := strings.Cut(strings.TrimPrefix(rs, "+"), ":")
		name, isHead := strings.CutPrefix(src, "refs/heads/")
		if !ok || src != dst || !isHead || strings.HasPrefix(rs, "+") != force {
			return "", nil, nil
		}
		names = append(names, name)
	}
	heads, err := t.Refs("refs/heads/")
	if err != nil {
		return "", nil, err
	}
	up := make(map[string]Hash, len(names))
	for _, name := range names {
		h := heads["refs/heads/"+name]
		if h == ZeroHash {
			return "", nil, nil // deleting a ref: left to git as asked
		}
		up[pushStage+"heads/"+name] = h
	}
	if err := t.SetRefs(up, "ckpt push"); err != nil {
		return "", nil, err
	}
	unstage = func() {
		clear := make(map[string]Hash, len(names))
		for _, name := range names {
			clear[pushStage+"heads/"+name] = ZeroHash
		}
		_ = t.SetRefs(clear, "ckpt push")
	}
	spec = pushStage + "heads/*:refs/heads/*"
	if force {
		spec = "+" + spec
	}
	return spec, unstage, nil
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
