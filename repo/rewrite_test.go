package repo

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt/internal/gittest"
)

// replaceWord is a Blob function that replaces every "WORD" with "gone".
func replaceWord(word string) func(string, []byte) ([]byte, error) {
	return func(_ string, b []byte) ([]byte, error) {
		return bytes.ReplaceAll(b, []byte(word), []byte("gone")), nil
	}
}

// allObjects is what `git cat-file --batch-all-objects --batch` prints: every object,
// reachable or not, loose or packed.
func allObjects(t *testing.T, dir string) string {
	t.Helper()
	return gittest.Git(t, dir, "cat-file", "--batch-all-objects", "--batch")
}

func TestRewriteHistory(t *testing.T) {
	st := testStore(t)
	r, _, err := st.Init("alpha", InitOptions{Files: map[string][]byte{"checkpoint.md": []byte("# C\n")}, Message: "start\n"})
	if err != nil {
		t.Fatal(err)
	}
	word := "sec" + "ret-word-42"
	commit := func(cp, msg string) Hash {
		t.Helper()
		h, _, err := r.Commit(CommitRequest{Files: map[string][]byte{"checkpoint.md": []byte(cp), "notes.md": []byte("# N\n")}, Message: msg})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	c1 := commit("# C\none\n", "one\n")
	commit("# C\none\n"+word+"\n", "two "+word+"\n")
	// A commit taken back leaves an object only the reflog names.
	p, err := r.Prepare(CommitRequest{Files: map[string][]byte{"checkpoint.md": []byte("# C\nundone " + word + "\n")}, Message: "undone\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(); err != nil {
		t.Fatal(err)
	}
	if err := p.Undo(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Reject(map[string][]byte{"checkpoint.md": []byte("# C\nrejected " + word + "\n")}, "rejected\n"); err != nil {
		t.Fatal(err)
	}
	head := commit("# C\none\nclean again\n", "three\n")
	r.MaybePack()
	if err := r.Pack(); err != nil { // some of it packed, some loose
		t.Fatal(err)
	}
	commit("# C\none\nclean again\nfour\n", "four\n")
	head, _ = r.Head()
	if !strings.Contains(allObjects(t, r.Dir), word) {
		t.Fatal("setup: the word is not in the repository")
	}

	// A dry run computes the same rewrite and writes nothing.
	before := allObjects(t, r.Dir)
	dry, err := r.RewriteHistory(RewriteOptions{Blob: replaceWord(word), Message: func(m string) string { return strings.ReplaceAll(m, word, "gone") }, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if allObjects(t, r.Dir) != before {
		t.Error("a dry run wrote objects")
	}
	rw, err := r.RewriteHistory(RewriteOptions{Blob: replaceWord(word), Message: func(m string) string { return strings.ReplaceAll(m, word, "gone") }, Reason: "test: rewrite"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(dry.Commits) != fmt.Sprint(rw.Commits) || fmt.Sprint(dry.Refs) != fmt.Sprint(rw.Refs) {
		t.Errorf("dry run %v %v, real %v %v", dry.Commits, dry.Refs, rw.Commits, rw.Refs)
	}
	if rw.New(c1) != c1 {
		t.Error("a commit before the word changed")
	}
	if rw.New(head) == head {
		t.Error("head did not change")
	}
	if len(rw.Refs) != 2 { // main and rejected/1
		t.Errorf("refs = %v", rw.Refs)
	}
	if err := rw.Finish(); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Head(); got != rw.New(head) {
		t.Errorf("main = %s, want %s", got, rw.New(head))
	}
	if all := allObjects(t, r.Dir); strings.Contains(all, word) {
		t.Errorf("the word is still in an object")
	}
	// Nor in a file of the git directory in the clear: reflogs, packed-refs, MERGE_MSG.
	filepath.WalkDir(r.GitDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(word)) {
				t.Errorf("%s holds the word", p)
			}
		}
		return nil
	})
	gittest.Fsck(t, r.Dir)
	gittest.Clean(t, r.Dir)
	// The history is the same shape, with the same authors and dates.
	oldLog := "four\nthree\ntwo gone\none\nstart\n"
	if got := gittest.Git(t, r.Dir, "log", "--format=%s"); got != oldLog {
		t.Errorf("log:\n%s\nwant\n%s", got, oldLog)
	}
	if got := gittest.Git(t, r.Dir, "show", "refs/ckpt/rejected/1:checkpoint.md"); got != "# C\nrejected gone\n" {
		t.Errorf("rejected write = %q", got)
	}
	if got := gittest.Git(t, r.Dir, "reflog", "--format=%gs", "main"); strings.Contains(got, word) {
		t.Errorf("reflog: %s", got)
	}

	// Nothing to rewrite: nothing changes.
	again, err := r.RewriteHistory(RewriteOptions{Blob: replaceWord(word)})
	if err != nil || again.Changed() {
		t.Fatalf("second rewrite: %v %v", again.Commits, err)
	}
}

func TestRewriteHistoryKeeps(t *testing.T) {
	st := testStore(t)
	r, _, err := st.Init("alpha", InitOptions{Files: map[string][]byte{"checkpoint.md": []byte("# C\n")}, Message: "start\n"})
	if err != nil {
		t.Fatal(err)
	}
	word := "sec" + "ret-word-42"
	pushed, _, err := r.Commit(CommitRequest{Files: map[string][]byte{"checkpoint.md": []byte("# C\n" + word + "\n")}, Message: "pushed\n"})
	if err != nil {
		t.Fatal(err)
	}
	local, _, err := r.Commit(CommitRequest{Files: map[string][]byte{"checkpoint.md": []byte("# C\n" + word + "\nlocal\n")}, Message: "local\n"})
	if err != nil {
		t.Fatal(err)
	}
	rw, err := r.RewriteHistory(RewriteOptions{Blob: replaceWord(word), Keep: []Hash{pushed}})
	if err != nil {
		t.Fatal(err)
	}
	if rw.New(pushed) != pushed || rw.New(local) == local || rw.Kept != 2 {
		t.Fatalf("kept %d, pushed -> %s, local -> %s", rw.Kept, rw.New(pushed), rw.New(local))
	}
	if err := rw.Finish(); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, r.Dir, "rev-parse", "HEAD~1"); strings.TrimSpace(got) != pushed.String() {
		t.Errorf("parent of the new head = %s, want the pushed commit %s", got, pushed)
	}
	if got := gittest.Git(t, r.Dir, "show", "HEAD:checkpoint.md"); got != "# C\ngone\nlocal\n" {
		t.Errorf("head = %q", got)
	}
	gittest.Fsck(t, r.Dir)
}

func TestRewriteHistoryRefusesPendingMerge(t *testing.T) {
	st := testStore(t)
	r, h, err := st.Init("alpha", InitOptions{Files: map[string][]byte{"checkpoint.md": []byte("# C\n")}, Message: "start\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.SetMergeHead(h, "merge\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.RewriteHistory(RewriteOptions{}); err == nil || !strings.Contains(err.Error(), ErrMergePending.Error()) {
		t.Fatalf("err = %v", err)
	}
}
