package repo

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/ckpt-dev/ckpt/internal/fssnap"
	"github.com/ckpt-dev/ckpt/internal/gittest"
)

// gitIn runs git in dir with stdin and returns its stdout, failing the test on an error.
func gitIn(t testing.TB, dir string, stdin []byte, args ...string) string {
	t.Helper()
	out, err := gitTry(t, dir, stdin, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(out)
}

func gitTry(t testing.TB, dir string, stdin []byte, args ...string) (string, error) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = gittest.Env(t)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// rawTree encodes entries as tree bytes, in the order given: "mode name" -> hash.
func rawTree(entries ...rawEntry) []byte {
	var b bytes.Buffer
	for _, e := range entries {
		b.WriteString(e.mode + " " + e.name + "\x00")
		b.Write(e.hash[:])
	}
	return b.Bytes()
}

// TestCheckEntryNameAgreesWithGit holds the name rules to git's own: every name git
// refuses (git fsck --strict, or git read-tree, which applies verify_path with
// core.protectNTFS and core.protectHFS) is refused, and the names git takes are refused
// only where the table says why ckpt is stricter.
func TestCheckEntryNameAgreesWithGit(t *testing.T) {
	for _, tc := range []struct {
		name     string
		problem  string // "" accepted
		stricter bool   // git on this system takes it; ckpt refuses it everywhere
	}{
		{"..", probEscapes, false},
		{".", probDot, false},
		{"../../PWNED", probEscapes, false},
		{"a/../../b", probEscapes, false},
		{".git", probGitDir, false},
		{".GIT", probGitDir, false},
		{".gIt", probGitDir, false},
		{"git~1", probGitDir, false},
		{"GIT~1", probGitDir, false},
		{".git.", probGitDir, false},
		{".git ", probGitDir, false},
		{".git. . ", probGitDir, false},
		{".git::$INDEX_ALLOCATION", probGitDir, false},
		{".git:x", probGitDir, false},
		{"git~1 .", probGitDir, false},
		{".g\u200cit", probGitDir, false},
		{"\u200d.git", probGitDir, false},
		{".git\ufeff", probGitDir, false},
		{".GI\u206aT", probGitDir, false},
		{".g\u202ait\u200f", probGitDir, false},
		{".git/hooks/post-checkout", probGitDir, false},
		{"/tmp/PWNED", probAbsolute, false},
		{"sub/checkpoint.md", probSlash, false},
		{"", probEmpty, false},
		{`..\..\PWNED`, probEscapes, true},
		{`.git\hooks\x`, probGitDir, false},
		{`a\b`, probBackslash, true},
		{`C:x`, probAbsolute, true},
		{`\x`, probAbsolute, true},
		{"checkpoint.md", "", false},
		{"a..b", "", false},
		{"...", "", false},
		{".gitx", "", false},
		{".git~1", "", false},
		{"git~2", "", false},
		{"x.git", "", false},
		{".g\u00e9it", "", false},
	} {
		if got := checkEntryName(tc.name); got != tc.problem {
			t.Errorf("checkEntryName(%s) = %q, want %q", quoteName(tc.name), got, tc.problem)
		}
	}

	// The oracle: real git, one tree per name.
	dir := t.TempDir()
	gitIn(t, dir, nil, "init", "-q")
	blob := plumbing.NewHash(gitIn(t, dir, []byte("x\n"), "hash-object", "-w", "--stdin"))
	trees := map[string]string{}
	names := []string{"..", ".", "../../PWNED", ".git", ".GIT", "git~1", ".git.", ".git ", ".git::$INDEX_ALLOCATION",
		".g\u200cit", "\u200d.git", ".git\ufeff", ".GI\u206aT", ".git/hooks/post-checkout", "/tmp/PWNED",
		"sub/checkpoint.md", "", `..\..\PWNED`, `.git\hooks\x`, `a\b`, `C:x`,
		"checkpoint.md", "a..b", "...", ".gitx", ".git~1", "git~2", "x.git"}
	for _, name := range names {
		data := rawTree(rawEntry{"100644", name, blob})
		trees[name] = gitIn(t, dir, data, "hash-object", "-w", "--literally", "-t", "tree", "--stdin")
	}
	fsck, _ := gitTry(t, dir, nil, "fsck", "--strict", "--no-dangling")
	for _, name := range names {
		complained := strings.Contains(fsck, trees[name])
		_, rerr := gitTry(t, dir, nil, "-c", "core.protectNTFS=true", "-c", "core.protectHFS=true", "read-tree", trees[name])
		gitRefuses := complained || rerr != nil
		weRefuse := checkEntryName(name) != ""
		stricter := name == `..\..\PWNED` || name == `a\b` || name == `C:x`
		switch {
		case gitRefuses && !weRefuse:
			t.Errorf("git refuses %s, checkEntryName takes it", quoteName(name))
		case !gitRefuses && weRefuse && !stricter:
			t.Errorf("git takes %s, checkEntryName refuses it: %s", quoteName(name), checkEntryName(name))
		}
	}
}

func TestCheckTree(t *testing.T) {
	a := plumbing.NewHash("1111111111111111111111111111111111111111")
	file := func(name string) rawEntry { return rawEntry{"100644", name, a} }
	for _, tc := range []struct {
		name    string
		data    []byte
		entry   string
		problem string // "" accepted
	}{
		{"ok", rawTree(file("checkpoint.md"), file("notes.md")), "", ""},
		{"executable", rawTree(rawEntry{"100755", "checkpoint.md", a}), "", ""},
		{"empty tree", nil, "", ""},
		{"spill files", rawTree(file("checkpoint-db.md"), file("checkpoint.md")), "", ""},
		{"dotdot", rawTree(file("../../PWNED"), file("checkpoint.md")), "../../PWNED", probEscapes},
		{"dotdot after a bad mode", rawTree(rawEntry{"120000", "checkpoint.md", a}, file("../x")), "../x", probEscapes},
		{"symlink", rawTree(rawEntry{"120000", "checkpoint.md", a}), "checkpoint.md", probSymlink},
		{"gitlink", rawTree(rawEntry{"160000", "notes.md", a}), "notes.md", probGitlink},
		{"subtree", rawTree(rawEntry{"40000", "checkpoint-x.md", a}), "checkpoint-x.md", probSubtree},
		{"group-writable", rawTree(rawEntry{"100664", "checkpoint.md", a}), "checkpoint.md", "file mode 100664: want 100644 or 100755"},
		{"zero-padded", rawTree(rawEntry{"0100644", "checkpoint.md", a}), "checkpoint.md", "zero-padded mode 0100644 (malformed tree)"},
		{"not octal", rawTree(rawEntry{"10064x", "checkpoint.md", a}), "checkpoint.md", `malformed mode "10064x" (malformed tree)`},
		{"null id", rawTree(rawEntry{"100644", "checkpoint.md", ZeroHash}), "checkpoint.md", "null object id (malformed tree)"},
		{"unsorted", rawTree(file("notes.md"), file("checkpoint.md")), "checkpoint.md", probUnsorted},
		{"duplicate", rawTree(file("checkpoint.md"), file("checkpoint.md")), "checkpoint.md", probDuplicate},
		{"other file", rawTree(file(".bashrc"), file("checkpoint.md")), ".bashrc", probNotFile},
		{"gitmodules", rawTree(file(".gitmodules")), ".gitmodules", probNotFile},
		{"checkpoint in another case", rawTree(file("CHECKPOINT.md")), "CHECKPOINT.md", probNotFile},
		{"truncated", rawTree(file("checkpoint.md"))[:30], "", "truncated tree entry (malformed tree)"},
		{"no space", []byte("100644checkpoint.md\x00" + strings.Repeat("a", 20)), "", "truncated tree entry (malformed tree)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entries, err := parseTree(tc.data)
			if err == nil {
				err = checkTree(entries)
			}
			if tc.problem == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted, want %q", tc.problem)
			}
			if err.Problem != tc.problem || err.Entry != tc.entry || err.HasEntry != (tc.entry != "") {
				t.Fatalf("refused entry %q with %q, want entry %q with %q", err.Entry, err.Problem, tc.entry, tc.problem)
			}
			if !errors.Is(err, ErrRefusedTree) || errors.Is(err, ErrInvalidName) {
				t.Fatalf("%v: want ErrRefusedTree (exit 1), not ErrInvalidName (exit 2)", err)
			}
		})
	}
}

