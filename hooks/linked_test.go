package hooks

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The answer the cache gives for a commit is git log's, commit after commit: plain ones,
// ones that name sessions, an amend, a merge, a message that mentions the key in its body,
// a branch switch, a linked worktree, a packed history. For a commit on top of one it has
// answered, it gives it without git (PATH has none).
func TestLastLinkedCacheAgreesWithGit(t *testing.T) {
	isolateGit(t)
	rn := newRunner(t)
	if err := os.MkdirAll(stateDir(rn.home()), 0o700); err != nil {
		t.Fatal(err)
	}
	repo := newRepo(t)
	want := []string{"a", "b", "c"}
	commit := func(dir string, args ...string) {
		t.Helper()
		git(t, dir, append([]string{"commit", "-q", "--allow-empty"}, args...)...)
	}
	check := func(dir, step string, withoutGit bool) {
		t.Helper()
		fromGit := LastLinked(dir, want)
		// LastLinked stops early; the whole of git log's answer agrees
		full := map[string]string{}
		for _, v := range strings.Fields(git(t, dir, "log", "-n", "200", "--format=%(trailers:key=Ckpt-Checkpoint,valueonly,separator=%x20)")) {
			if id, _, _ := strings.Cut(v, "@"); full[id] == "" && slices.Contains(want, id) {
				full[id] = v
			}
		}
		if !maps.Equal(full, fromGit) {
			t.Errorf("%s: LastLinked says %v, the whole git log %v", step, fromGit, full)
		}
		if withoutGit {
			t.Setenv("PATH", t.TempDir())
		}
		got := rn.lastLinked(dir, want)
		if withoutGit {
			t.Setenv("PATH", os.Getenv("PATH_SAVED"))
		}
		if !maps.Equal(got, fromGit) {
			t.Errorf("%s: cache says %v, git log %v", step, got, fromGit)
		}
	}
	t.Setenv("PATH_SAVED", os.Getenv("PATH"))
	check(repo, "first commit", false)
	steps := []struct {
		name string
		args []string
	}{
		{"nothing named", []string{"-m", "plain"}},
		{"a named", []string{"-m", "one\n\nCkpt-Checkpoint: a@1111111"}},
		{"a and b named, key in lower case", []string{"-m", "two\n\nckpt-checkpoint: b@2222222\nCkpt-Checkpoint: a@3333333 a@4444444"}},
		{"nothing named again", []string{"-m", "three"}},
		{"amend naming b", []string{"--amend", "-m", "three\n\nCkpt-Checkpoint: b@5555555"}},
	}
	for _, s := range steps {
		commit(repo, s.args...)
		check(repo, s.name, true)
	}
	// a message that names the key outside its trailer block: git decides
	commit(repo, "-m", "about Ckpt-Checkpoint: c@6666666 in prose\n\nmore prose")
	check(repo, "key in the body", false)
	commit(repo, "-m", "after the prose")
	check(repo, "after the prose", true)

	// a merge: git decides; the commit after it is answered from it
	git(t, repo, "checkout", "-q", "-b", "side", "HEAD~2")
	commit(repo, "-m", "side\n\nCkpt-Checkpoint: c@7777777")
	check(repo, "on the side branch", false)
	git(t, repo, "checkout", "-q", "-")
	git(t, repo, "merge", "-q", "--no-ff", "-m", "merge", "side")
	check(repo, "merge", false)
	commit(repo, "-m", "after the merge")
	check(repo, "after the merge", true)

	// a linked worktree shares the objects and the cache
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, repo, "worktree", "add", "-q", "-b", "feature", wt)
	check(wt, "new worktree", false)
	commit(wt, "-m", "feature\n\nCkpt-Checkpoint: a@8888888")
	check(wt, "in the worktree", true)

	// packed objects and refs: git decides for a commit it cannot read, then the next
	// loose commit is answered from it
	git(t, repo, "repack", "-a", "-d", "-q")
	git(t, repo, "prune-packed")
	git(t, repo, "pack-refs", "--all")
	check(repo, "the same commit, its branch in packed-refs", true)
	commit(repo, "-m", "after the repack")
	check(repo, "after the repack", false)
	commit(repo, "-m", "then one more\n\nCkpt-Checkpoint: b@9999999")
	check(repo, "after the repack, one more", true)
	// a detached HEAD
	git(t, repo, "checkout", "-q", "--detach")
	commit(repo, "-m", "detached")
	check(repo, "detached", true)
}

// A session named linkedDepth commits back or more is not named, as git log -n 200 says.
func TestLinkedStepDepth(t *testing.T) {
	isolateGit(t)
	repo := newRepo(t)
	g, ok := openGitDirs(repo)
	if !ok {
		t.Fatal("openGitDirs")
	}
	head, ok := g.head()
	if !ok || head == "" {
		t.Fatalf("head = %q, %v", head, ok)
	}
	first := strings.TrimSpace(git(t, repo, "rev-parse", "HEAD"))
	if head != first {
		t.Fatalf("head %s, git says %s", head, first)
	}
	git(t, repo, "commit", "-q", "--allow-empty", "-m", "next")
	next := strings.TrimSpace(git(t, repo, "rev-parse", "HEAD"))
	for _, tc := range []struct {
		prev linkedAt
		want linkedAt
	}{
		{linkedAt{V: "a@1", D: 0}, linkedAt{V: "a@1", D: 1}},
		{linkedAt{V: "a@1", D: linkedDepth - 2}, linkedAt{V: "a@1", D: linkedDepth - 1}},
		{linkedAt{V: "a@1", D: linkedDepth - 1}, linkedAt{}},
		{linkedAt{}, linkedAt{}},
	} {
		c := &linkedCache{}
		c.put(first, map[string]linkedAt{"a": tc.prev})
		got, ok := c.step(g, next, []string{"a"})
		if !ok || got["a"] != tc.want {
			t.Errorf("after %+v: %+v, %v; want %+v", tc.prev, got["a"], ok, tc.want)
		}
	}
	// a session the parent's answer does not cover: not sure
	c := &linkedCache{}
	c.put(first, map[string]linkedAt{"a": {}})
	if _, ok := c.step(g, next, []string{"a", "b"}); ok {
		t.Errorf("step answered for a session its parent's answer does not cover")
	}
}

