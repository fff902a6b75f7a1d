package repo

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// gitFS is the billy.Filesystem through which go-git's storage (storage/filesystem) reads
// and writes a git directory. It is the operating system's file system rooted at the git
// directory, with three differences that make go-git's writes as durable and as safe for
// concurrent readers as git's own:
//
//   - With sync set, a file written through it is fsynced when it is closed, and the
//     directory a rename renames into (and that directory's parent when the rename had to
//     create it) is fsynced by the next syncDirs, which the writer calls before anything
//     names what it wrote (objectStore.sync, writePack, initGitDir). go-git writes a loose
//     object to a temporary file, closes it and renames it into objects/xx/, so once a
//     commit's objects are synced they are on disk, names and bytes. The directories are
//     synced together rather than after each rename because on ext4 every directory fsync
//     is a journal commit: three objects, one commit instead of three.
//   - Directories are created 0700 and files 0600 (less the umask), as the rest of the
//     store; files under objects/ are created read-only (0444), as git creates them, so go-git
//     never needs to chmod them.
//   - Listing objects/pack hides a .pack whose .idx is not there yet. go-git lists packs by
//     their .pack file and fails every read while one lacks its index; git lists them by .idx
//     and ignores a .idx whose pack is missing. Hiding the pack lets writePack rename a new
//     pack into place before its index, in git's order, while ckpt's readers go on reading.
type gitFS struct {
	root string
	sync bool

	mu      sync.Mutex
	pending map[string]bool // directories to fsync (syncDirs)
	// objectDir is the fan-out directory of the loose object go-git is about to write
	// (set by objectStore.put), "" when not known.
	objectDir string
}

// nextObject says which object the next loose-object temporary file is for. go-git makes
// that file in objects/pack and renames it into objects/xx; made in objects/xx instead (as
// git makes it), the rename stays within one directory, which costs less, and the fan-out
// directory exists before the rename needs it. It is only a hint: a temporary file made
// elsewhere (by a second writer sharing this gitFS) is renamed to the right place all the
// same.
func (g *gitFS) nextObject(h plumbing.Hash) {
	g.mu.Lock()
	g.objectDir = filepath.Join("objects", h.String()[:2])
	g.mu.Unlock()
}

var _ billy.Filesystem = (*gitFS)(nil)

func newGitFS(root string, sync bool) *gitFS { return &gitFS{root: root, sync: sync} }

// errOutside refuses a path that leaves the git directory.
var errOutside = errors.New("path outside the git directory")

// abs is name (relative to the root) as an operating-system path.
func (g *gitFS) abs(name string) (string, error) {
	if name == "" || name == "." {
		return g.root, nil
	}
	clean := filepath.Clean(name)
	if !filepath.IsLocal(clean) {
		return "", fmt.Errorf("%s: %w", name, errOutside)
	}
	return filepath.Join(g.root, clean), nil
}

// objectFile reports whether name is in objects/: created read-only, like git's objects.
func objectFile(name string) bool {
	return strings.HasPrefix(filepath.ToSlash(filepath.Clean(name)), "objects/")
}