func TestParseCommit(t *testing.T) {
	tree := "tree 4b825dc642cb6eb9a060e54bf8d69288fbdfd904\n"
	parent := "parent 1111111111111111111111111111111111111111\n"
	who := "author A U Thor <a@example.com> 1700000000 +0100\ncommitter C O Mitter <c@example.com> 1700000000 -0000\n"
	for _, tc := range []struct {
		name, data, problem string
	}{
		{"root", tree + who + "\nmsg\n", ""},
		{"merge", tree + parent + parent + who + "\nmsg\n", ""},
		{"extra headers", tree + who + "encoding UTF-8\ngpgsig x\n y\n\nmsg\n", ""},
		{"no message", tree + who, ""},
		{"no tree", parent + who + "\nmsg\n", "no tree line"},
		{"short tree", "tree 4b825dc\n" + who + "\n", "bad tree id"},
		{"upper-case tree", strings.ToUpper(tree[:5]) + tree[5:] + who + "\n", "no tree line"},
		{"bad parent", tree + "parent xyz\n" + who + "\n", "bad parent id"},
		{"no author", tree + "committer C <c@x> 1 +0000\n\n", "no author line"},
		{"no committer", tree + "author A <a@x> 1 +0000\n\n", "no committer line"},
		{"no name", tree + "author <a@x> 1 +0000\ncommitter C <c@x> 1 +0000\n\n", "author: no name before the email"},
		{"no email", tree + "author A 1 +0000\ncommitter C <c@x> 1 +0000\n\n", "author: no email"},
		{"bad date", tree + "author A <a@x> 01 +0000\ncommitter C <c@x> 1 +0000\n\n", "author: bad date"},
		{"bad zone", tree + "author A <a@x> 1 +000\ncommitter C <c@x> 1 +0000\n\n", "author: bad time zone"},
		{"nul in header", tree + "author A <a@x> 1 +0000\x00\ncommitter C <c@x> 1 +0000\n\n", "NUL byte in the header"},
		{"unterminated", tree + "author A <a@x> 1 +0000\ncommitter C <c@x> 1 +0000", "unterminated header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseCommit(ZeroHash, []byte(tc.data))
			switch {
			case tc.problem == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.problem != "" && err == nil:
				t.Fatalf("accepted, want %q", tc.problem)
			case tc.problem != "" && err.Problem != tc.problem+" (malformed commit)":
				t.Fatalf("refused with %q, want %q", err.Problem, tc.problem)
			}
		})
	}
}

