package repo

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

func memFiles(s string) map[string][]byte {
	return map[string][]byte{"checkpoint.md": []byte("# C\n" + s + "\n"), "notes.md": []byte("# N\n")}
}

// historyOf drives a repository that holds one commit, memFiles("0"), through the narrow
// interfaces only, as a layer above would: commits under WithWriteLock from several
// goroutines, a no-op commit, a merge prepared, applied and undone, a rejected write made
// twice, refs; and reads everything back. It returns what it read, for two implementations
// to be compared.
func historyOf(t *testing.T, r Repository) []string {
	t.Helper()
	var out []string
	note := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	files := memFiles
	first, err := r.Head()
	if err != nil || first == ZeroHash {
		t.Fatalf("head %s, %v", first, err)
	}
	// Writers take turns under the lock: every commit lands, none is lost to a race.
	var wg sync.WaitGroup
	var mu sync.Mutex
	var committed []Hash
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := r.WithWriteLock(func() error {
				h, changed, err := r.Commit(CommitRequest{Files: files(fmt.Sprint(10 + i)), Message: fmt.Sprintf("checkpoint(write): %d\n\nCkpt-Trigger: write\n", i)})
				if err == nil && !changed {
					err = errors.New("nothing committed")
				}
				mu.Lock()
				committed = append(committed, h)
				mu.Unlock()
				return err
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	head, err := r.Head()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := r.Log(head, func(CommitInfo) bool { n++; return true }); err != nil || n != 5 {
		t.Fatalf("log walks %d commits (%v), want 5", n, err)
	}
	// The commits of racing goroutines differ in order, not in number: from here on the
	// history is the same for both implementations, made again in a fixed order.
	if err := r.SetRef(MainRef, first); err != nil {
		t.Fatal(err)
	}
	var hs []Hash
	for i := range 3 {
		h, _, err := r.Commit(CommitRequest{Files: files(fmt.Sprint(i + 1)), Message: fmt.Sprintf("checkpoint(write): %d\n\nCkpt-Trigger: write\n", i)})
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	if h, changed, err := r.Commit(CommitRequest{Files: files("3"), Message: "same\n"}); err != nil || changed || h != hs[2] {
		t.Fatalf("no-op commit: %s %v %v", h, changed, err)
	}
	side, err := r.Prepare(CommitRequest{Files: files("side"), Message: "side\n", Parents: []Hash{hs[0]}, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.SetRef("refs/heads/side", side.Commit()); err != nil {
		t.Fatal(err)
	}
	merge, err := r.Prepare(CommitRequest{Files: files("merged"), Message: "merge\n", Parents: []Hash{hs[2], side.Commit()}})
	if err != nil {
		t.Fatal(err)
	}
	if err := merge.Apply(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Prepare(CommitRequest{Files: files("x"), Parents: []Hash{BlobHash([]byte("x"))}}); !errors.Is(err, ErrMissingParent) {
		t.Errorf("Prepare on a missing parent = %v", err)
	}
	for range 2 {
		name, h, err := r.Reject(map[string][]byte{"checkpoint.md": []byte("broken\n")}, "rejected\n")
		note("reject %s %s %v", name, h, err)
	}
	head, _ = r.Head()
	note("head %s first %s", head, first)
	_ = r.Log(head, func(c CommitInfo) bool {
		note("log %s %q %v trigger=%s", c.Hash, c.Subject, c.Parents, c.Trailer("Ckpt-Trigger"))
		return true
	})
	for _, rev := range []string{"HEAD", "HEAD~1", "HEAD^2", "main~3", head.String()[:10], "rejected/1", "rejected/9", "nope"} {
		h, err := r.Resolve(rev)
		note("resolve %s %s %v", rev, h, errors.Is(err, ErrBadRevision))
	}
	got, err := r.Files(head)
	note("files %q %v", got, err)
	b, err := r.ReadFile(hs[0], "checkpoint.md")
	note("read %q %v", b, err)
	_, err = r.ReadFile(hs[0], "checkpoint-none.md")
	note("read missing %v", errors.Is(err, ErrNoFile))
	fh, err := r.FileHashes(hs[1])
	note("hashes %v %v", fh, err)
	b, err = r.Blob(fh["notes.md"])
	note("blob %q %v", b, err)
	for _, pair := range [][2]Hash{{hs[0], head}, {head, hs[0]}, {side.Commit(), head}} {
		ok, err := r.IsAncestor(pair[0], pair[1])
		note("ancestor %v %v", ok, err)
	}
	mb, err := r.MergeBase(hs[2], side.Commit())
	note("merge base %s %v (want %s)", mb, err, hs[0])
	refs, err := r.Refs("refs/")
	note("refs %v %v", refs, err)
	rej, err := r.Rejected()
	note("rejected %v %v", rej, err)
	// Undo takes the merge back.
	if err := merge.Undo(); err != nil {
		t.Fatal(err)
	}
	if h, _ := r.Head(); h != hs[2] {
		t.Errorf("after Undo HEAD is %s, want %s", h, hs[2])
	}
	return out
}

// TestMemoryIsARepository: the in-memory repository and a session on disk, driven through
// the same interfaces with the same author and clock, make the same commits, byte for byte,
// and answer every read alike.
func TestMemoryIsARepository(t *testing.T) {
	st := testStore(t)
	at := time.Date(2026, 4, 1, 22, 0, 0, 0, time.UTC)
	st.Opts.Now = func() time.Time { return at }
	init := CommitRequest{Files: memFiles("0"), Message: "checkpoint(init): start\n"}
	r, _, err := st.Init("m", InitOptions{Files: init.Files, Message: init.Message})
	if err != nil {
		t.Fatal(err)
	}
	m := NewMemory(st.Opts.Author, st.Opts.Now)
	if _, _, err := m.Commit(init); err != nil {
		t.Fatal(err)
	}
	onDisk, inMemory := historyOf(t, r), historyOf(t, m)
	if len(onDisk) != len(inMemory) {
		t.Fatalf("%d answers on disk, %d in memory", len(onDisk), len(inMemory))
	}
	for i := range onDisk {
		if onDisk[i] != inMemory[i] {
			t.Errorf("on disk: %s\nin memory: %s", onDisk[i], inMemory[i])
		}
	}
	if t.Failed() || testing.Verbose() {
		for _, l := range onDisk {
			t.Log(l)
		}
	}
}
