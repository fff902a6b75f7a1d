package main

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt/internal/fssnap"
)

// hostileRemote is a bare repository that a store pushed to, in which a test then builds
// commits with real git that no well-behaved git would make.
type hostileRemote struct {
	t     *testing.T
	root  string // everything the test makes is under here
	store string // the store, relative to root
	dir   string // the bare repository
	env   []string
}

// storeDepth puts the store deeper under root than any hostile name in these tests climbs,
// so that a ckpt that followed one still writes under root, where the snapshots look.
const storeDepth = 12

func (h *hostileRemote) git(stdin []byte, args ...string) string {
	h.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", h.dir}, args...)...)
	cmd.Env = h.env
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		h.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

func (h *hostileRemote) blob(content string) string {
	return h.git([]byte(content), "hash-object", "-w", "--stdin")
}

// entry is one tree entry as it is stored: any mode, any name, any object.
type entry struct {
	mode, name, hash string
}

// tree stores entries as a tree object, in git's order unless unsorted, without any of the
// checks git mktree would make.
func (h *hostileRemote) tree(unsorted bool, entries ...entry) string {
	if !unsorted {
		key := func(e entry) string {
			if e.mode == "40000" {
				return e.name + "/"
			}
			return e.name
		}
		sort.SliceStable(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
	}
	return h.rawTree(encodeEntries(entries...))
}

func encodeEntries(entries ...entry) []byte {
	var b bytes.Buffer
	for _, e := range entries {
		id, err := hex.DecodeString(e.hash)
		if err != nil || len(id) != 20 {
			panic("bad object id " + e.hash)
		}
		b.WriteString(e.mode + " " + e.name + "\x00")
		b.Write(id)
	}
	return b.Bytes()
}

func (h *hostileRemote) rawTree(data []byte) string {
	return h.git(data, "hash-object", "-w", "--literally", "-t", "tree", "--stdin")
}

func (h *hostileRemote) commit(tree, parent string) string {
	return h.git(nil, "commit-tree", tree, "-p", parent, "-m", "hostile")
}

// runCkpt runs the CLI in this process and returns its exit code, stdout and stderr.
func runCkpt(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := Main(args, &Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: os.Getenv, Getwd: os.Getwd, LookPath: exec.LookPath})
	return code, stdout.String(), stderr.String()
}

// newHostileRemote makes a store under root with sessions alpha and beta pushed to a bare
// repository, and the environment for git and ckpt (HOME, config and CKPT_HOME all under
// root).
func newHostileRemote(t *testing.T) *hostileRemote {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	home := filepath.Join(root, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[init]\n\tdefaultBranch = main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"GIT_CONFIG_GLOBAL": filepath.Join(home, ".gitconfig"), "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "Mallory", "GIT_AUTHOR_EMAIL": "m@example.com",
		"GIT_COMMITTER_NAME": "Mallory", "GIT_COMMITTER_EMAIL": "m@example.com",
		"GIT_AUTHOR_DATE": "1700000000 +0000", "GIT_COMMITTER_DATE": "1700000000 +0000",
		"CKPT_HOME": filepath.Join(root, strings.Repeat("n/", storeDepth), "store"), "CKPT_NOW": "2026-04-01T22:30:00Z",
		"CKPT_AUTHOR_NAME": "ckpt test", "CKPT_AUTHOR_EMAIL": "ckpt@example.com",
		"CKPT_LOCK_TIMEOUT": "5s", "CKPT_SESSION": "", "NO_COLOR": "",
	} {
		t.Setenv(k, v)
	}
	h := &hostileRemote{t: t, root: root, store: strings.Repeat("n/", storeDepth) + "store", dir: filepath.Join(root, "remote.git"), env: os.Environ()}
	if out, err := exec.Command("git", "init", "-q", "--bare", h.dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	for _, args := range [][]string{
		{"init", "-s", "alpha"}, {"init", "-s", "beta"}, {"remote", "add", "origin", h.dir}, {"push"},
	} {
		if code, _, stderr := runCkpt(args...); code != 0 {
			t.Fatalf("ckpt %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
		}
	}
	return h
}

// hostileCase is one trick: the tree (or commit) it puts on the remote, and the refusal.
type hostileCase struct {
	name string
	// build makes the hostile commit, a child of parent, and returns it.
	build func(h *hostileRemote, parent string) string
	// want is the refusal (a regular expression) after "ckpt: remote origin: commit <commit>: ".
	want string
	// inParent: the refused commit is the parent of the one the branch points to.
	inParent bool
	// gitRefuses: git upload-pack itself will not send it; the fetch fails, as loudly.
	gitRefuses bool
}

// refusedEntry is the expected refusal of an entry named name.
func refusedEntry(name, problem string) string {
	return "tree entry " + regexp.QuoteMeta(fmt.Sprintf("%q", name)) + ": " + problem
}

// withFiles is a tree holding the session's two files plus the hostile entries.
func withFiles(h *hostileRemote, extra ...entry) string {
	files := []entry{
		{"100644", "checkpoint.md", h.blob("# Session Checkpoint\n")},
		{"100644", "notes.md", h.blob("# Notes\n")},
	}
	return h.tree(false, append(extra, files...)...)
}

// file is a hostile entry holding a blob; sub is one holding a subtree with a file in it.
func file(h *hostileRemote, mode, name string) entry {
	return entry{mode, name, h.blob("pwned\n")}
}

func sub(h *hostileRemote, name string) entry {
	return entry{"40000", name, h.tree(false, entry{"100755", "post-checkout", h.blob("#!/bin/sh\necho pwned\n")}, file(h, "100644", "PWNED"))}
}

func hostileCases() []hostileCase {
	plain := func(name, mode, entryName, want string) hostileCase {
		return hostileCase{name, func(h *hostileRemote, parent string) string {
			return h.commit(withFiles(h, file(h, mode, entryName)), parent)
		}, refusedEntry(entryName, want), false, false}
	}
	dir := func(name, entryName, want string) hostileCase {
		return hostileCase{name, func(h *hostileRemote, parent string) string {
			return h.commit(withFiles(h, sub(h, entryName)), parent)
		}, refusedEntry(entryName, want), false, false}
	}
	only := func(name string, want string, entries func(h *hostileRemote) []entry) hostileCase {
		return hostileCase{name, func(h *hostileRemote, parent string) string {
			return h.commit(h.tree(false, entries(h)...), parent)
		}, want, false, false}
	}
	escapes, gitDir := "path escapes the work tree", `names the git directory \(\.git\)`
	notFile := regexp.QuoteMeta("not a file a session holds (want checkpoint.md, notes.md, checkpoint-<topic>.md, MEMORY.md or knowledge-graph.md)")
	return []hostileCase{
		plain("dotdot", "100644", "../../PWNED", escapes),
		plain("dotdot deep", "100644", "../../../../../../../../../../PWNED", escapes),
		dir("dotdot subtree", "..", escapes),
		plain("dotdot backslash", "100644", `..\..\PWNED`, escapes),
		dir("dot subtree", ".", `names the work tree itself \(\.\)`),
		dir("dotgit", ".git", gitDir),
		dir("dotgit upper case", ".GIT", gitDir),
		dir("dotgit mixed case", ".gIT", gitDir),
		dir("ntfs short name", "git~1", gitDir),
		dir("ntfs short name upper case", "GIT~1", gitDir),
		plain("ntfs trailing dot", "100644", ".git.", gitDir),
		plain("ntfs trailing spaces", "100644", ".git  ", gitDir),
		plain("ntfs trailing dots and spaces", "100644", ".git . .", gitDir),
		plain("ntfs data stream", "100644", ".git::$INDEX_ALLOCATION", gitDir),
		dir("hfs zero-width non-joiner", ".g\u200cit", gitDir),
		dir("hfs byte order mark", "\ufeff.GIT", gitDir),
		plain("hfs direction mark", "100644", ".git\u200e", gitDir),
		dir("hfs format character", ".Gi\u206at", gitDir),
		plain("path into .git", "100755", ".git/hooks/post-checkout", gitDir),
		plain("path into .git with backslashes", "100755", `.git\hooks\post-checkout`, gitDir),
		plain("absolute", "100644", "/tmp/PWNED", "absolute path"),
		plain("slash", "100644", "sub/checkpoint.md", "name holds a slash: a path, not a file name"),
		plain("backslash", "100644", `sub\checkpoint.md`, "name holds a backslash: a path on Windows"),
		plain("drive letter", "100644", `C:PWNED`, "absolute path"),
		{"empty name", func(h *hostileRemote, parent string) string {
			return h.commit(withFiles(h, file(h, "100644", "")), parent)
		}, refusedEntry("", "empty name"), false, true},
		only("symlink", refusedEntry("checkpoint.md", "a symlink where a file is expected"), func(h *hostileRemote) []entry {
			return []entry{{"120000", "checkpoint.md", h.blob("../../../../../../etc/passwd")}, {"100644", "notes.md", h.blob("# Notes\n")}}
		}),
		only("gitlink", refusedEntry("notes.md", `a gitlink \(submodule\) where a file is expected`), func(h *hostileRemote) []entry {
			return []entry{{"100644", "checkpoint.md", h.blob("# C\n")}, {"160000", "notes.md", strings.Repeat("ab", 20)}}
		}),
		dir("subtree", "checkpoint-x.md", "a subtree where a file is expected"),
		plain("group-writable mode", "100664", "checkpoint-x.md", "file mode 100664: want 100644 or 100755"),
		plain("setuid mode", "104755", "checkpoint-x.md", "file mode 104755: want 100644 or 100755"),
		plain("zero-padded mode", "0100644", "checkpoint-x.md", `zero-padded mode 0100644 \(malformed tree\)`),
		plain("not a session file", "100644", ".bashrc", notFile),
		plain("gitmodules", "100644", ".gitmodules", notFile),
		plain("gitattributes", "100644", ".gitattributes", notFile),
		plain("checkpoint in upper case", "100644", "CHECKPOINT.md", notFile),
		{"unsorted", func(h *hostileRemote, parent string) string {
			return h.commit(h.tree(true, entry{"100644", "notes.md", h.blob("# N\n")}, entry{"100644", "checkpoint.md", h.blob("# C\n")}), parent)
		}, refusedEntry("checkpoint.md", `tree entries out of order \(malformed tree\)`), false, false},
		plain("duplicate", "100644", "checkpoint.md", `duplicate tree entry \(malformed tree\)`),
		only("blob that is a tree", refusedEntry("checkpoint.md", "[0-9a-f]{7} is a tree, not a blob"), func(h *hostileRemote) []entry {
			return []entry{{"100644", "checkpoint.md", h.tree(false, file(h, "100644", "PWNED"))}}
		}),
		{"commit without author", func(h *hostileRemote, parent string) string {
			tree := withFiles(h)
			body := fmt.Sprintf("tree %s\nparent %s\ncommitter M <m@example.com> 1700000000 +0000\n\nno author\n", tree, parent)
			return h.git([]byte(body), "hash-object", "-w", "--literally", "-t", "commit", "--stdin")
		}, `no author line \(malformed commit\)`, false, false},
		{"commit with a bad date", func(h *hostileRemote, parent string) string {
			tree := withFiles(h)
			body := fmt.Sprintf("tree %s\nparent %s\nauthor M <m@example.com> yesterday +0000\ncommitter M <m@example.com> 1700000000 +0000\n\nbad date\n", tree, parent)
			return h.git([]byte(body), "hash-object", "-w", "--literally", "-t", "commit", "--stdin")
		}, `author: bad date \(malformed commit\)`, false, false},
		{"hostile parent under a clean child", func(h *hostileRemote, parent string) string {
			bad := h.commit(withFiles(h, file(h, "100644", "../../PWNED")), parent)
			return h.commit(withFiles(h), bad)
		}, refusedEntry("../../PWNED", escapes), true, false},
	}
}

// TestHostileRemotes: for every trick, ckpt pull (a session that fast-forwards, a session
// new here) and ckpt clone exit 1 with one line naming the remote, the commit and the
// entry, and nothing changes anywhere under the test's root but the store's state/ (the
// fetched objects): no work tree, no session repository, no file outside the store.
func TestHostileRemotes(t *testing.T) {
	h := newHostileRemote(t)
	alphaBase := h.git(nil, "rev-parse", "refs/heads/sessions/alpha")
	betaBase := h.git(nil, "rev-parse", "refs/heads/sessions/beta")
	// alpha moves on honestly: a pull that refuses beta must not take alpha either.
	alphaNext := h.commit(withFiles(h, entry{"100644", "checkpoint-db.md", h.blob("# DB\n")}), alphaBase)
	h.git(nil, "update-ref", "refs/heads/sessions/alpha", alphaNext)
	store := filepath.Join(h.root, h.store)
	onlyState := fssnap.Under(h.store + "/state")

	for _, tc := range hostileCases() {
		t.Run(tc.name, func(t *testing.T) {
			bad := tc.build(h, betaBase)
			culprit := bad
			if tc.inParent {
				culprit = h.git(nil, "rev-parse", bad+"^")
			}
			want := regexp.MustCompile(`^ckpt: remote origin: commit ` + culprit[:7] + `: ` + tc.want + `$`)
			if tc.gitRefuses {
				want = regexp.MustCompile(`^ckpt: git fetch: `)
			}
			defer func() {
				h.git(nil, "update-ref", "refs/heads/sessions/beta", betaBase)
				h.git(nil, "update-ref", "-d", "refs/heads/sessions/gamma")
			}()
			refused := func(what string, allowed func(string) bool, args ...string) {
				t.Helper()
				before := fssnap.Take(t, h.root)
				code, stdout, stderr := runCkpt(args...)
				lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
				oneLine := len(lines) == 1 || (len(lines) == 2 && strings.HasPrefix(lines[1], "ckpt: hint: nothing was pulled"))
				if code != 1 || !want.MatchString(lines[0]) || (!oneLine && !tc.gitRefuses) {
					t.Fatalf("%s: exit %d, stderr:\n%s\nwant exit 1 and %s", what, code, stderr, want)
				}
				if stdout != "" {
					t.Fatalf("%s printed %q", what, stdout)
				}
				if d := fssnap.Diff(before, fssnap.Take(t, h.root), allowed); len(d) > 0 {
					t.Fatalf("%s was refused but wrote:\n%s", what, strings.Join(d, "\n"))
				}
			}
			// beta exists here: it would fast-forward.
			h.git(nil, "update-ref", "refs/heads/sessions/beta", bad)
			refused("pull", onlyState, "pull")
			refused("pull -s beta", onlyState, "pull", "-s", "beta")
			refused("clone", nil, "clone", h.dir, filepath.Join(h.root, "clone"))
			// gamma is new here: it would be created.
			h.git(nil, "update-ref", "refs/heads/sessions/beta", betaBase)
			h.git(nil, "update-ref", "refs/heads/sessions/gamma", bad)
			refused("pull of a new session", onlyState, "pull")
			refused("clone of a new session", nil, "clone", h.dir, filepath.Join(h.root, "clone"))
		})
	}

	// Once the remote holds nothing hostile, the same store pulls as ever.
	if code, stdout, stderr := runCkpt("pull"); code != 0 || !strings.Contains(stdout, "alpha: fast-forward "+alphaNext[:7]) {
		t.Fatalf("pull of a clean remote: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(store, "sessions", "alpha", "checkpoint-db.md")); err != nil {
		t.Fatal(err)
	}
}

// TestHostileRemoteGoGit: go-git's transport (remote.git = "go-git") is checked the same
// way; the checks do not lean on the system git.
func TestHostileRemoteGoGit(t *testing.T) {
	h := newHostileRemote(t)
	if err := os.WriteFile(filepath.Join(h.root, h.store, "config.toml"), []byte("[remote]\ngit = \"go-git\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCkpt("remote", "add", "origin", "file://"+h.dir); code != 0 {
		t.Fatalf("remote add: %s", stderr)
	}
	betaBase := h.git(nil, "rev-parse", "refs/heads/sessions/beta")
	for _, tc := range hostileCases()[:1] {
		bad := tc.build(h, betaBase)
		h.git(nil, "update-ref", "refs/heads/sessions/beta", bad)
		before := fssnap.Take(t, h.root)
		code, _, stderr := runCkpt("pull")
		if code != 1 || !strings.HasPrefix(stderr, "ckpt: remote origin: commit "+bad[:7]+": ") {
			t.Fatalf("%s: exit %d\n%s", tc.name, code, stderr)
		}
		if d := fssnap.Diff(before, fssnap.Take(t, h.root), fssnap.Under(h.store+"/state")); len(d) > 0 {
			t.Fatalf("%s was refused but wrote:\n%s", tc.name, strings.Join(d, "\n"))
		}
	}
}

// TestHostileLocalCommit: a hostile commit that reached a session's repository some other
// way (git by hand) is refused by restore, show and diff like one from a remote, and
// nothing is written.
func TestHostileLocalCommit(t *testing.T) {
	h := newHostileRemote(t)
	h.dir = filepath.Join(h.root, h.store, "sessions", "alpha")
	head := h.git(nil, "rev-parse", "HEAD")
	for _, tc := range hostileCases() {
		if tc.gitRefuses || tc.inParent || strings.Contains(tc.want, "malformed commit") {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			bad := tc.build(h, head)
			want := regexp.MustCompile(`^ckpt: commit ` + bad[:7] + `: ` + tc.want + `$`)
			for _, args := range [][]string{
				{"restore", "-s", "alpha", "--rev", bad},
				{"show", "-s", "alpha", "--rev", bad},
				{"diff", "-s", "alpha", "--from", "HEAD", "--to", bad},
			} {
				before := fssnap.Take(t, h.root)
				code, stdout, stderr := runCkpt(args...)
				if code != 1 || !want.MatchString(strings.TrimSuffix(stderr, "\n")) || stdout != "" {
					t.Fatalf("ckpt %s: exit %d\nstdout: %s\nstderr: %s\nwant exit 1 and %s", args[0], code, stdout, stderr, want)
				}
				if d := fssnap.Diff(before, fssnap.Take(t, h.root), fssnap.Under(h.store+"/state")); len(d) > 0 {
					t.Fatalf("ckpt %s was refused but wrote:\n%s", args[0], strings.Join(d, "\n"))
				}
			}
		})
	}
}
