package repo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/ckpt-dev/ckpt/internal/gittest"
)

// threeCommits is a session with three commits on main, all loose objects.
func threeCommits(t *testing.T) (*Repo, []Hash) {
	t.Helper()
	st := testStore(t)
	r, first, err := st.Init("g", InitOptions{Files: map[string][]byte{"checkpoint.md": []byte("0\n")}})
	if err != nil {
		t.Fatal(err)
	}
	hs := []Hash{first}
	for i := 1; i < 3; i++ {
		h, _, err := r.Commit(CommitRequest{Files: map[string][]byte{"checkpoint.md": fmt.Appendf(nil, "%d\n", i)}, Message: "m\n"})
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	return r, hs
}

// TestPrepareRefusesMissingParent: a commit whose parent the repository lacks is refused,
// naming the parent.
func TestPrepareRefusesMissingParent(t *testing.T) {
	r, hs := threeCommits(t)
	blob := BlobHash([]byte("2\n"))
	missing := plumbing.NewHash("0123456789abcdef0123456789abcdef01234567")
	for _, tc := range []struct {
		name    string
		parents []Hash
		ok      bool
	}{
		{"head", nil, true},
		{"merge of two commits", []Hash{hs[2], hs[0]}, true},
		{"missing second parent", []Hash{hs[2], missing}, false},
		{"missing only parent", []Hash{missing}, false},
		{"parent is a blob", []Hash{hs[2], blob}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Prepare(CommitRequest{Files: map[string][]byte{"checkpoint.md": []byte(tc.name)}, Parents: tc.parents, Force: tc.parents != nil, Message: "m\n"})
			if (err == nil) != tc.ok {
				t.Fatalf("Prepare = %v, want ok=%v", err, tc.ok)
			}
			if err != nil && (!errors.Is(err, ErrMissingParent) || !strings.Contains(err.Error(), tc.parents[len(tc.parents)-1].String())) {
				t.Errorf("error %q does not name the missing parent", err)
			}
		})
	}
}

// TestLostMainRef: a missing, zero or malformed main in a repository with history is an
// error that names the reflog entry to restore; a fresh repository has no commit yet.
func TestLostMainRef(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(t *testing.T, gitDir string)
		state  string
	}{
		{"deleted", func(t *testing.T, d string) { _ = os.Remove(filepath.Join(d, "refs/heads/main")) }, "is missing"},
		{"zeroed", func(t *testing.T, d string) {
			_ = os.WriteFile(filepath.Join(d, "refs/heads/main"), []byte(ZeroHash.String()+"\n"), 0o644)
		}, "holds the zero hash"},
		{"garbled", func(t *testing.T, d string) {
			_ = os.WriteFile(filepath.Join(d, "refs/heads/main"), []byte("garbage\n"), 0o644)
		}, "is malformed"},
		{"deleted with its reflog", func(t *testing.T, d string) {
			_ = os.Remove(filepath.Join(d, "refs/heads/main"))
			_ = os.Remove(filepath.Join(d, "logs/refs/heads/main"))
		}, "is missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, hs := threeCommits(t)
			tc.break_(t, r.GitDir)
			_, err := r.Head()
			var lost *LostRefError
			if !errors.As(err, &lost) || !errors.Is(err, ErrLostRef) {
				t.Fatalf("Head = %v, want a LostRefError", err)
			}
			if lost.State != tc.state || lost.Entry == nil || lost.Entry.New != hs[2] {
				t.Errorf("lost = %+v, entry %+v; want state %q and entry %s", lost, lost.Entry, tc.state, short(hs[2]))
			}
			if !strings.Contains(err.Error(), hs[2].String()) || !strings.Contains(lost.Hint(), "ckpt doctor -s g") {
				t.Errorf("error %q (hint %q) names neither the entry nor doctor", err, lost.Hint())
			}
			if _, _, err := r.Commit(CommitRequest{Files: map[string][]byte{"checkpoint.md": []byte("new root?\n")}, Message: "m\n"}); !errors.Is(err, ErrLostRef) {
				t.Errorf("Commit = %v, want ErrLostRef", err)
			}
		})
	}
}

// TestFirstCommitCutShort: objects of a first commit that a crash cut short before its
// ref (no ref, no reflog, no commit with a parent) are no history: the commit can be
// made again. With a second commit's objects it is a lost main.
func TestFirstCommitCutShort(t *testing.T) {
	for _, tc := range []struct {
		commits int
		lost    bool
	}{{1, false}, {2, true}} {
		st := testStore(t)
		r, _, err := st.Init("f", InitOptions{Files: map[string][]byte{"checkpoint.md": []byte("0\n")}})
		if err != nil {
			t.Fatal(err)
		}
		if tc.commits == 2 {
			if _, _, err := r.Commit(CommitRequest{Files: map[string][]byte{"checkpoint.md": []byte("1\n")}, Message: "m\n"}); err != nil {
				t.Fatal(err)
			}
		}
		_ = os.Remove(filepath.Join(r.GitDir, "refs", "heads", "main"))
		_ = os.RemoveAll(filepath.Join(r.GitDir, "logs"))
		r.Reset()
		h, err := r.Head()
		if lost := errors.Is(err, ErrLostRef); lost != tc.lost || (!lost && (err != nil || h != ZeroHash)) {
			t.Errorf("%d commit(s): Head = %s %v, want lost=%v", tc.commits, short(h), err, tc.lost)
		}
	}
}

