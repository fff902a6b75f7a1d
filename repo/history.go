package repo

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/ckpt-dev/ckpt/internal/trailer"
)

// gitReader reads history with go-git: from its filesystem storage over a gitFS
// (fsyncfs.go) for a *Repo, from its memory storage for a Memory. objectStore writes through
// the same storage.
type gitReader struct {
	gitDir  string // "" in memory: no loose object files to read directly
	storage storage.Storer
	fs      *gitFS        // nil in memory
	objs    *objectReader // nil in memory
}

func (r *Repo) reader() *gitReader {
	if r.git == nil {
		var opts filesystem.Options
		if r.keepPacksOpen {
			opts.MaxOpenDescriptors = 16
		}
		fsys := newGitFS(r.GitDir, r.store.Opts.Fsync)
		objs := newObjectReader(r.GitDir)
		s := &readStorage{Storage: filesystem.NewStorageWithOptions(fsys, cache.NewObjectLRU(4<<20), opts), objs: objs}
		r.git = &gitReader{gitDir: r.GitDir, storage: s, fs: fsys, objs: objs}
	}
	return r.git
}

// gitStorage is the storage of the open reader, nil when none is open.
func (r *Repo) gitStorage() storage.Storer {
	if r.git == nil {
		return nil
	}
	return r.git.storage
}

// Reset drops cached readers, after the repository changed on disk behind our back.
func (r *Repo) Reset() {
	if c, ok := r.gitStorage().(io.Closer); ok && r.keepPacksOpen {
		_ = c.Close()
	}
	r.git = nil
}

func (g *gitReader) commit(h Hash) (*object.Commit, error) {
	c, err := object.GetCommit(g.storage, h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return nil, fmt.Errorf("commit %s: %w", short(h), ErrBadRevision)
	}
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", short(h), err)
	}
	return c, nil
}

func (g *gitReader) commitTree(h Hash) (Hash, error) {
	c, err := g.commit(h)
	if err != nil {
		return ZeroHash, err
	}
	return c.TreeHash, nil
}

// treeFiles returns the files of tree h, which must pass checkTree: a tree that names
// anything but a session's regular files is refused, never partly read (treecheck.go).
func (g *gitReader) treeFiles(h Hash) (map[string]Hash, error) {
	entries, err := g.tree(h)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Hash, len(entries))
	for _, e := range entries {
		out[e.name] = e.hash
	}
	return out, nil
}

func (g *gitReader) blob(h Hash) ([]byte, error) {
	if g.objs != nil {
		typ, data, err := g.objs.read(h)
		switch {
		case errors.Is(err, plumbing.ErrObjectNotFound):
			return nil, fmt.Errorf("read blob %s: %w", short(h), err)
		case err != nil:
			return nil, fmt.Errorf("read blob %s: %w", short(h), err)
		case typ != plumbing.BlobObject:
			return nil, fmt.Errorf("read blob %s: %w", short(h), plumbing.ErrObjectNotFound)
		}
		return data, nil
	}
	b, err := object.GetBlob(g.storage, h)
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", short(h), err)
	}
	rd, err := b.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}

// CommitInfo is one commit as ckpt shows it.
type CommitInfo struct {
	Hash     Hash
	Parents  []Hash
	When     time.Time
	Author   Signature
	Message  string
	Subject  string
	Trailers []trailer.Trailer
}

// Trailer returns the value of the first trailer named key ("" if none).
func (c CommitInfo) Trailer(key string) string { return trailer.Value(c.Trailers, key) }

func infoOf(c *object.Commit) CommitInfo {
	subject, _, _ := strings.Cut(c.Message, "\n")
	return CommitInfo{
		Hash:     c.Hash,
		Parents:  c.ParentHashes,
		When:     c.Committer.When,
		Author:   Signature{c.Author.Name, c.Author.Email},
		Message:  c.Message,
		Subject:  subject,
		Trailers: trailer.Parse(c.Message),
	}
}

// Commit returns one commit.
func (r *Repo) CommitInfo(h Hash) (CommitInfo, error) {
	c, err := r.reader().commit(h)
	if err != nil {
		return CommitInfo{}, err
	}
	return infoOf(c), nil
}

