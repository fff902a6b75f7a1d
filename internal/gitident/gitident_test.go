package gitident

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// world is a HOME, a project directory and a cache file, with git's environment pointed at
// them and every config file dated in the past (so that answers are cacheable).
type world struct {
	t              *testing.T
	home, dir, csh string
	env            map[string]string
	calls          int
}

func newWorld(t *testing.T) *world {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := t.TempDir()
	w := &world{t: t, home: filepath.Join(root, "home"), dir: filepath.Join(root, "work", "project"), csh: filepath.Join(root, "gitident.json")}
	for _, d := range []string{w.home, w.dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w.env = map[string]string{"HOME": w.home, "GIT_CONFIG_NOSYSTEM": "1", "PATH": os.Getenv("PATH")}
	// Nothing of the caller's git environment leaks in: a GIT_CONFIG_GLOBAL=/dev/null
	// would have `git config --global` replace /dev/null with a regular file.
	for _, k := range envKeys {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	for k, v := range w.env {
		t.Setenv(k, v)
	}
	real := gitOutput
	gitOutput = func(dir string, args ...string) ([]byte, error) {
		w.calls++
		return real(dir, args...)
	}
	t.Cleanup(func() { gitOutput = real })
	return w
}

func (w *world) getenv(k string) string { return w.env[k] }

// git runs git config (or another git command) in dir and ages every file it may have
// written, as if it ran a minute ago.
func (w *world) git(dir string, args ...string) {
	w.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		w.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	old := time.Now().Add(-time.Minute)
	_ = filepath.Walk(filepath.Dir(filepath.Dir(w.dir)), func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			_ = os.Chtimes(p, old, old)
		}
		return nil
	})
}

// lookup returns the identity and how many git processes it took.
func (w *world) lookup() (Ident, int) {
	before := w.calls
	id := Lookup(w.dir, w.csh, w.getenv)
	return id, w.calls - before
}

func (w *world) expect(name, email string, gitRuns int) {
	w.t.Helper()
	id, n := w.lookup()
	if id.Name != name || id.Email != email || (n > 0) != (gitRuns > 0) {
		w.t.Fatalf("got %q <%q> with %d git runs; want %q <%q> with git run: %v", id.Name, id.Email, n, name, email, gitRuns > 0)
	}
}

func TestLookupCachesUntilSomethingGitReadsChanges(t *testing.T) {
	w := newWorld(t)
	w.expect("", "", 1) // no config at all
	w.git(w.home, "config", "--global", "user.name", "Ada")
	w.git(w.home, "config", "--global", "user.email", "ada@example.org")
	w.expect("Ada", "ada@example.org", 1)
	w.expect("Ada", "ada@example.org", 0) // cached

	// the global file changes
	w.git(w.home, "config", "--global", "user.name", "Ada Lovelace")
	w.expect("Ada Lovelace", "ada@example.org", 1)
	w.expect("Ada Lovelace", "ada@example.org", 0)

	// a repository appears around the directory, with its own identity
	w.git(filepath.Dir(w.dir), "init", "-q")
	w.git(filepath.Dir(w.dir), "config", "user.email", "ada@work.example")
	w.expect("Ada Lovelace", "ada@work.example", 1)
	w.expect("Ada Lovelace", "ada@work.example", 0)

	// the XDG file, absent until now
	if err := os.MkdirAll(filepath.Join(w.home, ".config", "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	w.git(w.home, "config", "--file", filepath.Join(w.home, ".config", "git", "config"), "user.name", "XDG Ada")
	// ~/.gitconfig is read after the XDG file and still wins
	w.expect("Ada Lovelace", "ada@work.example", 1)

	// the environment git sees
	w.env["GIT_CONFIG_COUNT"] = "1"
	w.env["GIT_CONFIG_KEY_0"] = "user.name"
	w.env["GIT_CONFIG_VALUE_0"] = "Env Ada"
	for k, v := range w.env {
		t.Setenv(k, v)
	}
	w.expect("Env Ada", "ada@work.example", 1)
	w.expect("Env Ada", "ada@work.example", 1) // from the command line: never cached
}

func TestLookupDoesNotCacheIncludesOrFreshFiles(t *testing.T) {
	w := newWorld(t)
	inc := filepath.Join(w.home, "ident.inc")
	if err := os.WriteFile(inc, []byte("[user]\n\tname = Included\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.git(w.home, "config", "--global", "include.path", inc)
	w.expect("Included", "", 1)
	w.expect("Included", "", 1)

	// a file changed a moment ago may change again within its mtime's resolution
	w.git(w.home, "config", "--global", "--unset", "include.path")
	w.git(w.home, "config", "--global", "user.name", "Fresh")
	now := time.Now()
	_ = os.Chtimes(filepath.Join(w.home, ".gitconfig"), now, now)
	w.expect("Fresh", "", 1)
	w.expect("Fresh", "", 1)
}

func TestLookupSurvivesADamagedCache(t *testing.T) {
	w := newWorld(t)
	w.git(w.home, "config", "--global", "user.name", "Ada")
	if err := os.WriteFile(w.csh, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	w.expect("Ada", "", 1)
	w.expect("Ada", "", 0)
	b, err := os.ReadFile(w.csh)
	if err != nil || !strings.Contains(string(b), w.dir) {
		t.Fatalf("cache not rewritten: %v %s", err, b)
	}
}

func TestParseList(t *testing.T) {
	out := "file:/etc/gitconfig\x00user.name\nSystem\x00file:/h/.gitconfig\x00user.name\n Ada \x00file:/h/.gitconfig\x00core.bare\x00file:/h/.gitconfig\x00User.Email\nada@x\x00"
	var id Ident
	files, ok := parseList([]byte(out), "/w", &id)
	if !ok || id.Name != "Ada" || id.Email != "ada@x" || strings.Join(files, ",") != "/etc/gitconfig,/h/.gitconfig" {
		t.Fatalf("got %v %v %+v", files, ok, id)
	}
	if _, ok := parseList([]byte("command line:\x00user.name\nX\x00"), "/w", &id); ok {
		t.Fatal("a command-line entry is cacheable")
	}
}
