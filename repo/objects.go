package repo

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Objects are encoded by go-git and stored through its storer, as git-bug's
// repository/gogit.go does: a blob is a plumbing.MemoryObject, a tree object.Tree.Encode's,
// a commit object.Commit.Encode's, and Storer.SetEncodedObject writes each. On disk the
// storer is go-git's storage/filesystem over a gitFS (fsyncfs.go), which makes every loose
// object durable before SetEncodedObject returns; in memory (Memory) it is go-git's memory
// storage.

// blobObject is data as a blob.
func blobObject(data []byte) *plumbing.MemoryObject {
	o := &plumbing.MemoryObject{}
	o.SetType(plumbing.BlobObject)
	_, _ = o.Write(data)
	return o
}

// treeObject is the flat tree of regular files named by files (name -> blob), sorted as
// git sorts them.
func treeObject(files map[string]Hash) (*plumbing.MemoryObject, error) {
	t := &object.Tree{Entries: make([]object.TreeEntry, 0, len(files))}
	for name, h := range files {
		t.Entries = append(t.Entries, object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h})
	}
	sort.Sort(object.TreeEntrySorter(t.Entries))
	o := &plumbing.MemoryObject{}
	if err := t.Encode(o); err != nil {
		return nil, fmt.Errorf("encode tree: %w", err)
	}
	return o, nil
}

// commitObject encodes a commit. The message gets the final newline git gives one.
func commitObject(tree Hash, parents []Hash, author, committer object.Signature, message string) (*plumbing.MemoryObject, error) {
	if !strings.HasSuffix(message, "\n") {
		message += "\n"
	}
	c := &object.Commit{Author: author, Committer: committer, Message: message, TreeHash: tree, ParentHashes: parents}
	o := &plumbing.MemoryObject{}
	if err := c.Encode(o); err != nil {
		return nil, fmt.Errorf("encode commit: %w", err)
	}
	return o, nil
}

// signature is who at when, with the characters that would break a commit header (<, >,
// newline, NUL) left out of the name and email.
func signature(who Signature, when time.Time) object.Signature {
	clean := func(v string) string {
		return strings.Map(func(r rune) rune {
			if r == '<' || r == '>' || r == '\n' || r == 0 {
				return -1
			}
			return r
		}, v)
	}
	return object.Signature{Name: clean(who.Name), Email: clean(who.Email), When: when}
}

// objectStore writes objects into one repository's storer. An object that is there
// already is written again (go-git then drops the copy when it finds the file in place):
// ckpt writes only what a commit changes, so looking first would cost every write a system
// call to spare a rare one.
type objectStore struct {
	s  storer.EncodedObjectStorer
	fs *gitFS // nil in memory
}

// sync makes what put wrote durable: the directories of the loose objects (gitFS). It is
// called before any ref or other object can name them.
func (w objectStore) sync() error {
	if w.fs == nil {
		return nil
	}
	return w.fs.syncDirs()
}

// put stores o and returns its hash.
func (w objectStore) put(o *plumbing.MemoryObject) (Hash, error) {
	if w.fs != nil {
		w.fs.nextObject(o.Hash())
	}
	h, err := w.s.SetEncodedObject(o)
	if err != nil {
		return h, fmt.Errorf("write %s %s: %w", o.Type(), short(o.Hash()), err)
	}
	return h, nil
}

// putAll stores objs, one after the other. (Writing them on goroutines of their own, so that
// their fsyncs overlap, was measured slower in a whole ckpt process: each blocked fsync
// needs a new thread.)
func (w objectStore) putAll(objs []*plumbing.MemoryObject) error {
	for _, o := range objs {
		if _, err := w.put(o); err != nil {
			return err
		}
	}
	return nil
}

// objects is the repository's object writer.
func (r *Repo) objects() objectStore {
	g := r.reader()
	return objectStore{s: g.storage, fs: g.fs}
}