// TestSetRefs: refs moved together land in packed-refs (a loose one is moved in place),
// deleted ones leave it, peeled lines of untouched refs stay, each moved ref gets one
// reflog entry where it has a reflog (the transport creates none, as git in a bare
// repository), and git reads every ref as ckpt does.
func TestSetRefs(t *testing.T) {
	r, hs := threeCommits(t)
	st := r.store
	tr, err := st.Transport()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CopyHistory(r, tr, hs[2]); err != nil {
		t.Fatal(err)
	}
	// A packed-refs that git wrote: a ref with a peeled line, and one ckpt will delete.
	if err := os.WriteFile(filepath.Join(tr.GitDir, "packed-refs"), []byte("# pack-refs with: peeled fully-peeled sorted \n"+
		hs[0].String()+" refs/heads/sessions/gone\n"+hs[1].String()+" refs/heads/sessions/kept\n^"+hs[1].String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := tr.SetRef("refs/heads/sessions/loose", hs[0]); err != nil { // a loose ref
		t.Fatal(err)
	}
	// A reflog an older ckpt wrote: appended to; no other reflog is created.
	oldLog := filepath.Join(tr.GitDir, "logs", "refs", "heads", "sessions", "new")
	if err := os.MkdirAll(filepath.Dir(oldLog), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(oldLog, []byte(ZeroHash.String()+" "+hs[0].String()+" A U Thor <a@example.com> 1700000000 +0000\tckpt transport\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	up := map[string]Hash{
		"refs/heads/sessions/gone":  ZeroHash,
		"refs/heads/sessions/loose": hs[2],
		"refs/heads/sessions/new":   hs[2],
		"refs/remotes/o/sessions/a": hs[1],
		"refs/heads/sessions/same":  ZeroHash, // absent and stays so
	}
	if err := tr.SetRefs(up, "ckpt transport"); err != nil {
		t.Fatal(err)
	}
	want := map[string]Hash{"refs/heads/sessions/kept": hs[1], "refs/heads/sessions/loose": hs[2], "refs/heads/sessions/new": hs[2], "refs/remotes/o/sessions/a": hs[1]}
	got, err := tr.Refs("refs/")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ckpt reads %v, want %v", got, want)
	}
	git := map[string]Hash{}
	for _, l := range strings.Split(strings.TrimSpace(gittest.Git(t, tr.GitDir, "for-each-ref", "--format=%(objectname) %(refname)")), "\n") {
		h, n, _ := strings.Cut(l, " ")
		git[n] = plumbing.NewHash(h)
	}
	if fmt.Sprint(git) != fmt.Sprint(want) {
		t.Errorf("git reads %v, want %v", git, want)
	}
	packed, _ := os.ReadFile(filepath.Join(tr.GitDir, "packed-refs"))
	if !strings.Contains(string(packed), hs[1].String()+" refs/heads/sessions/kept\n^"+hs[1].String()+"\n") || strings.Contains(string(packed), "sessions/gone") || strings.Contains(string(packed), "sessions/loose") {
		t.Errorf("packed-refs:\n%s", packed)
	}
	for name, n := range map[string]int{"refs/heads/sessions/new": 2, "refs/remotes/o/sessions/a": 0, "refs/heads/sessions/loose": 0} {
		if es := readReflog(tr.GitDir, "logs/"+name); len(es) != n || n > 0 && es[len(es)-1].New != up[name] {
			t.Errorf("reflog of %s: %+v, want %d entries ending at %s", name, es, n, up[name])
		}
	}
	if _, err := os.Stat(filepath.Join(tr.GitDir, "logs", "refs", "remotes")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the transport has new reflogs: %v", err)
	}
	// Nothing to do: packed-refs is not rewritten.
	fi, _ := os.Stat(filepath.Join(tr.GitDir, "packed-refs"))
	if err := tr.SetRefs(map[string]Hash{"refs/heads/sessions/new": hs[2]}, "again"); err != nil {
		t.Fatal(err)
	}
	if fi2, _ := os.Stat(filepath.Join(tr.GitDir, "packed-refs")); !os.SameFile(fi, fi2) {
		t.Error("packed-refs rewritten with nothing changed")
	}
	if err := tr.SetRefs(map[string]Hash{"HEAD": hs[0]}, "x"); err == nil {
		t.Error("SetRefs took HEAD")
	}
}
