package repo

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/ckpt-dev/ckpt/internal/gittest"
)

// historyByGit makes a repository with git: n versions of a 6 KB file, each changing one
// line, committed one by one, then packed as pack says.
func historyByGit(t *testing.T, n int, pack ...string) string {
	t.Helper()
	dir := t.TempDir()
	gittest.Git(t, dir, "init", "-q", "-b", "main")
	var lines []string
	for i := range 100 {
		lines = append(lines, fmt.Sprintf("line %03d: the same words on every version of the file", i))
	}
	for v := range n {
		lines[(v*7)%100] = fmt.Sprintf("line %03d: changed in version %d", (v*7)%100, v)
		if err := os.WriteFile(filepath.Join(dir, "checkpoint.md"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "notes.md"), []byte(fmt.Sprintf("# Notes %d\n", v/10)), 0o644); err != nil {
			t.Fatal(err)
		}
		gittest.Git(t, dir, "add", ".")
		gittest.Git(t, dir, "commit", "-q", "-m", fmt.Sprintf("version %d\n\nCkpt-Trigger: write", v))
	}
	if len(pack) > 0 {
		gittest.Git(t, dir, pack...)
	}
	return filepath.Join(dir, ".git")
}

// TestObjectReaderReadsWhatGitReads: every object of repositories that git packed (with
// offset deltas, with name deltas, partly packed and partly loose) reads back as git reads
// it, with its type and size.
func TestObjectReaderReadsWhatGitReads(t *testing.T) {
	for _, tc := range []struct {
		name string
		pack []string
	}{
		{"loose", nil},
		{"ofs-delta", []string{"repack", "-adq", "--depth=50", "--window=10"}},
		{"ref-delta", []string{"-c", "repack.useDeltaBaseOffset=false", "repack", "-adq"}},
		{"aggressive", []string{"gc", "-q", "--aggressive"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gitDir := historyByGit(t, 60, tc.pack...)
			if tc.name == "ofs-delta" {
				// more history after the pack: loose objects and a second pack
				work := filepath.Dir(gitDir)
				if err := os.WriteFile(filepath.Join(work, "checkpoint.md"), []byte("after the pack\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				gittest.Git(t, work, "commit", "-qam", "after")
			}
			want := gitObjects(t, gitDir)
			o := newObjectReader(gitDir)
			for h, w := range want {
				typ, data, err := o.read(h)
				if err != nil {
					t.Fatalf("%s: %v", h, err)
				}
				if typ != w.Type() || !bytes.Equal(data, mustRead(t, w)) {
					t.Fatalf("%s: read a %s of %d bytes, git reads a %s of %d", h, typ, len(data), w.Type(), w.Size())
				}
				ityp, size, err := o.info(h)
				if err != nil || ityp != typ || size != int64(len(data)) {
					t.Fatalf("%s: info %s %d %v, want %s %d", h, ityp, size, err, typ, len(data))
				}
				if !o.has(h) {
					t.Fatalf("%s: has says no", h)
				}
				data[0] ^= 0xff // the caller owns what it gets: the cache must not change
			}
			for h, w := range want {
				if _, data, _ := o.read(h); !bytes.Equal(data, mustRead(t, w)) {
					t.Fatalf("%s changed in the cache after a caller changed its copy", h)
				}
			}
			missing := plumbing.NewHash("0123456789012345678901234567890123456789")
			if _, _, err := o.read(missing); err != plumbing.ErrObjectNotFound {
				t.Fatalf("missing object: %v", err)
			}
			if o.has(missing) {
				t.Fatal("has a missing object")
			}
		})
	}
}

// TestObjectReaderSeesNewPacks: a pack written after the reader listed the packs (the
// loose objects it held removed) is found on the next read.
func TestObjectReaderSeesNewPacks(t *testing.T) {
	gitDir := historyByGit(t, 5)
	want := gitObjects(t, gitDir)
	o := newObjectReader(gitDir)
	head := plumbing.NewHash(strings.TrimSpace(gittest.Git(t, gitDir, "rev-parse", "HEAD")))
	if _, _, err := o.read(head); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, gitDir, "repack", "-adq")
	gittest.Git(t, gitDir, "prune-packed")
	for h := range want {
		if _, _, err := o.read(h); err != nil {
			t.Fatalf("%s after the repack: %v", h, err)
		}
	}
}

// TestObjectReaderRefusesDamage: packs and indexes cut short or changed anywhere make
// reads fail (or read what git reads), never panic or hang.
func TestObjectReaderRefusesDamage(t *testing.T) {
	gitDir := historyByGit(t, 30, "repack", "-adq")
	want := gitObjects(t, gitDir)
	packDir := filepath.Join(gitDir, "objects", "pack")
	es, _ := os.ReadDir(packDir)
	var idxName, packName string
	for _, e := range es {
		switch filepath.Ext(e.Name()) {
		case ".idx":
			idxName = filepath.Join(packDir, e.Name())
		case ".pack":
			packName = filepath.Join(packDir, e.Name())
		}
	}
	origIdx, _ := os.ReadFile(idxName)
	origPack, _ := os.ReadFile(packName)
	damage := func(name string, orig []byte, at int, cut bool) {
		b := bytes.Clone(orig)
		if cut {
			b = b[:at]
		} else {
			b[at] ^= 0x5a
		}
		_ = os.Chmod(name, 0o644)
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	try := func(what string) {
		o := newObjectReader(gitDir)
		for h, w := range want {
			typ, data, err := o.read(h)
			if err == nil && (typ != w.Type() || !bytes.Equal(data, mustRead(t, w))) {
				// A flipped bit in a zlib stream can go unnoticed only if the checksum
				// still matches; anything read must be what git reads.
				t.Fatalf("%s: %s read %s %d bytes without an error, git reads %s %d", what, h, typ, len(data), w.Type(), w.Size())
			}
			o.info(h)
			o.has(h)
		}
	}
	for _, at := range []int{0, 5, 8, 8 + 4*0x80, 8 + 1023, 1100, len(origIdx) / 2, len(origIdx) - 41, len(origIdx) - 30, len(origIdx) - 1} {
		damage(idxName, origIdx, at, false)
		try(fmt.Sprintf("idx byte %d changed", at))
		damage(idxName, origIdx, at, true)
		try(fmt.Sprintf("idx cut at %d", at))
	}
	damage(idxName, origIdx, len(origIdx), true)
	for at := 0; at < len(origPack); at += max(1, len(origPack)/97) {
		damage(packName, origPack, at, false)
		try(fmt.Sprintf("pack byte %d changed", at))
	}
	for _, at := range []int{0, 11, 12, 13, len(origPack) / 3, len(origPack) - 21, len(origPack) - 1} {
		damage(packName, origPack, at, true)
		try(fmt.Sprintf("pack cut at %d", at))
	}
}
