package repo

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt/internal/gittest"
)

// pushSetup is a transport holding three commits, an empty bare remote and the system
// git's network.
func pushSetup(t *testing.T) (tr *Repo, hs []Hash, remote string, n *GitNetwork) {
	t.Helper()
	r, hs := threeCommits(t)
	tr, err := r.store.Transport()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CopyHistory(r, tr, hs[2]); err != nil {
		t.Fatal(err)
	}
	remote = t.TempDir()
	gittest.Git(t, remote, "init", "-q", "--bare")
	n, err = NewGitNetwork("system", nil)
	if err != nil {
		t.Skip(err)
	}
	return tr, hs, remote, n
}

// TestPushManyRefs: a push of many refs goes through pushStage: exactly the refs named
// arrive (not a ref the remote moved past, not what a killed push left staged), forced
// ones too, and nothing stays staged in the transport.
func TestPushManyRefs(t *testing.T) {
	tr, hs, remote, n := pushSetup(t)
	// The remote has moved stale past what the transport holds.
	if err := tr.SetRefs(map[string]Hash{SessionRefPrefix + "stale": hs[2]}, "x"); err != nil {
		t.Fatal(err)
	}
	if err := n.Push(tr, remote, []string{SessionRefPrefix + "stale:" + SessionRefPrefix + "stale"}); err != nil {
		t.Fatal(err)
	}
	up := map[string]Hash{SessionRefPrefix + "stale": hs[0], pushStage + "heads/sessions/leftover": hs[1]}
	var specs []string
	for i := range manySpecs + 3 {
		ref := fmt.Sprintf("%ss%02d", SessionRefPrefix, i)
		up[ref] = hs[2]
		specs = append(specs, ref+":"+ref)
	}
	if err := tr.SetRefs(up, "x"); err != nil {
		t.Fatal(err)
	}
	remoteRefs := func() map[string]string {
		out := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(gittest.Git(t, remote, "for-each-ref", "--format=%(refname) %(objectname)")), "\n") {
			name, h, _ := strings.Cut(l, " ")
			out[name] = h
		}
		return out
	}
	check := func(want Hash) {
		t.Helper()
		got := remoteRefs()
		if len(got) != len(specs)+1 || got[SessionRefPrefix+"stale"] != hs[2].String() {
			t.Errorf("the remote has %v", got)
		}
		for _, s := range specs {
			ref, _, _ := strings.Cut(strings.TrimPrefix(s, "+"), ":")
			if got[ref] != want.String() {
				t.Errorf("%s: remote has %s, want %s", ref, got[ref], want)
			}
		}
		if staged, err := tr.Refs("refs/ckpt/"); err != nil || len(staged) > 0 {
			t.Errorf("left staged in the transport: %v %v", staged, err)
		}
		if out := gittest.Git(t, tr.GitDir, "for-each-ref", "refs/ckpt/"); out != "" {
			t.Errorf("git sees staged refs: %s", out)
		}
	}
	if err := n.Push(tr, remote, specs); err != nil {
		t.Fatal(err)
	}
	check(hs[2])
	// Forced: every ref goes back.
	back := map[string]Hash{}
	for i, s := range specs {
		ref, _, _ := strings.Cut(s, ":")
		back[ref] = hs[1]
		specs[i] = "+" + s
	}
	if err := tr.SetRefs(back, "x"); err != nil {
		t.Fatal(err)
	}
	if err := n.Push(tr, remote, specs); err != nil {
		t.Fatal(err)
	}
	check(hs[1])
}

// TestPushClearsStagedRefs: refs a killed push left staged keep what they reach; a push of
// a single ref clears them, and so does PruneMirror (a redaction's forced push would
// otherwise leave the old history in the transport).
func TestPushClearsStagedRefs(t *testing.T) {
	tr, hs, remote, n := pushSetup(t)
	leftover := map[string]Hash{pushStage + "heads/sessions/a": hs[1], pushStage + "heads/sessions/b": hs[0], SessionRefPrefix + "one": hs[2]}
	staged := func() map[string]Hash {
		t.Helper()
		refs, err := tr.Refs(pushStage)
		if err != nil {
			t.Fatal(err)
		}
		return refs
	}
	if err := tr.SetRefs(leftover, "x"); err != nil {
		t.Fatal(err)
	}
	if err := n.Push(tr, remote, []string{SessionRefPrefix + "one:" + SessionRefPrefix + "one"}); err != nil {
		t.Fatal(err)
	}
	if got := staged(); len(got) > 0 {
		t.Errorf("a push of one ref left the staged refs: %v", got)
	}
	if err := tr.SetRefs(leftover, "x"); err != nil {
		t.Fatal(err)
	}
	if err := tr.PruneMirror(); err != nil {
		t.Fatal(err)
	}
	if got := staged(); len(got) > 0 {
		t.Errorf("PruneMirror kept the staged refs: %v", got)
	}
}