func (g *gitFS) Create(name string) (billy.File, error) {
	return g.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

func (g *gitFS) Open(name string) (billy.File, error) {
	return g.OpenFile(name, os.O_RDONLY, 0)
}

// OpenFile opens name; a file it creates gets FilePerm (0444 under objects/), whatever perm
// go-git asks for, and its missing parent directories DirPerm.
func (g *gitFS) OpenFile(name string, flag int, _ os.FileMode) (billy.File, error) {
	p, err := g.abs(name)
	if err != nil {
		return nil, err
	}
	perm := FilePerm
	if objectFile(name) {
		perm = 0o444
	}
	f, err := openFile(p, flag, perm)
	if errors.Is(err, fs.ErrNotExist) && flag&os.O_CREATE != 0 {
		if err := os.MkdirAll(filepath.Dir(p), DirPerm); err != nil {
			return nil, err
		}
		f, err = openFile(p, flag, perm)
	}
	if err != nil {
		return nil, err
	}
	gf := &gitFile{File: f, name: name, sync: g.sync && flag&(os.O_WRONLY|os.O_RDWR) != 0}
	if flag&os.O_CREATE != 0 {
		gf.fs = g
	}
	return gf, nil
}

// TempFile creates a new file named prefix followed by a random number in dir.
func (g *gitFS) TempFile(dir, prefix string) (billy.File, error) {
	if prefix == looseObjectPrefix {
		g.mu.Lock()
		if g.objectDir != "" {
			dir, g.objectDir = g.objectDir, ""
		}
		g.mu.Unlock()
	}
	d, err := g.abs(dir)
	if err != nil {
		return nil, err
	}
	perm := FilePerm
	if objectFile(filepath.Join(dir, prefix)) {
		perm = 0o444
	}
	for range 100 {
		base := prefix + strconv.FormatUint(rand.Uint64(), 36)
		f, err := openFile(filepath.Join(d, base), os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrNotExist) {
			if err := os.MkdirAll(d, DirPerm); err != nil {
				return nil, err
			}
			if g.sync {
				g.dirty(filepath.Dir(d))
			}
			f, err = openFile(filepath.Join(d, base), os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		}
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		// Renamed into place by its writer, whose rename syncs the directory.
		gf := &gitFile{File: f, name: filepath.Join(dir, base), sync: g.sync}
		if prefix == looseObjectPrefix {
			// go-git compresses a loose object straight into its file, and zlib hands its
			// output over 248 bytes at a time: one write instead of dozens. Nothing reads
			// the file before its writer closes it.
			gf.buf = objectBuffers.Get().(*bufio.Writer)
			gf.buf.Reset(f)
		}
		return gf, nil
	}
	return nil, fmt.Errorf("temporary file in %s: too many collisions", d)
}

func (g *gitFS) Stat(name string) (os.FileInfo, error) {
	p, err := g.abs(name)
	if err != nil {
		return nil, err
	}
	return os.Stat(p)
}

func (g *gitFS) Lstat(name string) (os.FileInfo, error) {
	p, err := g.abs(name)
	if err != nil {
		return nil, err
	}
	return os.Lstat(p)
}

// Rename renames from to to, creating the directory of to when it is missing (go-git
// renames a loose object into a fan-out directory it has not made). With sync set, the
// directory renamed into is fsynced, and its parent when the directory is new.
func (g *gitFS) Rename(from, to string) error {
	pf, err := g.abs(from)
	if err != nil {
		return err
	}
	pt, err := g.abs(to)
	if err != nil {
		return err
	}
	dir := filepath.Dir(pt)
	created := false
	err = rename(pf, pt)
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(dir); errors.Is(serr, fs.ErrNotExist) {
			if err := os.MkdirAll(dir, DirPerm); err != nil {
				return err
			}
			created = true
			err = rename(pf, pt)
		}
	}
	if err != nil || !g.sync {
		return err
	}
	g.dirty(dir)
	if created {
		g.dirty(filepath.Dir(dir))
	}
	return nil
}

// dirty notes a directory whose entries changed, for syncDirs.
func (g *gitFS) dirty(dir string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pending == nil {
		g.pending = map[string]bool{}
	}
	g.pending[dir] = true
}

// syncDirs fsyncs every directory a rename or create changed since the last call.
func (g *gitFS) syncDirs() error {
	g.mu.Lock()
	dirs := g.pending
	g.pending = nil
	g.mu.Unlock()
	for d := range dirs {
		if err := syncDir(d); err != nil {
			return err
		}
	}
	return nil
}

func (g *gitFS) Remove(name string) error {
	p, err := g.abs(name)
	if err != nil {
		return err
	}
	return os.Remove(p)
}

func (g *gitFS) Join(elem ...string) string { return filepath.Join(elem...) }

// ReadDir lists a directory, sorted by name. An entry removed while it is listed (a loose
// object a concurrent pack just deleted) is left out rather than failing the listing, and
// in objects/pack a .pack without its .idx is left out (see gitFS).
func (g *gitFS) ReadDir(name string) ([]os.FileInfo, error) {
	p, err := g.abs(name)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return nil, err
	}
	packDir := filepath.ToSlash(filepath.Clean(name)) == "objects/pack"
	var idx map[string]bool
	if packDir {
		idx = map[string]bool{}
		for _, e := range entries {
			if stem, ok := strings.CutSuffix(e.Name(), ".idx"); ok {
				idx[stem] = true
			}
		}
	}
	out := make([]os.FileInfo, 0, len(entries))
	for _, e := range entries {
		if stem, ok := strings.CutSuffix(e.Name(), ".pack"); ok && packDir && !idx[stem] {
			continue
		}
		fi, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, fi)
	}
	return out, nil
}

