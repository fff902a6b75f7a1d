package repo

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ckpt-dev/ckpt/internal/gittest"
)

func initNotes(t *testing.T) (*Repo, map[string][]byte) {
	t.Helper()
	st := testStore(t)
	files := map[string][]byte{"checkpoint.md": []byte("# C\n"), "notes.md": []byte("# N\n\n- [note] one\n")}
	r, _, err := st.Init("alpha", InitOptions{Files: files, Message: "start\n"})
	if err != nil {
		t.Fatal(err)
	}
	return r, files
}

func appendTo(t *testing.T, p, s string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// A file that changed since the caller read it is not replaced: nothing is written, no
// commit is made, and the caller learns ErrWorkTreeChanged.
func TestApplyRefusesAChangedFile(t *testing.T) {
	r, files := initNotes(t)
	head, _ := r.Head()
	disk := map[string][]byte{"checkpoint.md": files["checkpoint.md"], "notes.md": files["notes.md"]}
	if err := os.WriteFile(r.WorkPath("checkpoint.md"), []byte("# C\nharness\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := r.Prepare(CommitRequest{Files: map[string][]byte{"checkpoint.md": []byte("# C\nckpt\n"), "notes.md": []byte("# N\n")}, Message: "m\n", Disk: disk})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(); !errors.Is(err, ErrWorkTreeChanged) {
		t.Fatalf("Apply = %v, want ErrWorkTreeChanged", err)
	}
	if h, _ := r.Head(); h != head {
		t.Errorf("main moved to %s", h)
	}
	for name, want := range map[string]string{"checkpoint.md": "# C\nharness\n", "notes.md": string(files["notes.md"])} {
		if b, _ := os.ReadFile(r.WorkPath(name)); string(b) != want {
			t.Errorf("%s = %q, want %q", name, b, want)
		}
	}
	gittest.Fsck(t, r.Dir)
}

// Notes appended after the caller read notes.md stay after its new content, and the index
// does not pretend the file is clean.
func TestApplyKeepsAppendedNotes(t *testing.T) {
	r, files := initNotes(t)
	disk := map[string][]byte{"checkpoint.md": files["checkpoint.md"], "notes.md": files["notes.md"]}
	appendTo(t, r.WorkPath("notes.md"), "- [note] two\n")
	p, err := r.Prepare(CommitRequest{Files: map[string][]byte{"checkpoint.md": []byte("# C\none\n"), "notes.md": []byte("# N\n")}, Message: "m\n", Disk: disk, Appendable: []string{"notes.md"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(r.WorkPath("notes.md")); string(b) != "# N\n- [note] two\n" {
		t.Errorf("notes.md = %q", b)
	}
	if len(p.Kept) != 1 || p.Kept[0] != "notes.md" {
		t.Errorf("Kept = %v", p.Kept)
	}
	if out := gittest.Git(t, r.Dir, "status", "--porcelain"); out != " M notes.md\n" {
		t.Errorf("git status = %q", out)
	}
}

// An agent that opened notes.md before ckpt replaced it and appends afterwards writes into
// the replaced file; those bytes are carried over to the new one.
func TestApplyCarriesLateAppends(t *testing.T) {
	r, files := initNotes(t)
	disk := map[string][]byte{"checkpoint.md": files["checkpoint.md"], "notes.md": files["notes.md"]}
	agent, err := os.OpenFile(r.WorkPath("notes.md"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	afterReplace = func(p string) {
		if filepath.Base(p) == "notes.md" {
			if _, err := agent.WriteString("- [note] late\n"); err != nil {
				t.Error(err)
			}
		}
	}
	defer func() { afterReplace = nil }()
	p, err := r.Prepare(CommitRequest{Files: map[string][]byte{"checkpoint.md": []byte("# C\none\n"), "notes.md": []byte("# N\n")}, Message: "m\n", Disk: disk, Appendable: []string{"notes.md"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(r.WorkPath("notes.md")); string(b) != "# N\n- [note] late\n" {
		t.Errorf("notes.md = %q", b)
	}
}

// Only the files a commit changes are written: a file it leaves as HEAD has it keeps its
// uncommitted bytes on disk.
func TestApplyLeavesOtherFiles(t *testing.T) {
	r, files := initNotes(t)
	if err := os.WriteFile(r.WorkPath("checkpoint.md"), []byte("# C\nbroken, uncommitted\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	disk := map[string][]byte{"checkpoint.md": []byte("# C\nbroken, uncommitted\n"), "notes.md": files["notes.md"]}
	_, changed, err := r.Commit(CommitRequest{Files: map[string][]byte{"checkpoint.md": files["checkpoint.md"], "notes.md": []byte("# N\n")}, Message: "m\n", Disk: disk})
	if err != nil || !changed {
		t.Fatalf("Commit = %v, %v", changed, err)
	}
	if b, _ := os.ReadFile(r.WorkPath("checkpoint.md")); string(b) != "# C\nbroken, uncommitted\n" {
		t.Errorf("checkpoint.md = %q", b)
	}
	if out := gittest.Git(t, r.Dir, "status", "--porcelain"); out != " M checkpoint.md\n" {
		t.Errorf("git status = %q", out)
	}
}

// An append that reaches the replaced notes.md while a kill -9 cuts ckpt's watch short is
// put back by the next command that takes the session's lock, once; a watch that ends
// normally leaves no guard behind.
func TestLateAppendAfterKillPutBackByNextLock(t *testing.T) {
	r, files := initNotes(t)
	disk := map[string][]byte{"checkpoint.md": files["checkpoint.md"], "notes.md": files["notes.md"]}
	agent, err := os.OpenFile(r.WorkPath("notes.md"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	// the state a kill right after the replacement leaves: the guard made, the file
	// replaced, the watch never run
	p := r.WorkPath("notes.md")
	f, fi, cur, _, err := openCurrent(p)
	if err != nil {
		t.Fatal(err)
	}
	g, err := r.store.guardLate(r.LockName, p, f, int64(len(cur)))
	if err != nil || g == nil {
		t.Fatalf("no guard made: %v", err)
	}
	if err := replaceFile(p, fi, []byte("# N\n"), FilePerm, false); err != nil {
		t.Fatal(err)
	}
	closeFile(f)
	if _, err := agent.WriteString("- [note] late\n"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "# N\n" {
		t.Fatalf("notes.md before the next lock = %q", b)
	}
	for range 2 {
		unlock, err := r.store.Lock(r.LockName, true)
		if err != nil {
			t.Fatal(err)
		}
		unlock()
	}
	if b, _ := os.ReadFile(p); string(b) != "# N\n- [note] late\n" {
		t.Errorf("notes.md after the next lock = %q", b)
	}
	if ents, _ := os.ReadDir(r.store.lateDir(r.LockName)); len(ents) != 0 {
		t.Errorf("%d guard(s) left", len(ents))
	}

	// killed after the guard was made but before the replacement: the agent's append is
	// in the work file already and is not appended twice
	f, _, cur, _, err = openCurrent(p)
	if err != nil {
		t.Fatal(err)
	}
	if g, err = r.store.guardLate(r.LockName, p, f, int64(len(cur))); err != nil || g == nil {
		t.Fatalf("no guard made: %v", err)
	}
	closeFile(f)
	appendTo(t, p, "- [note] before the rename\n")
	unlock, err := r.store.Lock(r.LockName, true)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if b, _ := os.ReadFile(p); string(b) != "# N\n- [note] late\n- [note] before the rename\n" {
		t.Errorf("notes.md after a kill before the rename = %q", b)
	}

	// a commit that watches to the end leaves no guard (nor the replaced bytes) behind
	disk = map[string][]byte{"checkpoint.md": files["checkpoint.md"], "notes.md": []byte("# N\n- [note] late\n- [note] before the rename\n")}
	pr, err := r.Prepare(CommitRequest{Files: map[string][]byte{"checkpoint.md": []byte("# C\none\n"), "notes.md": []byte("# N\n")}, Message: "m\n", Disk: disk, Appendable: []string{"notes.md"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := pr.Apply(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(r.store.lateDir(r.LockName)); len(ents) != 0 {
		t.Errorf("%d guard(s) left after a whole watch", len(ents))
	}
}
