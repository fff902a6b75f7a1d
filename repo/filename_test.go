package repo

import (
	"errors"
	"strings"
	"testing"
)

// TestValidFileName: any top-level Markdown file is a session file (an agent's memory
// directory, seed 002's own session-checkpoint.md); nothing that could be a path, hidden,
// an alias of .git, a device or another spelling of ckpt's own files.
func TestValidFileName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"checkpoint.md", true},
		{"notes.md", true},
		{"checkpoint-auth.md", true},
		{"MEMORY.md", true},
		{"knowledge-graph.md", true},
		{"session-checkpoint.md", true},
		{"feedback_testing.md", true},
		{"_index.md", true},
		{"v1.2+notes.md", true},
		{strings.Repeat("a", 125) + ".md", true},
		{strings.Repeat("a", 126) + ".md", false},
		{"CHECKPOINT.md", false},
		{"Notes.md", false},
		{"memory.md", false},
		{".md", false},
		{".git.md", false},
		{".hidden.md", false},
		{"-flag.md", false},
		{"a/b.md", false},
		{"../x.md", false},
		{"x.txt", false},
		{"x.MD", false},
		{"x.md ", false},
		{"with space.md", false},
		{"NUL.md", false},
		{"com1.md", false},
		{"nul", false},
		{"café.md", false},
		{"x\x00.md", false},
		{"", false},
	} {
		err := ValidFileName(tc.name)
		if (err == nil) != tc.ok {
			t.Errorf("ValidFileName(%q) = %v, want ok %v", tc.name, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidName) {
			t.Errorf("ValidFileName(%q): %v is not ErrInvalidName", tc.name, err)
		}
	}
}