// hostileRepo is a session whose object store also holds a commit (child of HEAD) with the
// given tree bytes; it returns the session, its HEAD and the commit.
func hostileRepo(t *testing.T, st *Store, id SessionID, tree []byte, extra map[string][]byte) (*Repo, Hash, Hash) {
	t.Helper()
	r, head, err := st.Init(id, InitOptions{Files: map[string][]byte{"checkpoint.md": []byte("# C\n"), "notes.md": []byte("# N\n")}, Message: "init\n"})
	if err != nil {
		t.Fatal(err)
	}
	ow := newRawWriter(r)
	for _, data := range extra {
		if _, err := ow.write(plumbing.BlobObject, data); err != nil {
			t.Fatal(err)
		}
	}
	th, err := ow.write(plumbing.TreeObject, tree)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ow.write(plumbing.CommitObject, testCommit(t, th, []Hash{head}, st.Opts.Author, st.Opts.Now(), "evil\n"))
	if err != nil {
		t.Fatal(err)
	}
	return r, head, c
}

// TestHostileTreeWritesNothing: a checkout, a copy into another repository, a clone
// (Materialize) and a restore's read of a hostile commit are refused, and nothing under the
// test's root changes.
func TestHostileTreeWritesNothing(t *testing.T) {
	pwned := []byte("pwned\n")
	ph := BlobHash(pwned)
	cp := []byte("# C\n")
	ch := BlobHash(cp)
	for _, tc := range []struct {
		name    string
		tree    []byte
		problem string
	}{
		{"dotdot", rawTree(rawEntry{"100644", "../../../PWNED", ph}, rawEntry{"100644", "checkpoint.md", ch}), `tree entry "../../../PWNED": path escapes the work tree`},
		{"git dir", rawTree(rawEntry{"100644", ".git", ph}, rawEntry{"100644", "checkpoint.md", ch}), `tree entry ".git": names the git directory (.git)`},
		{"symlink", rawTree(rawEntry{"120000", "checkpoint.md", ph}), `tree entry "checkpoint.md": a symlink where a file is expected`},
		{"gitlink", rawTree(rawEntry{"100644", "checkpoint.md", ch}, rawEntry{"160000", "notes.md", ph}), `tree entry "notes.md": a gitlink (submodule) where a file is expected`},
		{"unsorted", rawTree(rawEntry{"100644", "notes.md", ph}, rawEntry{"100644", "checkpoint.md", ch}), `tree entry "checkpoint.md": tree entries out of order`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := testStore(t)
			r, head, c := hostileRepo(t, st, "src", tc.tree, map[string][]byte{"p": pwned, "c": cp})
			root := filepath.Dir(st.Home)
			before := fssnap.Take(t, root)
			check := func(what string, err error) {
				t.Helper()
				if err == nil {
					t.Fatalf("%s: accepted", what)
				}
				if !errors.Is(err, ErrRefusedTree) || !strings.Contains(err.Error(), "commit "+short(c)+": "+tc.problem) {
					t.Fatalf("%s: %v, want commit %s: %s", what, err, short(c), tc.problem)
				}
				if d := fssnap.Diff(before, fssnap.Take(t, root), fssnap.Under(filepath.Base(st.Home)+"/state")); len(d) > 0 {
					t.Fatalf("%s wrote:\n%s", what, strings.Join(d, "\n"))
				}
			}
			check("checkout", r.Checkout(head, c, nil))
			check("check history", CheckHistory(r, c, nil))
			dst, _, err := st.Init("dst", InitOptions{Files: map[string][]byte{"checkpoint.md": cp}})
			if err != nil {
				t.Fatal(err)
			}
			before = fssnap.Take(t, root)
			_, err = CopyHistory(r, dst, c)
			check("copy", err)
			_, err = st.Materialize("new", r, c, nil)
			check("materialize", err)
			_, err = r.Files(c)
			check("files (restore)", err)
			_, err = r.ReadFile(c, "checkpoint.md")
			check("read file (show)", err)
			_, err = r.FileHashes(c)
			check("file hashes (push scan)", err)
		})
	}
}