// Log walks first parents from start, newest first, calling fn until it returns false. Only
// the commits visited are read, so the cost does not grow with the length of history.
func (r *Repo) Log(start Hash, fn func(CommitInfo) bool) error { return r.reader().log(start, fn) }

func (g *gitReader) log(start Hash, fn func(CommitInfo) bool) error {
	for h := start; h != ZeroHash; {
		c, err := g.commit(h)
		if err != nil {
			return err
		}
		if !fn(infoOf(c)) {
			return nil
		}
		if len(c.ParentHashes) == 0 {
			return nil
		}
		h = c.ParentHashes[0]
	}
	return nil
}

// rejectedRev returns N of `rejected/N` or `refs/ckpt/rejected/N`.
func rejectedRev(rev string) (string, bool) {
	n, ok := strings.CutPrefix(strings.TrimPrefix(rev, "refs/ckpt/"), "rejected/")
	if !ok || n == "" || strings.Trim(n, "0123456789") != "" {
		return "", false
	}
	return n, true
}

// Resolve turns a revision into a commit: a full or abbreviated hash, HEAD, HEAD~N, HEAD^,
// main, or rejected/N (a rejected write). An unknown revision is ErrBadRevision.
func (r *Repo) Resolve(rev string) (Hash, error) {
	return r.reader().resolve(rev, r.Head, r.Ref)
}

// resolve turns rev into a commit (see Resolve); head reads main, ref any ref.
func (g *gitReader) resolve(rev string, head func() (Hash, error), ref func(string) (Hash, error)) (Hash, error) {
	if rev == "" || rev == "HEAD" || rev == "main" {
		h, err := head()
		if err == nil && h == ZeroHash {
			err = fmt.Errorf("HEAD: %w: no commit yet", ErrBadRevision)
		}
		return h, err
	}
	if n, ok := rejectedRev(rev); ok {
		h, err := ref(RejectedPrefix + n)
		if err == nil && h == ZeroHash {
			err = fmt.Errorf("%s: %w", rev, ErrBadRevision)
		}
		return h, err
	}
	if strings.HasPrefix(rev, "-") || strings.ContainsAny(rev, " :\\") {
		return ZeroHash, fmt.Errorf("%q: %w", rev, ErrBadRevision)
	}
	if len(rev) == 40 && strings.Trim(rev, "0123456789abcdefABCDEF") == "" {
		h := plumbing.NewHash(rev)
		if _, err := g.commit(h); err != nil {
			return ZeroHash, err
		}
		return h, nil
	}
	return g.resolveSteps(rev, head, ref)
}

