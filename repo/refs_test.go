package repo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
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
