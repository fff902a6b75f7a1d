package home

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// TestLinkedWorktree holds MainWorkTree to what git itself answers: a linked work tree
// belongs to the main work tree's project and finds its store there.
func TestLinkedWorktree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := t.TempDir()
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	main := filepath.Join(root, "main")
	git(root, "init", "-q", main)
	git(main, "commit", "-q", "--allow-empty", "-m", "first")
	git(main, "worktree", "add", "-q", filepath.Join(root, "wt"), "-b", "side")
	if err := os.MkdirAll(filepath.Join(root, "wt", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	real := func(p string) string {
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	wt := filepath.Join(root, "wt")
	common := git(wt, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if got, want := real(MainWorkTree(wt)), real(filepath.Dir(common)); got != want {
		t.Errorf("MainWorkTree(linked) = %q, git says %q", got, want)
	}
	if got := MainWorkTree(main); got != main {
		t.Errorf("MainWorkTree(main) = %q", got)
	}
	if got := Project(filepath.Join(wt, "sub")); real(got) != real(main) {
		t.Errorf("Project(linked/sub) = %q, want %q", got, main)
	}
	// no store yet: the main work tree's is where one goes
	if got := Find("", filepath.Join(wt, "sub")); real(filepath.Dir(got)) != real(main) {
		t.Errorf("Find in a linked work tree = %q, want under %q", got, main)
	}
	if err := os.Mkdir(filepath.Join(main, Dir), 0o700); err != nil {
		t.Fatal(err)
	}
	if got := Existing(filepath.Join(wt, "sub")); got == "" || real(got) != real(filepath.Join(main, Dir)) {
		t.Errorf("Existing in a linked work tree = %q", got)
	}
}

func TestUserStoreAndLists(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if got := UserStore(env(map[string]string{"XDG_DATA_HOME": "/x/data", "HOME": "/h"})); got != "/x/data/ckpt" {
		t.Errorf("with XDG_DATA_HOME: %q", got)
	}
	if got := UserStore(env(map[string]string{"XDG_DATA_HOME": "relative", "HOME": "/h"})); got != "/h/.local/share/ckpt" {
		t.Errorf("relative XDG_DATA_HOME is ignored, as the spec says: %q", got)
	}
	if got := UserStore(env(nil)); got != "" {
		t.Errorf("no home: %q", got)
	}
	store, proj := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(store, "state"), 0o700)
	if Lists(store, proj) {
		t.Error("empty store lists a project")
	}
	os.WriteFile(filepath.Join(store, "state", "bound.txt"), []byte("/elsewhere\n"+realPath(t, proj)+"\n"), 0o600)
	if !Lists(store, proj) {
		t.Error("bound project not listed")
	}
	if got := FindWith("", proj, store); got != store {
		t.Errorf("FindWith a project the user store lists = %q", got)
	}
	if got := FindWith("", proj, t.TempDir()); got != filepath.Join(proj, Dir) {
		t.Errorf("FindWith a user store that does not list it = %q", got)
	}
}

func realPath(t *testing.T, p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestEnsureWritesGitignore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), Dir)
	if err := Ensure(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, ".gitignore"))
	if err != nil || !strings.Contains(string(b), "*\n") {
		t.Fatalf(".gitignore = %q, %v", b, err)
	}
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("mine\n"), 0o600)
	if err := Ensure(dir); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".gitignore")); string(b) != "mine\n" {
		t.Errorf("a .gitignore already there was replaced: %q", b)
	}
}
