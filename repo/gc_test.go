package repo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/ckpt-dev/ckpt/internal/gittest"
)

// looseObject writes an object that nothing names and dates its file age ago.
func looseObject(t *testing.T, r *Repo, content string, age time.Duration) Hash {
	t.Helper()
	ow := newRawWriter(r)
	h, err := ow.write(plumbing.BlobObject, []byte(content))
	if err != nil {
		t.Fatal(err)
	}
	when := time.Now().Add(-age)
	if err := os.Chtimes(r.loosePath(h), when, when); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestRepackRootsAndGrace: what a root names survives a repack that prunes everything
// unreachable at once; an unreachable object survives only while it is younger than the
// grace period, loose or packed.
func TestRepackRootsAndGrace(t *testing.T) {
	for _, tc := range []struct {
		name string
		// setup returns the object to look for after the repack.
		setup func(t *testing.T, r *Repo, hs []Hash) Hash
		prune time.Duration // objects older than this are pruned
		keep  bool
		// pruned and kept are the unreachable objects the report counts.
		pruned, kept int
	}{
		{"commit only a reflog names", func(t *testing.T, r *Repo, hs []Hash) Hash {
			// main moved back (as git reset would): the newest commit is in the reflog only
			if err := r.store.updateRef(r.GitDir, refUpdate{name: MainRef, old: hs[2], new: hs[0], msg: "reset"}, r.store.Opts.Author); err != nil {
				t.Fatal(err)
			}
			return hs[2]
		}, 0, true, 0, 0},
		{"MERGE_HEAD", func(t *testing.T, r *Repo, hs []Hash) Hash {
			p, err := r.Prepare(CommitRequest{Files: map[string][]byte{"checkpoint.md": []byte("theirs\n")}, Message: "theirs\n"})
			if err != nil {
				t.Fatal(err)
			}
			if err := r.SetMergeHead(p.Commit(), "merge\n"); err != nil {
				t.Fatal(err)
			}
			return p.Commit()
		}, 0, true, 0, 0},
		{"rejected write", func(t *testing.T, r *Repo, hs []Hash) Hash {
			_, h, err := r.Reject(map[string][]byte{"checkpoint.md": []byte("rejected\n")}, "rejected\n")
			if err != nil {
				t.Fatal(err)
			}
			return h
		}, 0, true, 0, 0},
		{"blob only the index names", func(t *testing.T, r *Repo, hs []Hash) Hash {
			h := looseObject(t, r, "staged\n", 0)
			if err := r.store.writeIndex(r.GitDir, r.WorkDir, map[string]Hash{"checkpoint.md": BlobHash([]byte("2\n")), "notes.md": h}, nil); err != nil {
				t.Fatal(err)
			}
			return h
		}, 0, true, 0, 0},
		{"young unreachable loose object", func(t *testing.T, r *Repo, hs []Hash) Hash {
			return looseObject(t, r, "young\n", time.Hour)
		}, DefaultPruneAge, true, 0, 1},
		{"old unreachable loose object", func(t *testing.T, r *Repo, hs []Hash) Hash {
			return looseObject(t, r, "old\n", 15*24*time.Hour)
		}, DefaultPruneAge, false, 1, 0},
		{"young unreachable packed object", func(t *testing.T, r *Repo, hs []Hash) Hash {
			h := looseObject(t, r, "young packed\n", 0)
			if err := r.Pack(); err != nil {
				t.Fatal(err)
			}
			return h
		}, DefaultPruneAge, true, 0, 1},
		{"old unreachable packed object", func(t *testing.T, r *Repo, hs []Hash) Hash {
			h := looseObject(t, r, "old packed\n", 0)
			if err := r.Pack(); err != nil {
				t.Fatal(err)
			}
			packs, _ := filepath.Glob(filepath.Join(r.GitDir, "objects", "pack", "*.pack"))
			old := time.Now().Add(-15 * 24 * time.Hour)
			for _, p := range packs {
				_ = os.Chtimes(p, old, old)
			}
			return h
		}, DefaultPruneAge, false, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, hs := threeCommits(t)
			h := tc.setup(t, r, hs)
			r.Reset()
			rep, err := r.Repack(time.Now().Add(time.Second - tc.prune))
			if err != nil {
				t.Fatal(err)
			}
			if rep.Pruned != tc.pruned || rep.Kept != tc.kept || rep.Missing != 0 {
				t.Errorf("report %+v, want %d pruned, %d kept", rep, tc.pruned, tc.kept)
			}
			if got := r.has(h); got != tc.keep {
				t.Errorf("after the repack, has %s = %v, want %v", short(h), got, tc.keep)
			}
			for _, c := range hs {
				if !r.has(c) {
					t.Errorf("main's commit %s is gone", short(c))
				}
			}
			gittest.Fsck(t, r.Dir)
			if out := gittest.Git(t, r.Dir, "count-objects", "-v"); !strings.Contains(out, "garbage: 0") {
				t.Errorf("git count-objects -v:\n%s", out)
			}
			// A second repack changes nothing that matters and keeps git content.
			if _, err := r.Repack(time.Now().Add(time.Second - tc.prune)); err != nil {
				t.Fatal(err)
			}
			gittest.Fsck(t, r.Dir)
		})
	}
}

