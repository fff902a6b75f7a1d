package remote

import (
	"fmt"
	"os"
	"testing"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/internal/gittest"
	"github.com/ckpt-dev/ckpt/repo"
)

// longSession is a session of n commits, each changing the checkpoint (about 20 KB) and
// the notes; one early commit holds a token, removed in the next.
func longSession(b *testing.B, ts *testService, n int) *repo.Repo {
	b.Helper()
	r := ts.session(b, "long", "six", nil, nil)
	cp := bigSix(20 << 10)
	for i := range n {
		notes := fmt.Sprintf("# Notes\n\n- note %d\n", i)
		if i == 10 {
			notes += "- token " + testToken + "\n"
		}
		files := map[string][]byte{checkpoint.File: append(append([]byte{}, cp...), fmt.Sprintf("- step %d\n", i)...), checkpoint.NotesFile: []byte(notes)}
		if _, _, err := r.Commit(repo.CommitRequest{Files: files, Message: fmt.Sprintf("checkpoint(write): %d\n", i)}); err != nil {
			b.Fatal(err)
		}
	}
	return r
}

// BenchmarkSecretFindingsCold2000 is what the first ckpt status costs for a session of
// 2,000 commits that never was pushed: every distinct file version scanned once.
func BenchmarkSecretFindingsCold2000(b *testing.B) {
	ts := newTestService(b, nil)
	r := longSession(b, ts, 2000)
	b.ResetTimer()
	for b.Loop() {
		os.Remove(ts.findingsPath(r))
		fs, err := ts.SecretFindings(r)
		if err != nil || len(fs) != 1 {
			b.Fatalf("%v %v", fs, err)
		}
	}
}

// BenchmarkSecretFindingsWarm2000 is a later status, one commit after the last: the cache
// covers the rest.
func BenchmarkSecretFindingsWarm2000(b *testing.B) {
	ts := newTestService(b, nil)
	r := longSession(b, ts, 2000)
	if _, err := ts.SecretFindings(r); err != nil {
		b.Fatal(err)
	}
	files, _ := r.Files(mustHeadB(b, r))
	i := 0
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		i++
		files[checkpoint.NotesFile] = fmt.Appendf(nil, "# Notes\n\n- later note %d\n", i)
		if _, _, err := r.Commit(repo.CommitRequest{Files: files, Message: "checkpoint(write): later\n"}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		fs, err := ts.SecretFindings(r)
		if err != nil || len(fs) != 1 {
			b.Fatalf("%v %v", fs, err)
		}
	}
}

// pushedLongSession is longSession pushed (with its token) to a bare repository, then one
// more commit that resets the notes to an earlier version: the common push after a sync.
func pushedLongSession(b *testing.B, ts *testService, n int) (*repo.Repo, *repo.Repo) {
	b.Helper()
	r := longSession(b, ts, n)
	remote := b.TempDir()
	gittest.Git(b, remote, "init", "-q", "--bare")
	if err := ts.cp.Store.SetRemote("origin", remote); err != nil {
		b.Fatal(err)
	}
	net, err := repo.NewGitNetwork("auto", nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ts.Push(Options{Remote: "origin", Network: net, AllowSecrets: true}); err != nil {
		b.Fatal(err)
	}
	files, _ := r.Files(mustHeadB(b, r))
	files[checkpoint.NotesFile] = []byte("# Notes\n\n- note 5\n")
	if _, _, err := r.Commit(repo.CommitRequest{Files: files, Message: "checkpoint(full): reset notes\n"}); err != nil {
		b.Fatal(err)
	}
	t, err := ts.cp.Store.Transport()
	if err != nil {
		b.Fatal(err)
	}
	return r, t
}

func mustHeadB(b *testing.B, r *repo.Repo) repo.Hash {
	h, err := r.Head()
	if err != nil {
		b.Fatal(err)
	}
	return h
}

// BenchmarkScanOutgoingOneNew2000 is the push scan of one new commit on top of 2,000 the
// remote has: it must not cost a walk of the remote's history.
func BenchmarkScanOutgoingOneNew2000(b *testing.B) {
	ts := newTestService(b, nil)
	r, t := pushedLongSession(b, ts, 2000)
	head := mustHeadB(b, r)
	have, _ := t.Ref("refs/remotes/origin/sessions/long")
	b.ResetTimer()
	for b.Loop() {
		fs, err := ts.scanOutgoing(r, head, t, []repo.Hash{have}, repo.ZeroHash)
		if err != nil || len(fs) != 0 {
			b.Fatalf("%v %v", fs, err)
		}
	}
}

// BenchmarkSecretFindingsPushed2000 is what ckpt status costs for that session.
func BenchmarkSecretFindingsPushed2000(b *testing.B) {
	ts := newTestService(b, nil)
	r, _ := pushedLongSession(b, ts, 2000)
	b.ResetTimer()
	for b.Loop() {
		fs, err := ts.SecretFindings(r)
		if err != nil || len(fs) != 0 {
			b.Fatalf("%v %v", fs, err)
		}
	}
}

// BenchmarkRedact2000 rewrites a session of 2,000 commits whose 11th held a token.
func BenchmarkRedact2000(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		ts := newTestService(b, nil)
		r := longSession(b, ts, 2000)
		b.StartTimer()
		rep, err := ts.Redact(r, RedactOptions{})
		if err != nil || rep.Total() != 1 {
			b.Fatalf("%+v %v", rep, err)
		}
	}
}
