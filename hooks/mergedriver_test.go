//go:build unix

package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestMergeDriverFilesAreRegular: the merge driver reads and writes only regular files; a
// symbolic link in place of ours is refused and what it points to is left alone, and a FIFO
// is refused rather than read forever.
func TestMergeDriverFilesAreRegular(t *testing.T) {
	dir := t.TempDir()
	ours := filepath.Join(dir, "ours")
	if err := os.WriteFile(ours, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "outside")
	if err := os.WriteFile(target, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}

	if err := WriteMergeResult(ours, []byte("merged\n")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(ours); string(b) != "merged\n" {
		t.Fatalf("ours = %q", b)
	}
	if err := WriteMergeResult(link, []byte("merged\n")); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("write through a symlink: %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep\n" {
		t.Fatalf("the symlink's target became %q", b)
	}
	for _, p := range []string{link, fifo, dir} {
		if _, err := ReadMergeInput(p); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("read %s: %v", p, err)
		}
	}
}
