package repo

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/ckpt-dev/ckpt/internal/gittest"
)

// gitObjects reads every object git finds from every ref and reflog entry of a repository,
// with `git rev-list --objects` and `git cat-file --batch`: id -> type and bytes.
func gitObjects(t *testing.T, dir string) map[Hash]*plumbing.MemoryObject {
	t.Helper()
	ids := gittest.Git(t, dir, "rev-list", "--objects", "--all", "--reflog")
	var in bytes.Buffer
	for _, l := range strings.Split(strings.TrimSpace(ids), "\n") {
		id, _, _ := strings.Cut(l, " ")
		in.WriteString(id + "\n")
	}
	cmd := exec.Command("git", "-C", dir, "cat-file", "--batch")
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git cat-file --batch: %v", err)
	}
	objs := map[Hash]*plumbing.MemoryObject{}
	rd := bufio.NewReader(bytes.NewReader(out))
	for {
		head, err := rd.ReadString('\n')
		if err == io.EOF {
			break
		}
		f := strings.Fields(head)
		if err != nil || len(f) != 3 {
			t.Fatalf("git cat-file --batch: %q", head)
		}
		typ, err := plumbing.ParseObjectType(f[1])
		if err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.Atoi(f[2])
		data := make([]byte, n+1) // and the newline after it
		if _, err := io.ReadFull(rd, data); err != nil {
			t.Fatal(err)
		}
		o := &plumbing.MemoryObject{}
		o.SetType(typ)
		o.Write(data[:n])
		objs[plumbing.NewHash(f[0])] = o
	}
	return objs
}

