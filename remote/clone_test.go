package remote

import (
	"fmt"
	"testing"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/internal/config"
	"github.com/ckpt-dev/ckpt/internal/gittest"
	"github.com/ckpt-dev/ckpt/repo"
)

// TestCloneMakesSessionsAtOnce: a clone makes its new sessions on several goroutines
// (run with -race); the report still lists them in order, each whole, and git fsck finds
// every one sound.
func TestCloneMakesSessionsAtOnce(t *testing.T) {
	a := newTestService(t, &config.Config{})
	heads := map[string]repo.Hash{}
	for i := range 7 {
		id := fmt.Sprintf("s%d", i)
		r := a.session(t, id, "six", nil, nil)
		for v := range i % 3 {
			cp, err := r.Files(mustHead(t, r))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Write(r, checkpoint.File, append(cp[checkpoint.File], fmt.Sprintf("\nversion %d\n", v)...), checkpoint.CommitOptions{Trigger: checkpoint.TriggerWrite}); err != nil {
				t.Fatal(err)
			}
		}
		heads[id] = mustHead(t, r)
	}
	remoteDir := t.TempDir()
	gittest.Git(t, remoteDir, "init", "-q", "--bare")
	if err := a.cp.Store.SetRemote("origin", remoteDir); err != nil {
		t.Fatal(err)
	}
	net, err := repo.NewGitNetwork("auto", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Push(Options{Remote: "origin", Network: net}); err != nil {
		t.Fatal(err)
	}
	b := newTestService(t, &config.Config{})
	rep, err := b.Clone(remoteDir, net, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ps := range rep.Sessions {
		got = append(got, ps.Session+" "+ps.Result)
		if ps.Session == "knowledge" {
			continue
		}
		if ps.Commit != heads[ps.Session].String() {
			t.Errorf("%s: created at %s, want %s", ps.Session, ps.Commit, heads[ps.Session])
		}
		r, err := b.cp.Store.Open(repo.SessionID(ps.Session))
		if err != nil {
			t.Fatal(err)
		}
		if h := mustHead(t, r); h != heads[ps.Session] {
			t.Errorf("%s: head %s, want %s", ps.Session, h, heads[ps.Session])
		}
		if out, err := gittest.Run(t, r.Dir, "fsck", "--full", "--strict"); err != nil {
			t.Errorf("%s: git fsck: %v\n%s", ps.Session, err, out)
		}
	}
	if want := "[s0 created s1 created s2 created s3 created s4 created s5 created s6 created]"; fmt.Sprint(got) != want {
		t.Errorf("report %v, want %s", got, want)
	}
}
