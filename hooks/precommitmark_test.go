package hooks

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func TestTakePreCommitMark(t *testing.T) {
	ppid := strconv.Itoa(os.Getppid())
	tests := []struct {
		name string
		mark string // "" for none
		date string
		want bool
	}{
		{"none", "", "@1 +0000", false},
		{"this commit", ppid + " @1 +0000\n", "@1 +0000", true},
		{"this commit, no author date", ppid + " \n", "", true},
		{"another author date (a commit aborted earlier)", ppid + " @1 +0000\n", "@2 +0000", false},
		{"another git process", "999999999 @1 +0000\n", "@1 +0000", false},
		{"init", "1 @1 +0000\n", "@1 +0000", false},
		{"garbage", "not a mark", "@1 +0000", false},
		{"empty", "\n", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			idx := filepath.Join(dir, "index")
			mark := idx + PreCommitMarkSuffix
			if tc.mark != "" {
				write(t, mark, tc.mark, 0o644)
			}
			got, err := TakePreCommitMark(idx, tc.date)
			if err != nil || got != tc.want {
				t.Errorf("TakePreCommitMark = %v, %v; want %v", got, err, tc.want)
			}
			if _, err := os.Stat(mark); !os.IsNotExist(err) {
				t.Errorf("the mark is still there (%v)", err)
			}
		})
	}
	if ok, err := TakePreCommitMark("", ""); ok || err != nil {
		t.Errorf("without GIT_INDEX_FILE: %v, %v", ok, err)
	}
}

func TestIsAncestor(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the ancestors come from /proc")
	}
	self, parent := os.Getpid(), os.Getppid()
	if !isAncestor(parent, self, 2) {
		t.Errorf("the parent is not an ancestor within 2")
	}
	if isAncestor(parent, self, 1) {
		t.Errorf("the parent is an ancestor within 1")
	}
	if isAncestor(self, parent, 4) {
		t.Errorf("a child is an ancestor")
	}
	if parentOf(-5) != 0 {
		t.Errorf("parentOf a process that is not there")
	}
}

// TestTakePreCommitMarkNotAFile: a directory, a symbolic link (to /dev/zero, say) or a file
// far longer than a mark is no mark: an error or false, never a hang or a read without end.
func TestTakePreCommitMarkNotAFile(t *testing.T) {
	dir := t.TempDir()
	idx := filepath.Join(dir, "index")
	mark := idx + PreCommitMarkSuffix
	if err := os.Mkdir(mark, 0o700); err != nil {
		t.Fatal(err)
	}
	if ok, err := TakePreCommitMark(idx, ""); ok || err == nil {
		t.Errorf("a directory: %v, %v", ok, err)
	}
	if err := os.Remove(mark); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", mark); err != nil {
		t.Fatal(err)
	}
	if ok, err := TakePreCommitMark(idx, ""); ok || err == nil {
		t.Errorf("a symbolic link: %v, %v", ok, err)
	}
	if err := os.Remove(mark); err != nil {
		t.Fatal(err)
	}
	write(t, mark, strconv.Itoa(os.Getppid())+" "+strings.Repeat("x", 1<<20)+"\n", 0o644)
	if ok, err := TakePreCommitMark(idx, strings.Repeat("x", 1<<20)); ok || err != nil {
		t.Errorf("a 1 MB mark: %v, %v", ok, err)
	}
}

// TestPreCommitMarkPerIndex: two commits whose temporary indexes share a directory each
// keep their own mark: taking one leaves the other.
func TestPreCommitMarkPerIndex(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "index-a"), filepath.Join(dir, "index-b")
	ppid := strconv.Itoa(os.Getppid())
	write(t, a+PreCommitMarkSuffix, ppid+" @1 +0000\n", 0o644)
	write(t, b+PreCommitMarkSuffix, ppid+" @2 +0000\n", 0o644)
	if ok, err := TakePreCommitMark(a, "@1 +0000"); !ok || err != nil {
		t.Errorf("index-a: %v, %v", ok, err)
	}
	if ok, err := TakePreCommitMark(b, "@2 +0000"); !ok || err != nil {
		t.Errorf("index-b after index-a: %v, %v", ok, err)
	}
}
