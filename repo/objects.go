package repo

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// objectWriter writes loose objects into a git directory: zlib-compressed, written to a
// temporary file, fsynced, renamed into objects/xx/. An object that exists is not rewritten.
type objectWriter struct {
	gitDir  string
	sync    bool
	newDirs map[string]bool // fan-out directories created, whose parent needs a sync
	dirs    map[string]bool // fan-out directories written to, which need a sync
}

func newObjectWriter(gitDir string, sync bool) *objectWriter {
	return &objectWriter{gitDir: gitDir, sync: sync, newDirs: map[string]bool{}, dirs: map[string]bool{}}
}

func objectHash(typ plumbing.ObjectType, content []byte) Hash {
	h := sha1.New()
	h.Write([]byte(typ.String() + " " + strconv.Itoa(len(content)) + "\x00"))
	h.Write(content)
	var out Hash
	copy(out[:], h.Sum(nil))
	return out
}

func (w *objectWriter) path(h Hash) string {
	s := h.String()
	return filepath.Join(w.gitDir, "objects", s[:2], s[2:])
}

// zlibWriters are reused: a zlib writer allocates about a megabyte of compressor state,
// which dominated the cost of a commit when each object made a new one.
var zlibWriters = sync.Pool{New: func() any {
	zw, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed) // git's core.looseCompression default
	return zw
}}

// write stores one object and returns its hash.
func (w *objectWriter) write(typ plumbing.ObjectType, content []byte) (Hash, error) {
	h := objectHash(typ, content)
	p := w.path(h)
	if _, err := os.Stat(p); err == nil {
		return h, nil
	}
	var buf bytes.Buffer
	buf.Grow(len(content)/2 + 64)
	zw := zlibWriters.Get().(*zlib.Writer)
	zw.Reset(&buf)
	zw.Write([]byte(typ.String() + " " + strconv.Itoa(len(content)) + "\x00"))
	zw.Write(content)
	err := zw.Close()
	zlibWriters.Put(zw)
	if err != nil {
		return h, err
	}
	// Created read-only, as git does, under a name of our own; the fan-out directory is
	// made only when the create finds it missing.
	dir := filepath.Dir(p)
	tmpName := filepath.Join(dir, "tmp_obj_"+strconv.FormatUint(rand.Uint64(), 36))
	f, err := os.OpenFile(tmpName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(dir, DirPerm); err != nil && !errors.Is(err, fs.ErrExist) {
			return h, fmt.Errorf("write object: %w", err)
		}
		w.newDirs[dir] = true
		f, err = os.OpenFile(tmpName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	}
	if err != nil {
		return h, fmt.Errorf("write object: %w", err)
	}
	fail := func(err error) (Hash, error) {
		f.Close()
		os.Remove(tmpName)
		return h, fmt.Errorf("write object: %w", err)
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		return fail(err)
	}
	if w.sync {
		if err := f.Sync(); err != nil {
			return fail(err)
		}
	}
	if err := f.Close(); err != nil {
		os.Remove(tmpName)
		return h, fmt.Errorf("write object: %w", err)
	}
	if err := os.Rename(tmpName, p); err != nil {
		os.Remove(tmpName)
		return h, fmt.Errorf("write object: %w", err)
	}
	w.dirs[dir] = true
	return h, nil
}

// flush makes the renames durable: every fan-out directory written to, and objects/ itself
// when a fan-out directory was created.
func (w *objectWriter) flush() error {
	if !w.sync {
		return nil
	}
	for d := range w.dirs {
		if err := syncDir(d); err != nil {
			return err
		}
	}
	if len(w.newDirs) > 0 {
		if err := syncDir(filepath.Join(w.gitDir, "objects")); err != nil {
			return err
		}
	}
	w.dirs, w.newDirs = map[string]bool{}, map[string]bool{}
	return nil
}

// treeEntry is one file of a flat tree.
type treeEntry struct {
	name string
	hash Hash
}

// encodeTree encodes a flat tree of regular files, sorted as git sorts them.
func encodeTree(entries []treeEntry) []byte {
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	var b bytes.Buffer
	for _, e := range entries {
		b.WriteString("100644 ")
		b.WriteString(e.name)
		b.WriteByte(0)
		b.Write(e.hash[:])
	}
	return b.Bytes()
}

// encodeCommit encodes a commit object.
func encodeCommit(tree Hash, parents []Hash, author Signature, when time.Time, message string) []byte {
	var b bytes.Buffer
	b.WriteString("tree " + tree.String() + "\n")
	for _, p := range parents {
		b.WriteString("parent " + p.String() + "\n")
	}
	sig := formatSignature(author, when)
	b.WriteString("author " + sig + "\n")
	b.WriteString("committer " + sig + "\n\n")
	b.WriteString(message)
	if !strings.HasSuffix(message, "\n") {
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func formatSignature(s Signature, when time.Time) string {
	clean := func(v string) string {
		return strings.Map(func(r rune) rune {
			if r == '<' || r == '>' || r == '\n' || r == 0 {
				return -1
			}
			return r
		}, v)
	}
	_, off := when.Zone()
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	return fmt.Sprintf("%s <%s> %d %c%02d%02d", clean(s.Name), clean(s.Email), when.Unix(), sign, off/3600, (off%3600)/60)
}
