package fssnap

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestDiffSeesEveryChange: the snapshots that prove "nothing written" must see a write of
// any kind, or those proofs prove nothing.
func TestDiffSeesEveryChange(t *testing.T) {
	root := t.TempDir()
	write := func(p, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/changed", "old")
	write("a/removed", "x")
	write("a/chmod", "x")
	write("state/noise", "x")
	write("same", "x")
	before := Take(t, root)
	write("a/changed", "new")
	if err := os.Remove(filepath.Join(root, "a/removed")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "a/chmod"), 0o600); err != nil {
		t.Fatal(err)
	}
	write("b/c/added", "")
	if err := os.Symlink("/etc/passwd", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	write("state/noise", "y")
	got := Diff(before, Take(t, root), Under("state"))
	want := []string{"~ a/changed", "~ a/chmod", "- a/removed", "+ b", "+ b/c", "+ b/c/added", "+ link"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Diff = %q, want %q", got, want)
	}
	if d := Diff(before, before, nil); len(d) != 0 {
		t.Fatalf("Diff of a snapshot with itself = %q", d)
	}
	if s := Take(t, filepath.Join(root, "missing")); len(s) != 0 {
		t.Fatalf("snapshot of a missing directory = %v", s)
	}
}
