package repo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/ckpt-dev/ckpt/internal/gittest"
)

// TestDoctor: each breakage is found, repaired without losing bytes, and a second run
// finds nothing; what cannot be repaired is reported.
func TestDoctor(t *testing.T) {
	for _, tc := range []struct {
		name     string
		breakIt  func(t *testing.T, r *Repo, hs []Hash)
		problem  string // in the finding
		repaired bool
		head     int // index of the commit main must point to afterwards
	}{
		{"stale ref lock", func(t *testing.T, r *Repo, hs []Hash) {
			p := filepath.Join(r.GitDir, "refs", "heads", "main.lock")
			_ = os.WriteFile(p, nil, 0o644)
			old := time.Now().Add(-time.Minute)
			_ = os.Chtimes(p, old, old)
		}, "main.lock was left by a killed process", true, 2},
		{"main deleted", func(t *testing.T, r *Repo, hs []Hash) {
			_ = os.Remove(filepath.Join(r.GitDir, "refs", "heads", "main"))
		}, "refs/heads/main is missing", true, 2},
		{"main and its reflog deleted: HEAD's reflog", func(t *testing.T, r *Repo, hs []Hash) {
			_ = os.Remove(filepath.Join(r.GitDir, "refs", "heads", "main"))
			_ = os.Remove(filepath.Join(r.GitDir, "logs", "refs", "heads", "main"))
		}, "refs/heads/main is missing", true, 2},
		{"main zeroed, newest commit's blob gone: an older entry", func(t *testing.T, r *Repo, hs []Hash) {
			_ = os.WriteFile(filepath.Join(r.GitDir, "refs", "heads", "main"), []byte(ZeroHash.String()+"\n"), 0o644)
			_ = os.Remove(r.loosePath(BlobHash([]byte("2\n"))))
		}, "refs/heads/main holds the zero hash", true, 1},
		{"no reflog at all", func(t *testing.T, r *Repo, hs []Hash) {
			_ = os.Remove(filepath.Join(r.GitDir, "refs", "heads", "main"))
			_ = os.RemoveAll(filepath.Join(r.GitDir, "logs"))
		}, "refs/heads/main is missing", false, -1},
		{"HEAD deleted", func(t *testing.T, r *Repo, hs []Hash) {
			_ = os.Remove(filepath.Join(r.GitDir, "HEAD"))
		}, ".git/HEAD is missing", true, 2},
		{"MERGE_HEAD names a commit that is gone", func(t *testing.T, r *Repo, hs []Hash) {
			_ = r.SetMergeHead(plumbing.NewHash("0123456789abcdef0123456789abcdef01234567"), "merge\n")
		}, "is not a commit with its whole history here", true, 2},
		{"MERGE_HEAD already merged", func(t *testing.T, r *Repo, hs []Hash) {
			_ = r.SetMergeHead(hs[1], "merge\n")
		}, "is already in main's history", true, 2},
		{"pack without index", func(t *testing.T, r *Repo, hs []Hash) {
			if err := r.Pack(); err != nil {
				t.Fatal(err)
			}
			idx, _ := filepath.Glob(filepath.Join(r.GitDir, "objects", "pack", "*.idx"))
			_ = os.Remove(idx[0])
			old := time.Now().Add(-time.Minute)
			_ = os.Chtimes(strings.TrimSuffix(idx[0], ".idx")+".pack", old, old)
		}, "has no index", true, 2},
		{"main's history lacks a blob", func(t *testing.T, r *Repo, hs []Hash) {
			_ = os.Remove(r.loosePath(BlobHash([]byte("1\n"))))
		}, "history lacks 1 object(s)", false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, hs := threeCommits(t)
			tc.breakIt(t, r, hs)
			r.Reset()
			dry, err := r.store.Doctor(r, DoctorOptions{DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			if dry.Unrepaired() == 0 {
				t.Fatalf("dry run found nothing")
			}
			rep, err := r.store.Doctor(r, DoctorOptions{})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, f := range rep.Findings {
				if strings.Contains(f.Problem, tc.problem) {
					found = true
					if f.Repaired != tc.repaired {
						t.Errorf("%+v: repaired = %v, want %v", f, f.Repaired, tc.repaired)
					}
				}
			}
			if !found {
				t.Fatalf("findings %+v lack %q", rep.Findings, tc.problem)
			}
			if !tc.repaired {
				return
			}
			if h, err := r.Head(); err != nil || h != hs[tc.head] {
				t.Errorf("main = %s %v, want %s", short(h), err, short(hs[tc.head]))
			}
			again, err := r.store.Doctor(r, DoctorOptions{})
			if err != nil || len(again.Findings) != 0 {
				t.Errorf("second run: %+v %v", again.Findings, err)
			}
			if tc.head == 2 {
				gittest.Fsck(t, r.Dir)
			}
			// The repaired repository takes commits again.
			if _, _, err := r.Commit(CommitRequest{Files: map[string][]byte{"checkpoint.md": []byte("after\n")}, Message: "m\n"}); err != nil {
				t.Errorf("commit after repair: %v", err)
			}
		})
	}
}
