package repo

import (
	"fmt"
	"testing"
)

// TestCommitFiles: the push scan's lean read of a commit says what go-git's decoder and
// FileHashes say: parents, message, files.
func TestCommitFiles(t *testing.T) {
	st := testStore(t)
	r, heads := versions(t, st, "cf", 4)
	for _, h := range heads {
		got, err := r.CommitFiles(h)
		if err != nil {
			t.Fatal(err)
		}
		ci, err := r.CommitInfo(h)
		if err != nil {
			t.Fatal(err)
		}
		files, err := r.FileHashes(h)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got.Parents) != fmt.Sprint(ci.Parents) || got.Message != ci.Message || fmt.Sprint(got.Files) != fmt.Sprint(files) {
			t.Errorf("CommitFiles(%s) = %+v, want parents %v, message %q, files %v", h, got, ci.Parents, ci.Message, files)
		}
	}
	tree, err := r.reader().commitTree(heads[1])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitFiles(tree); err == nil {
		t.Error("CommitFiles read a tree as a commit")
	}
	if _, err := r.CommitFiles(Hash{1}); err == nil {
		t.Error("CommitFiles read a missing commit")
	}
}