// resolveSteps resolves a ref name as git finds one (the name itself, or under refs/,
// refs/tags/, refs/heads/, refs/remotes/), HEAD, or an abbreviated hash of at least four
// digits, followed by any number of steps: ~N (N first parents back) and ^N (the N-th
// parent; ^0 the commit itself).
func (g *gitReader) resolveSteps(rev string, head func() (Hash, error), ref func(string) (Hash, error)) (Hash, error) {
	bad := func(why string) (Hash, error) {
		if why != "" {
			why = ": " + why
		}
		return ZeroHash, fmt.Errorf("%q: %w%s", rev, ErrBadRevision, why)
	}
	base, steps := rev, ""
	if i := strings.IndexAny(rev, "~^"); i >= 0 {
		base, steps = rev[:i], rev[i:]
	}
	var h Hash
	switch {
	case base == "HEAD" || base == "main":
		var err error
		if h, err = head(); err != nil {
			return ZeroHash, err
		}
	case base == "" || strings.ContainsAny(base, "@{}*?[") || strings.Contains(base, ".."):
		return bad("")
	default:
		for _, name := range []string{base, "refs/" + base, "refs/tags/" + base, "refs/heads/" + base, "refs/remotes/" + base, "refs/remotes/" + base + "/HEAD"} {
			// The name itself only as git takes it: under refs/, or HEAD-like (ORIG_HEAD).
			if name != base || strings.HasPrefix(name, "refs/") || strings.Trim(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == "" {
				if r, err := ref(name); err == nil && r != ZeroHash {
					h = r
					break
				}
			}
		}
		if h == ZeroHash && len(base) >= 4 && len(base) <= 40 && strings.Trim(base, "0123456789abcdefABCDEF") == "" {
			var err error
			if h, err = g.abbreviated(strings.ToLower(base)); err != nil {
				return bad(err.Error())
			}
		}
	}
	if h == ZeroHash {
		return bad("")
	}
	for steps != "" {
		op := steps[0]
		steps = steps[1:]
		i := 0
		for i < len(steps) && steps[i] >= '0' && steps[i] <= '9' {
			i++
		}
		n := 1
		if i > 0 {
			var err error
			if n, err = strconv.Atoi(steps[:i]); err != nil || i > 9 {
				return bad("")
			}
		}
		steps = steps[i:]
		if op != '~' && op != '^' {
			return bad("")
		}
		c, err := g.commit(h)
		if err != nil {
			return bad("not a commit")
		}
		switch {
		case op == '^' && n == 0:
		case op == '^':
			if n > len(c.ParentHashes) {
				return bad("no such parent")
			}
			h = c.ParentHashes[n-1]
		default:
			for ; n > 0; n-- {
				if len(c.ParentHashes) == 0 {
					return bad("history is shorter than that")
				}
				h = c.ParentHashes[0]
				if n > 1 {
					if c, err = g.commit(h); err != nil {
						return ZeroHash, err
					}
				}
			}
		}
	}
	if _, err := g.commit(h); err != nil {
		return bad("not a commit")
	}
	return h, nil
}

// abbreviated finds the one object whose name starts with prefix (lower-case hex); when
// several do, the one commit among them.
func (g *gitReader) abbreviated(prefix string) (Hash, error) {
	var found []Hash
	if g.objs != nil {
		found = g.objs.withPrefix(prefix)
	} else if iter, err := g.storage.IterEncodedObjects(plumbing.AnyObject); err == nil {
		_ = iter.ForEach(func(o plumbing.EncodedObject) error {
			if strings.HasPrefix(o.Hash().String(), prefix) {
				found = append(found, o.Hash())
			}
			return nil
		})
	}
	slices.SortFunc(found, func(a, b Hash) int { return bytes.Compare(a[:], b[:]) })
	found = slices.Compact(found)
	if len(found) > 1 {
		var commits []Hash
		for _, h := range found {
			if _, err := g.commit(h); err == nil {
				commits = append(commits, h)
			}
		}
		found = commits
	}
	switch len(found) {
	case 0:
		return ZeroHash, errors.New("no such object")
	case 1:
		return found[0], nil
	}
	return ZeroHash, errors.New("ambiguous")
}

// Files returns every file of a commit's tree.
func (r *Repo) Files(h Hash) (map[string][]byte, error) {
	t, ents, err := r.headTree(h)
	if err != nil {
		return nil, withCommit(err, h)
	}
	// Usually h is HEAD, read just before a commit: remember its tree for Prepare.
	r.known = knownHead{commit: h, tree: t, files: ents}
	return r.reader().blobs(h, ents)
}

// blobs reads the files ents (name -> blob) of commit h.
func (g *gitReader) blobs(h Hash, ents map[string]Hash) (map[string][]byte, error) {
	out := make(map[string][]byte, len(ents))
	for name, bh := range ents {
		b, err := g.fileBlob(h, name, bh)
		if err != nil {
			return nil, err
		}
		out[name] = b
	}
	return out, nil
}

// ReadFile returns one file of a commit, or ErrNoFile.
func (r *Repo) ReadFile(h Hash, name string) ([]byte, error) { return r.reader().readFile(h, name) }

func (g *gitReader) readFile(h Hash, name string) ([]byte, error) {
	t, err := g.commitTree(h)
	if err != nil {
		return nil, err
	}
	ents, err := g.treeFiles(t)
	if err != nil {
		return nil, withCommit(err, h)
	}
	bh, ok := ents[name]
	if !ok {
		return nil, fmt.Errorf("%s at %s: %w", name, short(h), ErrNoFile)
	}
	return g.fileBlob(h, name, bh)
}

// ShortHash is the 7-character form of a hash.
func ShortHash(h Hash) string { return short(h) }
