package repo

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-git/go-billy/v5"
)

// gitFS is the billy.Filesystem through which go-git's storage (storage/filesystem) reads
// and writes a git directory. It is the operating system's file system rooted at the git
// directory, with three differences that make go-git's writes as durable and as safe for
// concurrent readers as git's own:
//
//   - With sync set, a file written through it is fsynced when it is closed, and a rename
//     fsyncs the directory it renames into (and that directory's parent when the rename had
//     to create it). go-git writes a loose object to a temporary file and renames it into
//     objects/xx/, so an object it reports written is on disk, name and bytes.
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
	f, err := os.OpenFile(p, flag, perm)
	if errors.Is(err, fs.ErrNotExist) && flag&os.O_CREATE != 0 {
		if err := os.MkdirAll(filepath.Dir(p), DirPerm); err != nil {
			return nil, err
		}
		f, err = os.OpenFile(p, flag, perm)
	}
	if err != nil {
		return nil, err
	}
	return &gitFile{File: f, name: name, sync: g.sync && flag&(os.O_WRONLY|os.O_RDWR) != 0, syncDir: flag&os.O_CREATE != 0}, nil
}

// TempFile creates a new file named prefix followed by a random number in dir.
func (g *gitFS) TempFile(dir, prefix string) (billy.File, error) {
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
		f, err := os.OpenFile(filepath.Join(d, base), os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrNotExist) {
			if err := os.MkdirAll(d, DirPerm); err != nil {
				return nil, err
			}
			f, err = os.OpenFile(filepath.Join(d, base), os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		}
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		// Renamed into place by its writer, whose rename syncs the directory.
		return &gitFile{File: f, name: filepath.Join(dir, base), sync: g.sync}, nil
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
	err = os.Rename(pf, pt)
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(dir); errors.Is(serr, fs.ErrNotExist) {
			if err := os.MkdirAll(dir, DirPerm); err != nil {
				return err
			}
			created = true
			err = os.Rename(pf, pt)
		}
	}
	if err != nil || !g.sync {
		return err
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	if created {
		return syncDir(filepath.Dir(dir))
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

// gitFile is a file of a gitFS. A file opened for writing with sync set is fsynced when
// closed, and, when it was opened to be created in place (not a temporary file renamed
// later), so is its directory.
type gitFile struct {
	*os.File
	name    string
	sync    bool
	syncDir bool
}

func (f *gitFile) Name() string { return f.name }

func (f *gitFile) Close() error {
	if f.sync {
		if err := f.File.Sync(); err != nil {
			_ = f.File.Close()
			return err
		}
	}
	if err := f.File.Close(); err != nil {
		return err
	}
	if f.sync && f.syncDir {
		return syncDir(filepath.Dir(f.File.Name()))
	}
	return nil
}

func (f *gitFile) Lock() error   { return lockFile(f.File) }
func (f *gitFile) Unlock() error { return unlockFile(f.File) }