func (g *gitFS) MkdirAll(name string, _ os.FileMode) error {
	p, err := g.abs(name)
	if err != nil {
		return err
	}
	return os.MkdirAll(p, DirPerm)
}

func (g *gitFS) Symlink(target, link string) error {
	p, err := g.abs(link)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), DirPerm); err != nil {
		return err
	}
	return os.Symlink(target, p)
}

func (g *gitFS) Readlink(link string) (string, error) {
	p, err := g.abs(link)
	if err != nil {
		return "", err
	}
	return os.Readlink(p)
}

func (g *gitFS) Chroot(name string) (billy.Filesystem, error) {
	p, err := g.abs(name)
	if err != nil {
		return nil, err
	}
	return &gitFS{root: p, sync: g.sync}, nil
}

func (g *gitFS) Root() string { return g.root }

// looseObjectPrefix names the temporary file of a loose object go-git writes.
const looseObjectPrefix = "tmp_obj_"

// objectBuffers hold the writes of loose objects (see TempFile); most fit in one.
var objectBuffers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 16<<10) }}

// gitFile is a file of a gitFS. A file opened for writing with sync set is fsynced when
// closed, and, when it was opened to be created in place (not a temporary file renamed
// later), its directory is noted for syncDirs.
type gitFile struct {
	*os.File
	name string
	sync bool
	fs   *gitFS // set for a file created in place
	// buf, when set, holds writes until the file is read, seeked or closed.
	buf *bufio.Writer
}

func (f *gitFile) Name() string { return f.name }

func (f *gitFile) flush() error {
	if f.buf == nil {
		return nil
	}
	return f.buf.Flush()
}

func (f *gitFile) Write(p []byte) (int, error) {
	if f.buf != nil {
		return f.buf.Write(p)
	}
	return f.File.Write(p)
}

func (f *gitFile) WriteString(s string) (int, error) { return f.Write([]byte(s)) }

func (f *gitFile) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(struct{ io.Writer }{f}, r)
}

func (f *gitFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.flush(); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

func (f *gitFile) Read(p []byte) (int, error) {
	if err := f.flush(); err != nil {
		return 0, err
	}
	return f.File.Read(p)
}

func (f *gitFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.flush(); err != nil {
		return 0, err
	}
	return f.File.ReadAt(p, off)
}

func (f *gitFile) Seek(off int64, whence int) (int64, error) {
	if err := f.flush(); err != nil {
		return 0, err
	}
	return f.File.Seek(off, whence)
}

func (f *gitFile) Truncate(size int64) error {
	if err := f.flush(); err != nil {
		return err
	}
	return f.File.Truncate(size)
}

func (f *gitFile) Close() error {
	err := f.flush()
	if f.buf != nil {
		f.buf.Reset(nil)
		objectBuffers.Put(f.buf)
		f.buf = nil
	}
	if err != nil {
		_ = f.File.Close()
		return err
	}
	if f.sync {
		if err := f.File.Sync(); err != nil {
			_ = f.File.Close()
			return err
		}
	}
	if err := f.File.Close(); err != nil {
		return err
	}
	if f.sync && f.fs != nil {
		f.fs.dirty(filepath.Dir(f.File.Name()))
	}
	return nil
}

func (f *gitFile) Lock() error   { return lockFile(f.File) }
func (f *gitFile) Unlock() error { return unlockFile(f.File) }