func TestLinkedCacheKeepsTheNewest(t *testing.T) {
	c := &linkedCache{}
	for i := range linkedKeep + 5 {
		c.put(fmt.Sprint(i), map[string]linkedAt{"a": {V: fmt.Sprint("a@", i)}})
	}
	c.put("10", map[string]linkedAt{"a": {V: "a@again"}})
	if len(c.Commits) != linkedKeep {
		t.Fatalf("%d commits kept", len(c.Commits))
	}
	if _, ok := c.lookup("0", []string{"a"}); ok {
		t.Errorf("the oldest is still there")
	}
	if at, ok := c.lookup("10", []string{"a"}); !ok || at["a"].V != "a@again" {
		t.Errorf("10: %v, %v", at, ok)
	}
	if c.Commits[len(c.Commits)-1].ID != "10" {
		t.Errorf("a commit put again is not the newest")
	}
}

func TestNamedBy(t *testing.T) {
	for _, tc := range []struct {
		msg   string
		named string
		ok    bool
	}{
		{"plain\n", "", true},
		{"s\n\nCkpt-Checkpoint: a@1\n", "a=a@1", true},
		{"s\n\nCkpt-Checkpoint: a@1\nCkpt-Checkpoint: a@2\nCKPT-CHECKPOINT: b@3\n", "a=a@1 b=b@3", true},
		{"s\n\nbody names Ckpt-Checkpoint: a@1\n", "", false},
		{"s\n\nsee Ckpt-Checkpoint\n\nCkpt-Checkpoint: a@1\n", "a=a@1", false},
		{"Ckpt-Checkpoint: a@1\n", "", false}, // the subject is no trailer
	} {
		named, ok := namedBy(tc.msg)
		var got []string
		for _, id := range []string{"a", "b"} {
			if v := named[id]; v != "" {
				got = append(got, id+"="+v)
			}
		}
		if strings.Join(got, " ") != tc.named || ok != tc.ok {
			t.Errorf("namedBy(%q) = %v, %v; want %q, %v", tc.msg, got, ok, tc.named, tc.ok)
		}
	}
}

// A repository git must be asked about: the cache steps aside.
func TestOpenGitDirsLeavesToGit(t *testing.T) {
	isolateGit(t)
	repo := newRepo(t)
	if _, ok := openGitDirs(repo); !ok {
		t.Fatal("a plain repository")
	}
	t.Run("GIT_DIR", func(t *testing.T) {
		t.Setenv("GIT_DIR", filepath.Join(repo, ".git"))
		if _, ok := openGitDirs(repo); ok {
			t.Error("GIT_DIR is set")
		}
	})
	t.Run("replaced commits", func(t *testing.T) {
		write(t, filepath.Join(repo, ".git", "refs", "replace", "x"), "", 0o644)
		defer os.RemoveAll(filepath.Join(repo, ".git", "refs", "replace"))
		if _, ok := openGitDirs(repo); ok {
			t.Error("refs/replace exists")
		}
	})
	t.Run("symbolic ref elsewhere", func(t *testing.T) {
		git(t, repo, "symbolic-ref", "HEAD", "refs/remotes/x")
		g, _ := openGitDirs(repo)
		if _, ok := g.head(); ok {
			t.Error("HEAD outside refs/heads")
		}
	})
}

// TestLastLinkedGitHugeTrailers: a commit whose trailers fill a line past the scanner's
// buffer (anyone who can push a commit can plant one) gives no answer, and git log, still
// writing, is not left blocked on the pipe: the call returns.
func TestLastLinkedGitHugeTrailers(t *testing.T) {
	isolateGit(t)
	repo := newRepo(t)
	var msg strings.Builder
	msg.WriteString("huge\n\n")
	for i := range 120_000 {
		fmt.Fprintf(&msg, "Ckpt-Checkpoint: s%06d@abcdef0\n", i)
	}
	msgFile := filepath.Join(t.TempDir(), "msg")
	if err := os.WriteFile(msgFile, []byte(msg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "commit", "-q", "--allow-empty", "-F", msgFile)
	for range 3 {
		git(t, repo, "commit", "-q", "--allow-empty", "-m", "more history behind the huge one")
	}
	done := make(chan bool, 1)
	go func() {
		_, ok := lastLinkedGit(repo, []string{"zz"})
		done <- ok
	}()
	select {
	case ok := <-done:
		if ok {
			t.Error("an answer from a git log the scan could not read to its end")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("lastLinkedGit hangs on a commit with megabytes of trailers")
	}
}