// TestGitAndGoGitReadTheSameRepository writes a session the ways ckpt writes one (commits,
// a merge commit, a rejected write, main rewritten as gc's squash does, a pack, a copy
// through the transport into a clone), then reads each repository with the real git (fsck --full
// --strict, rev-list, cat-file, log) and with go-git on its own (PlainOpen, not ckpt's
// storage), and compares: the same objects with the same bytes, the same history. Every
// commit and tree decoded by go-git and encoded again gives its bytes back: go-git's
// encoders wrote them.
func TestGitAndGoGitReadTheSameRepository(t *testing.T) {
	st := testStore(t)
	r, _, err := st.Init("gg", InitOptions{Files: map[string][]byte{"checkpoint.md": []byte("# C\n"), "notes.md": []byte("# N\n")}, Config: map[string]string{"template": "six"}, Message: "checkpoint(init): start\n\nCkpt-Session: gg\nCkpt-Trigger: init\n"})
	if err != nil {
		t.Fatal(err)
	}
	old := st.Opts.Now().Add(-72 * time.Hour)
	for i := range 12 {
		trigger := "sparse"
		if i%4 == 3 {
			trigger = "full"
		}
		_, _, err := r.Commit(CommitRequest{
			Files:   map[string][]byte{"checkpoint.md": fmt.Appendf(nil, "# C\n%d\n", i), "notes.md": []byte("# N\n")},
			Message: fmt.Sprintf("checkpoint(%s): %d\n\nCkpt-Session: gg\nCkpt-Trigger: %s\nCkpt-Sections: 🎯\n", trigger, i, trigger),
			When:    old.Add(time.Duration(i) * time.Minute),
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Pack(); err != nil { // what follows stays loose
		t.Fatal(err)
	}
	head := mustHead(t, r)
	side, err := r.Prepare(CommitRequest{Files: map[string][]byte{"checkpoint.md": []byte("# C\nside\n")}, Message: "side\n", Parents: []Hash{head}, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Commit(CommitRequest{Files: map[string][]byte{"checkpoint.md": []byte("# C\nmerged\n"), "notes.md": []byte("# N\n")}, Message: "merge\n", Parents: []Hash{head, side.Commit()}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Reject(map[string][]byte{"checkpoint.md": []byte("rejected <bytes>\n")}, "rejected write\n"); err != nil {
		t.Fatal(err)
	}
	// gc's squash: the second to the fifth commit become one, the rest get new parents.
	before, after, err := r.RewriteMain("test: squash", func(chain []CommitInfo) (int, []Recommit, error) {
		out := []Recommit{{From: chain[4].Hash, Message: "checkpoint(sparse): 4 squashed\n\nCkpt-Squashed: 4\n"}}
		for _, c := range chain[5:] {
			out = append(out, Recommit{From: c.Hash, Message: c.Message})
		}
		return 1, out, nil
	})
	if err != nil || before == after {
		t.Fatalf("rewrite main: %s -> %s, %v", before, after, err)
	}
	if loose, _ := r.looseObjects(); len(loose) == 0 || len(packNames(r.GitDir)) == 0 {
		t.Fatalf("%d loose objects, packs %v: want both", len(loose), packNames(r.GitDir))
	}
	tr, err := st.Transport()
	if err != nil {
		t.Fatal(err)
	}
	head = mustHead(t, r)
	if _, err := CopyHistory(r, tr, head); err != nil {
		t.Fatal(err)
	}
	clone, err := st.Materialize("gg-clone", tr, head, map[string]string{"template": "six"})
	if err != nil {
		t.Fatal(err)
	}

	for _, dir := range []string{r.Dir, clone.Dir} {
		t.Run(dir[strings.LastIndex(dir, "/")+1:], func(t *testing.T) {
			gittest.Fsck(t, dir)
			objs := gitObjects(t, dir)
			if len(objs) < 10 {
				t.Fatalf("git found %d objects", len(objs))
			}
			repo, err := git.PlainOpen(dir)
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[plumbing.ObjectType]int{}
			for h, want := range objs {
				got, err := repo.Storer.EncodedObject(plumbing.AnyObject, h)
				if err != nil {
					t.Fatalf("go-git cannot read %s, which git reads: %v", h, err)
				}
				gotBytes, wantBytes := mustRead(t, got), mustRead(t, want)
				if got.Type() != want.Type() || !bytes.Equal(gotBytes, wantBytes) {
					t.Fatalf("%s: go-git reads a %s of %d bytes, git a %s of %d", h, got.Type(), len(gotBytes), want.Type(), len(wantBytes))
				}
				kinds[got.Type()]++
				// Decoded by go-git and encoded again, the object is the same bytes.
				again := &plumbing.MemoryObject{}
				switch got.Type() {
				case plumbing.CommitObject:
					c := &object.Commit{}
					if err := c.Decode(got); err != nil {
						t.Fatal(err)
					}
					if err := c.Encode(again); err != nil {
						t.Fatal(err)
					}
				case plumbing.TreeObject:
					tr := &object.Tree{}
					if err := tr.Decode(got); err != nil {
						t.Fatal(err)
					}
					if err := tr.Encode(again); err != nil {
						t.Fatal(err)
					}
				default:
					continue
				}
				if again.Hash() != h {
					t.Errorf("%s %s is not what go-git encodes from it:\n%q\n%q", got.Type(), h, gotBytes, mustRead(t, again))
				}
			}
			if kinds[plumbing.CommitObject] == 0 || kinds[plumbing.TreeObject] == 0 || kinds[plumbing.BlobObject] == 0 {
				t.Errorf("objects compared: %v", kinds)
			}
			// The same history, newest first, from both.
			var fromGoGit []string
			iter, err := repo.Log(&git.LogOptions{All: true})
			if err != nil {
				t.Fatal(err)
			}
			_ = iter.ForEach(func(c *object.Commit) error { fromGoGit = append(fromGoGit, c.Hash.String()); return nil })
			fromGit := strings.Fields(gittest.Git(t, dir, "log", "--all", "--format=%H"))
			slices.Sort(fromGoGit)
			slices.Sort(fromGit)
			if !slices.Equal(fromGoGit, fromGit) {
				t.Errorf("go-git's log:\n%v\ngit's log:\n%v", fromGoGit, fromGit)
			}
			if h, err := repo.Head(); err != nil || h.Hash() != head || h.Name() != MainRef {
				t.Errorf("go-git's HEAD: %v, %v; want %s at %s", h, err, MainRef, head)
			}
		})
	}
}
