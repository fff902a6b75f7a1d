package repo

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"

	"github.com/ckpt-dev/ckpt/internal/gittest"
)

// versions makes session id with n commits of a 4 KB checkpoint, one line changed each.
func versions(t *testing.T, st *Store, id SessionID, n int) (*Repo, []Hash) {
	t.Helper()
	r, h, err := st.Init(id, InitOptions{Files: map[string][]byte{"checkpoint.md": version(0), "notes.md": []byte("# Notes\n")}})
	if err != nil {
		t.Fatal(err)
	}
	heads := []Hash{h}
	for v := 1; v < n; v++ {
		h, _, err := r.Commit(CommitRequest{Files: map[string][]byte{"checkpoint.md": version(v), "notes.md": []byte("# Notes\n")}, Message: fmt.Sprintf("version %d\n", v)})
		if err != nil {
			t.Fatal(err)
		}
		heads = append(heads, h)
	}
	return r, heads
}

func version(v int) []byte {
	var b strings.Builder
	for l := range 60 {
		rev := 0
		if l == v%60 {
			rev = v
		}
		fmt.Fprintf(&b, "- [ ] task %02d: keep the checkpoint in step with the template (rev %d)\n", l, rev)
	}
	return []byte(b.String())
}

// copyAndCheck copies head's history from src into a new transport and a new session
// made from it, and checks both with git and by reading every file back.
func copyAndCheck(t *testing.T, src *Repo, head Hash) {
	t.Helper()
	st := testStore(t)
	tr, err := st.Transport()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CopyHistory(src, tr, head); err != nil {
		t.Fatal(err)
	}
	if err := tr.SetRef(SessionRefPrefix+"x", head); err != nil {
		t.Fatal(err)
	}
	if out, err := gittest.Run(t, tr.GitDir, "fsck", "--full", "--strict", "--no-dangling"); err != nil || strings.Contains(out, "error") {
		t.Fatalf("git fsck of the transport: %v\n%s", err, out)
	}
	c, err := st.Materialize("copy", tr, head, nil)
	if err != nil {
		t.Fatal(err)
	}
	gittest.Fsck(t, c.Dir)
	want, err := src.Files(head)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Files(head)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range want {
		if !bytes.Equal(got[name], b) {
			t.Errorf("%s differs in the copy", name)
		}
	}
}

// TestCopierSources: histories copy whole whatever shape their objects are in: loose,
// packed by ckpt (older versions deltas of newer ones), packed by git, half packed.
func TestCopierSources(t *testing.T) {
	for _, tc := range []struct {
		name string
		prep func(t *testing.T, r *Repo)
	}{
		{"loose", func(*testing.T, *Repo) {}},
		{"ckpt-pack", func(t *testing.T, r *Repo) {
			if err := r.Pack(); err != nil {
				t.Fatal(err)
			}
		}},
		{"git-pack", func(t *testing.T, r *Repo) { gittest.Git(t, r.Dir, "repack", "-adq", "--window=50"); r.Reset() }},
		{"git-ref-delta", func(t *testing.T, r *Repo) {
			gittest.Git(t, r.Dir, "-c", "repack.useDeltaBaseOffset=false", "repack", "-adq")
			r.Reset()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := testStore(t)
			r, heads := versions(t, st, "s", 30)
			tc.prep(t, r)
			copyAndCheck(t, r, heads[len(heads)-1])
			// a history partly copied already, then the rest
			st2 := testStore(t)
			tr, _ := st2.Transport()
			if _, err := CopyHistory(r, tr, heads[10]); err != nil {
				t.Fatal(err)
			}
			if _, err := CopyHistory(r, tr, heads[len(heads)-1]); err != nil {
				t.Fatal(err)
			}
			_ = tr.SetRef(SessionRefPrefix+"x", heads[len(heads)-1])
			if out, err := gittest.Run(t, tr.GitDir, "fsck", "--full", "--strict", "--no-dangling"); err != nil || strings.Contains(out, "error") {
				t.Fatalf("git fsck of the transport: %v\n%s", err, out)
			}
		})
	}
}

// TestCopierBaseWaitingForItself: an older version stored as a delta of a newer one, the
// newer one a delta of an object that does not travel (kept in the pack for a reflog, say),
// so that the newer one is stored as a delta of its parent version, the older one: the copy
// must not wait for the older one while writing it (it recursed until the chain limit).
func TestCopierBaseWaitingForItself(t *testing.T) {
	st := testStore(t)
	r, heads := versions(t, st, "s", 2)
	g := r.reader()
	files := func(h Hash) map[string]Hash {
		f, err := r.FileHashes(h)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	older, newer := files(heads[0])["checkpoint.md"], files(heads[1])["checkpoint.md"]
	// An object only the pack holds: the newer version with a line more.
	aside := append(version(1), "- a line of a version no commit names\n"...)
	asideHash, err := newRawWriter(r).write(plumbing.BlobObject, aside)
	if err != nil {
		t.Fatal(err)
	}
	loose, _ := r.looseObjects()
	pw, err := r.newPackWriter(len(loose))
	if err != nil {
		t.Fatal(err)
	}
	read := func(h Hash) []byte {
		_, b, err := g.objs.read(h)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(pw.writeWhole(asideHash, plumbing.BlobObject, aside))
	must(pw.writeDelta(newer, asideHash, packfile.DiffDelta(aside, read(newer))))
	must(pw.writeDelta(older, newer, packfile.DiffDelta(read(newer), read(older))))
	for _, h := range loose {
		if !pw.has(h) {
			typ, b, err := g.objs.read(h)
			must(err)
			must(pw.writeWhole(h, typ, b))
		}
	}
	if _, err := pw.finish(); err != nil {
		t.Fatal(err)
	}
	for _, h := range loose {
		_ = os.Remove(r.loosePath(h))
	}
	r.Reset()
	gittest.Fsck(t, r.Dir)
	copyAndCheck(t, r, heads[1])
}
