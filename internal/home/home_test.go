package home

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFind(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"proj/.git", "proj/src/deep", "proj/.ckpt/sessions/a/.git", "plain/x"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := func(s string) string { return filepath.Join(root, s) }
	tests := []struct {
		name, flag, cwd, want string
	}{
		{"flag, absolute", p("elsewhere"), p("plain"), p("elsewhere")},
		{"flag, relative to cwd", "store", p("plain"), p("plain/store")},
		{"top of the git work tree", "", p("proj/src/deep"), p("proj/.ckpt")},
		{"inside the store, past a session's .git", "", p("proj/.ckpt/sessions/a"), p("proj/.ckpt")},
		{"no work tree", "", p("plain/x"), p("plain/x/.ckpt")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Find(tc.flag, tc.cwd); got != tc.want {
				t.Errorf("Find(%q, %q) = %q, want %q", tc.flag, tc.cwd, got, tc.want)
			}
		})
	}
	if got := GitTop(p("proj/src/deep")); got != p("proj") {
		t.Errorf("GitTop = %q", got)
	}
	if got := GitTop(p("plain/x")); got != "" && got != filepath.Dir(root) && !isAncestor(got, root) {
		t.Errorf("GitTop outside a work tree = %q", got)
	}
}

// isAncestor allows for a temporary directory that is itself inside a git work tree.
func isAncestor(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && !filepath.IsAbs(rel) && rel[0] != '.'
}