// TestRepackPacksOnce: after a repack every reachable object is in one pack, no loose
// object is left, and a repack with nothing to do rewrites nothing.
func TestRepackPacksOnce(t *testing.T) {
	r, _ := threeCommits(t)
	rep, err := r.Repack(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Packed != 9 || rep.Pruned != 0 || rep.Kept != 0 {
		t.Errorf("report = %+v, want 9 packed (3 commits, 3 trees, 3 blobs)", rep)
	}
	packs, _ := filepath.Glob(filepath.Join(r.GitDir, "objects", "pack", "*.pack"))
	loose, _ := r.looseObjects()
	if len(packs) != 1 || len(loose) != 0 {
		t.Fatalf("%d packs, %d loose objects; want 1 and 0", len(packs), len(loose))
	}
	fi, _ := os.Stat(packs[0])
	if _, err := r.Repack(time.Time{}); err != nil {
		t.Fatal(err)
	}
	again, _ := filepath.Glob(filepath.Join(r.GitDir, "objects", "pack", "*.pack"))
	if len(again) != 1 || again[0] != packs[0] {
		t.Errorf("packs after a second repack: %v, want %v", again, packs)
	}
	if fi2, _ := os.Stat(packs[0]); !fi2.ModTime().Equal(fi.ModTime()) {
		t.Errorf("a repack with nothing to do rewrote the pack")
	}
	gittest.Fsck(t, r.Dir)
}

// TestWritePackOrder: a new pack goes into place before its index, as git does it; while
// its index is missing ckpt's readers (go-git, which lists packs by their .pack file) go on
// reading as if it were not there, and a torn index left by an earlier writer is replaced,
// not trusted.
func TestWritePackOrder(t *testing.T) {
	r, hs := threeCommits(t)
	if err := r.Pack(); err != nil { // main's history is now in a pack only
		t.Fatal(err)
	}
	blob := looseObject(t, r, "to pack\n", 0)
	between := 0
	afterPackRename = func(pack string) {
		between++
		if _, err := os.Stat(pack); err != nil {
			t.Errorf("pack not in place before its index: %v", err)
		}
		if _, err := os.Stat(strings.TrimSuffix(pack, ".pack") + ".idx"); err == nil {
			t.Errorf("index in place before its pack was renamed")
		}
		fresh, err := r.store.Open("g")
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hs {
			if _, err := fresh.Files(h); err != nil {
				t.Errorf("a reader fails while the new pack has no index: %v", err)
			}
		}
	}
	defer func() { afterPackRename = nil }()
	name, err := r.writePack(r.reader().storage, []Hash{blob})
	if err != nil {
		t.Fatal(err)
	}
	afterPackRename = nil
	if between != 1 {
		t.Fatalf("the hook ran %d times", between)
	}
	base := filepath.Join(r.GitDir, "objects", "pack", name)
	good, err := os.ReadFile(base + ".idx")
	if err != nil {
		t.Fatal(err)
	}
	// A writer killed while it wrote the index in place (go-git's own pack writer does
	// that) leaves it torn. Writing the same pack again must not keep it.
	_ = os.Chmod(base+".idx", 0o644)
	if err := os.WriteFile(base+".idx", good[:len(good)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.writePack(r.reader().storage, []Hash{blob}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(base + ".idx"); string(got) != string(good) {
		t.Errorf("torn index kept")
	}
	gittest.Fsck(t, r.Dir)
}

// TestRewriteMain: the commits a plan gives replace main's history from start on, each
// keeping its source's tree, the first with the commit before start as parent; main moves by
// compare-and-swap and the reflog keeps the old head.
func TestRewriteMain(t *testing.T) {
	r, hs := threeCommits(t)
	var seen []Hash
	before, after, err := r.RewriteMain("test: rewrite", func(chain []CommitInfo) (int, []Recommit, error) {
		for _, c := range chain {
			seen = append(seen, c.Hash)
		}
		return 1, []Recommit{{From: hs[2], Message: "squashed\n"}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seen) != fmt.Sprint(hs) {
		t.Errorf("plan saw %v, want oldest first %v", seen, hs)
	}
	if before != hs[2] || after == hs[2] || mustHead(t, r) != after {
		t.Fatalf("before %s after %s head %s", short(before), short(after), short(mustHead(t, r)))
	}
	ci, err := r.CommitInfo(after)
	if err != nil {
		t.Fatal(err)
	}
	if len(ci.Parents) != 1 || ci.Parents[0] != hs[0] || ci.Message != "squashed\n" {
		t.Errorf("new commit: parents %v, message %q", ci.Parents, ci.Message)
	}
	files, _ := r.Files(after)
	if string(files["checkpoint.md"]) != "2\n" {
		t.Errorf("new commit holds %q, want the source's tree", files["checkpoint.md"])
	}
	if out := gittest.Git(t, r.Dir, "reflog", "-1", "--format=%gs %H"); !strings.HasPrefix(out, "test: rewrite "+after.String()) {
		t.Errorf("reflog: %q", out)
	}
	gittest.Fsck(t, r.Dir)

	// A plan that changes nothing leaves main alone.
	if b, a, err := r.RewriteMain("none", func([]CommitInfo) (int, []Recommit, error) { return -1, nil, nil }); err != nil || b != after || a != after {
		t.Errorf("no-op rewrite: %s %s %v", short(b), short(a), err)
	}
}

// TestRepackIndexesOrphanPack: a pack whose index is missing (a writer killed between its
// two renames) hides its objects from every reader; gc writes the index and goes on.
func TestRepackIndexesOrphanPack(t *testing.T) {
	r, hs := threeCommits(t)
	if err := r.Pack(); err != nil {
		t.Fatal(err)
	}
	idx, _ := filepath.Glob(filepath.Join(r.GitDir, "objects", "pack", "*.idx"))
	if len(idx) != 1 {
		t.Fatalf("%d packs", len(idx))
	}
	if err := os.Remove(idx[0]); err != nil {
		t.Fatal(err)
	}
	pack := strings.TrimSuffix(idx[0], ".idx") + ".pack"
	old := time.Now().Add(-time.Minute)
	_ = os.Chtimes(pack, old, old)
	r.Reset()
	if _, err := r.Files(hs[0]); err == nil {
		t.Fatalf("go-git read an object of a pack without index: the test proves nothing")
	}
	if _, err := r.Repack(time.Time{}); err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		if _, err := r.Files(h); err != nil {
			t.Errorf("after gc: %v", err)
		}
	}
	gittest.Fsck(t, r.Dir)
}
