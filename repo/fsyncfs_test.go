package repo

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/go-git/go-billy/v5/util"
)

// TestGitFS: what gitFS adds to the operating system's file system: a .pack is listed only
// with its .idx, object files are read-only and other files private, a temporary object file
// goes where nextObject says, renames fsync their directory at syncDirs, and no path leaves
// the git directory.
func TestGitFS(t *testing.T) {
	root := t.TempDir()
	g := newGitFS(root, true)
	for _, name := range []string{"objects/pack/pack-a.pack", "objects/pack/pack-a.idx", "objects/pack/pack-b.pack", "objects/pack/pack-c.idx", "objects/pack/tmp_pack_x"} {
		if err := util.WriteFile(g, name, []byte("x"), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	fis, err := g.ReadDir("objects/pack")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, fi := range fis {
		names = append(names, fi.Name())
	}
	if want := []string{"pack-a.idx", "pack-a.pack", "pack-c.idx", "tmp_pack_x"}; !slices.Equal(names, want) {
		t.Errorf("objects/pack lists %v, want %v (pack-b.pack has no index)", names, want)
	}
	if fis, _ := g.ReadDir("objects/pack/../pack"); len(fis) != 4 {
		t.Errorf("the same directory by another name lists %d entries", len(fis))
	}

	for name, want := range map[string]os.FileMode{"objects/pack/pack-a.pack": 0o444 &^ umask(), "config": FilePerm &^ umask()} {
		if name == "config" {
			if err := util.WriteFile(g, name, []byte("[core]\n"), 0o666); err != nil {
				t.Fatal(err)
			}
		}
		fi, err := os.Stat(filepath.Join(root, name))
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, %v; want %v", name, fi.Mode().Perm(), err, want)
		}
	}

	h := BlobHash([]byte("an object"))
	g.nextObject(h)
	f, err := g.TempFile("objects/pack", looseObjectPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if dir := filepath.Dir(f.Name()); dir != filepath.Join("objects", h.String()[:2]) {
		t.Errorf("temporary object file in %s, want its fan-out directory", dir)
	}
	f.Write([]byte("compressed"))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join("objects", h.String()[:2], h.String()[2:])
	if err := g.Rename(f.Name(), target); err != nil {
		t.Fatal(err)
	}
	if !g.pending[filepath.Join(root, "objects", h.String()[:2])] || !g.pending[filepath.Join(root, "objects")] {
		t.Errorf("directories to sync: %v, want the new fan-out directory and objects/", g.pending)
	}
	if err := g.syncDirs(); err != nil || len(g.pending) != 0 {
		t.Errorf("syncDirs: %v, %d left", err, len(g.pending))
	}
	if b, err := os.ReadFile(filepath.Join(root, target)); err != nil || string(b) != "compressed" {
		t.Errorf("renamed object: %q, %v", b, err)
	}

	for _, bad := range []string{"../outside", "/etc/passwd", "objects/../../x"} {
		if _, err := g.Open(bad); !errors.Is(err, errOutside) {
			t.Errorf("Open(%q) = %v, want errOutside", bad, err)
		}
	}
}