// TestCheckHistoryMissingObjects: a commit whose tree or parent is not there, and a tree
// whose blob is not there, are refused before anything is copied.
func TestCheckHistoryMissingObjects(t *testing.T) {
	st := testStore(t)
	r, head, err := st.Init("s", InitOptions{Files: map[string][]byte{"checkpoint.md": []byte("# C\n")}})
	if err != nil {
		t.Fatal(err)
	}
	ow := newRawWriter(r)
	missing := plumbing.NewHash("2222222222222222222222222222222222222222")
	noTree, _ := ow.write(plumbing.CommitObject, testCommit(t, missing, []Hash{head}, st.Opts.Author, st.Opts.Now(), "x\n"))
	okTree, _ := ow.write(plumbing.TreeObject, rawTree(rawEntry{"100644", "checkpoint.md", BlobHash([]byte("# C\n"))}))
	noParent, _ := ow.write(plumbing.CommitObject, testCommit(t, okTree, []Hash{missing}, st.Opts.Author, st.Opts.Now(), "x\n"))
	blobless, _ := ow.write(plumbing.TreeObject, rawTree(rawEntry{"100644", "checkpoint.md", missing}))
	noBlob, _ := ow.write(plumbing.CommitObject, testCommit(t, blobless, []Hash{head}, st.Opts.Author, st.Opts.Now(), "x\n"))
	treeAsBlob, _ := ow.write(plumbing.TreeObject, rawTree(rawEntry{"100644", "checkpoint.md", okTree}))
	wrongType, _ := ow.write(plumbing.CommitObject, testCommit(t, treeAsBlob, []Hash{head}, st.Opts.Author, st.Opts.Now(), "x\n"))
	for _, tc := range []struct {
		name   string
		commit Hash
		want   string
	}{
		{"tree", noTree, "commit " + short(noTree) + ": tree " + short(missing) + " is missing"},
		{"parent", noParent, "commit " + short(noParent) + ": parent " + short(missing) + " is missing"},
		{"blob", noBlob, "commit " + short(noBlob) + `: tree entry "checkpoint.md": blob ` + short(missing) + " is missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckHistory(r, tc.commit, nil)
			if err == nil || err.Error() != tc.want || !errors.Is(err, ErrRefusedTree) {
				t.Fatalf("CheckHistory = %v, want %s", err, tc.want)
			}
		})
	}
	// A tree entry that names a tree as a file: found whether the walk met that tree as a
	// tree (here HEAD's) or not, and by the copy, which reads every blob anyway.
	want := "commit " + short(wrongType) + `: tree entry "checkpoint.md": ` + short(okTree) + " is a tree, not a blob"
	if err := CheckHistory(r, wrongType, nil); err == nil || err.Error() != want {
		t.Fatalf("CheckHistory = %v, want %s", err, want)
	}
	otherTree, _ := ow.write(plumbing.TreeObject, rawTree(rawEntry{"100644", "notes.md", BlobHash([]byte("# C\n"))}))
	asBlob, _ := ow.write(plumbing.TreeObject, rawTree(rawEntry{"100644", "checkpoint.md", otherTree}))
	unseen, _ := ow.write(plumbing.CommitObject, testCommit(t, asBlob, []Hash{head}, st.Opts.Author, st.Opts.Now(), "x\n"))
	want2 := "commit " + short(unseen) + `: tree entry "checkpoint.md": ` + short(otherTree) + " is a tree, not a blob"
	if err := CheckHistory(r, unseen, nil); err == nil || err.Error() != want2 {
		t.Fatalf("CheckHistory = %v, want %s", err, want2)
	}
	dst := testStore(t)
	d, _, err := dst.Init("d", InitOptions{Files: map[string][]byte{"notes.md": []byte("# N\n")}})
	if err != nil {
		t.Fatal(err)
	}
	before := fssnap.Take(t, d.GitDir)
	_, err = CopyHistory(r, d, wrongType)
	want = "commit " + short(wrongType) + `: tree entry "checkpoint.md": ` + short(okTree) + " is a tree, not a blob"
	if err == nil || err.Error() != want {
		t.Fatalf("CopyHistory = %v, want %s", err, want)
	}
	if diff := fssnap.Diff(before, fssnap.Take(t, d.GitDir), nil); len(diff) > 0 {
		t.Fatalf("the refused copy wrote:\n%s", strings.Join(diff, "\n"))
	}
	if _, err := os.Stat(filepath.Join(dst.Home, "sessions", ".init-x")); err == nil {
		t.Fatal("temporary directory left")
	}
}
