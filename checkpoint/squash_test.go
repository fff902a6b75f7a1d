package checkpoint

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/internal/gittest"
	"github.com/ckpt-dev/ckpt/repo"
)

// history makes a repository whose first-parent history has one commit per trigger, oldest
// first, a minute apart from 2026-04-01T10:00Z; each sparse commit changes section s<i>.
func history(t *testing.T, triggers ...Trigger) (*repo.Repo, []repo.Hash) {
	t.Helper()
	opts := repo.DefaultOptions()
	opts.Fsync = false
	clock := time.Date(2026, 4, 1, 9, 59, 0, 0, time.UTC)
	opts.Now = func() time.Time { return clock }
	opts.Author = repo.Signature{Name: "ckpt test", Email: "test@example.com"}
	st := repo.NewStore(t.TempDir(), opts)
	var r *repo.Repo
	var hs []repo.Hash
	for i, tr := range triggers {
		clock = clock.Add(time.Minute)
		files := map[string][]byte{File: fmt.Appendf(nil, "version %d\n", i)}
		msg := commitMessage("a", tr, "", Subject(tr, fmt.Sprint("update ", i)), nil, nil)
		msg = strings.Replace(msg, KeySections+": \n", fmt.Sprintf("%s: s%d\n", KeySections, i), 1)
		var h repo.Hash
		var err error
		if r == nil {
			r, h, err = st.Init("a", repo.InitOptions{Files: files, Message: msg})
		} else {
			h, _, err = r.Commit(repo.CommitRequest{Files: files, Message: msg})
		}
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	return r, hs
}

func firstParents(t *testing.T, r *repo.Repo) []repo.CommitInfo {
	t.Helper()
	head, err := r.Head()
	if err != nil {
		t.Fatal(err)
	}
	var out []repo.CommitInfo
	if err := r.Log(head, func(ci repo.CommitInfo) bool { out = append([]repo.CommitInfo{ci}, out...); return true }); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSquash(t *testing.T) {
	const m, s, f = TriggerManual, TriggerSparse, TriggerFull
	late := time.Date(2026, 4, 2, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		triggers []Trigger
		opts     func(hs []repo.Hash) SquashOptions
		// want is the history afterwards: each commit's trigger and, for a squash, its count.
		want      string
		runs      int
		rewritten int
		kept      int
	}{
		{"runs of sparse become one each", []Trigger{m, s, s, s, f, s, s, m},
			func([]repo.Hash) SquashOptions { return SquashOptions{OlderThan: late} },
			"manual sparse×3 full sparse×2 manual", 2, 7, 0},
		{"a lone sparse is kept", []Trigger{m, s, f, s},
			func([]repo.Hash) SquashOptions { return SquashOptions{OlderThan: late} },
			"manual sparse full sparse", 0, 0, 0},
		{"only older than the cut", []Trigger{m, s, s, s, s},
			func([]repo.Hash) SquashOptions {
				return SquashOptions{OlderThan: time.Date(2026, 4, 1, 10, 3, 30, 0, time.UTC)}
			},
			"manual sparse×3 sparse", 1, 4, 0},
		{"pushed history is kept", []Trigger{m, s, s, s, s, s},
			func(hs []repo.Hash) SquashOptions { return SquashOptions{OlderThan: late, Pushed: hs[2:3]} },
			"manual sparse sparse sparse×3", 1, 3, 3},
		{"forced, pushed history too", []Trigger{m, s, s, s},
			func(hs []repo.Hash) SquashOptions {
				return SquashOptions{OlderThan: late, Pushed: hs[3:], Force: true}
			},
			"manual sparse×3", 1, 3, 0},
		{"a run from the root becomes a root", []Trigger{s, s, m},
			func([]repo.Hash) SquashOptions { return SquashOptions{OlderThan: late} },
			"sparse×2 manual", 1, 3, 0},
		{"dry run", []Trigger{m, s, s},
			func([]repo.Hash) SquashOptions { return SquashOptions{OlderThan: late, DryRun: true} },
			"manual sparse sparse", 1, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, hs := history(t, tc.triggers...)
			rep, err := Squash(r, tc.opts(hs))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ci := range firstParents(t, r) {
				tr := ci.Trailer(KeyTrigger)
				if n := ci.Trailer(KeySquashed); n != "" {
					tr += "×" + n
				}
				got = append(got, tr)
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("history %q, want %q", strings.Join(got, " "), tc.want)
			}
			if len(rep.Runs) != tc.runs || rep.Rewritten != tc.rewritten || rep.Kept != tc.kept {
				t.Errorf("report: %d runs, %d rewritten, %d kept; want %d, %d, %d", len(rep.Runs), rep.Rewritten, rep.Kept, tc.runs, tc.rewritten, tc.kept)
			}
			if rep.Before != hs[len(hs)-1] {
				t.Errorf("Before %s, want the old head", repo.ShortHash(rep.Before))
			}
			if head, _ := r.Head(); head != rep.After {
				t.Errorf("After %s, head %s", repo.ShortHash(rep.After), repo.ShortHash(head))
			}
			// Every commit keeps its files: the newest is the old head's.
			files, err := r.Files(rep.After)
			if err != nil || string(files[File]) != fmt.Sprintf("version %d\n", len(hs)-1) {
				t.Errorf("head files %q, %v", files[File], err)
			}
			gittest.Fsck(t, r.Dir)
		})
	}
}

// TestSquashMessage: the squashed commit names the run's times and the union of its sections.
func TestSquashMessage(t *testing.T) {
	r, _ := history(t, TriggerManual, TriggerSparse, TriggerSparse)
	rep, err := Squash(r, SquashOptions{OlderThan: time.Date(2026, 4, 2, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	ci, err := r.CommitInfo(rep.After)
	if err != nil {
		t.Fatal(err)
	}
	want := "checkpoint(sparse): 2 sparse checkpoints squashed (2026-04-01T10:01Z to 2026-04-01T10:02Z)\n\n" +
		"Ckpt-Session: a\nCkpt-Trigger: sparse\nCkpt-Sections: s1,s2\nCkpt-Squashed: 2\n"
	if ci.Message != want {
		t.Errorf("message\n%q\nwant\n%q", ci.Message, want)
	}
}

// TestSquashRefusesPendingMerge: nothing is rewritten while MERGE_HEAD is there.
func TestSquashRefusesPendingMerge(t *testing.T) {
	r, hs := history(t, TriggerManual, TriggerSparse, TriggerSparse)
	if err := r.SetMergeHead(hs[1], "merge\n"); err != nil {
		t.Fatal(err)
	}
	_, err := Squash(r, SquashOptions{OlderThan: time.Now().Add(24 * time.Hour)})
	if !errors.Is(err, repo.ErrMergePending) {
		t.Fatalf("Squash = %v, want ErrMergePending", err)
	}
	if h, _ := r.Head(); h != hs[2] {
		t.Errorf("HEAD moved to %s", repo.ShortHash(h))
	}
}

// trailerHistory makes a repository whose first-parent history has one commit per trailer
// block, oldest first, a minute apart: histories as older ckpt versions wrote them.
func trailerHistory(t *testing.T, blocks ...string) *repo.Repo {
	t.Helper()
	opts := repo.DefaultOptions()
	opts.Fsync = false
	clock := time.Date(2026, 4, 1, 9, 59, 0, 0, time.UTC)
	opts.Now = func() time.Time { return clock }
	opts.Author = repo.Signature{Name: "ckpt test", Email: "test@example.com"}
	st := repo.NewStore(t.TempDir(), opts)
	var r *repo.Repo
	for i, b := range blocks {
		clock = clock.Add(time.Minute)
		files := map[string][]byte{File: fmt.Appendf(nil, "version %d\n", i)}
		msg := fmt.Sprintf("checkpoint: %d\n\nCkpt-Session: a\n%s", i, b)
		var err error
		if r == nil {
			r, _, err = st.Init("a", repo.InitOptions{Files: files, Message: msg})
		} else {
			_, _, err = r.Commit(repo.CommitRequest{Files: files, Message: msg})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// TestSquashReadsEveryTriggerForm: gc squashes every sparse checkpoint whatever ran it and
// in whichever form its history says so: Ckpt-Trigger: sparse with a cause, hook or cron
// with Ckpt-Mode: sparse, and hook or cron alone on a commit that changed only the delta.
func TestSquashReadsEveryTriggerForm(t *testing.T) {
	const (
		cronOld   = "Ckpt-Trigger: cron\nCkpt-Sections: 📡\n"
		cronMode  = "Ckpt-Trigger: cron\nCkpt-Mode: sparse\nCkpt-Sections: 📡\n"
		hookMode  = "Ckpt-Trigger: hook\nCkpt-Mode: sparse\nCkpt-Sections: 📡\n"
		cronNew   = "Ckpt-Trigger: sparse\nCkpt-Cause: cron\nCkpt-Sections: 📡\n"
		stopNew   = "Ckpt-Trigger: sparse\nCkpt-Cause: claude:Stop\nCkpt-Sections: 📡\n"
		fullMode  = "Ckpt-Trigger: hook\nCkpt-Mode: full\nCkpt-Sections: 📡\n"
		fullOld   = "Ckpt-Trigger: cron\nCkpt-Sections: 📡,🔑\nCkpt-Files: checkpoint.md,notes.md\n"
		fullNew   = "Ckpt-Trigger: full\nCkpt-Cause: hook:pre-commit\nCkpt-Sections: 🔑\n"
		manualNew = "Ckpt-Trigger: manual\nCkpt-Sections: \n"
	)
	blocks := []string{manualNew}
	for range 13 {
		blocks = append(blocks, cronOld) // the 13 old sparse cron checkpoints
	}
	blocks = append(blocks, fullOld, cronMode, hookMode, cronNew, stopNew, fullMode, cronNew, cronNew, fullNew, stopNew)
	r := trailerHistory(t, blocks...)
	rep, err := Squash(r, SquashOptions{OlderThan: time.Date(2026, 4, 2, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ci := range firstParents(t, r) {
		tk := ReadTaken(ci.Trailer)
		s := string(tk.Trigger)
		if n := ci.Trailer(KeySquashed); n != "" {
			s += "×" + n
		}
		if tk.Cause != "" {
			s += "(" + tk.Cause + ")"
		}
		got = append(got, s)
	}
	want := "manual sparse×13(cron) full(cron) sparse×4 full(hook) sparse×2(cron) full(hook:pre-commit) sparse(claude:Stop)"
	if strings.Join(got, " ") != want {
		t.Errorf("history %q\nwant    %q", strings.Join(got, " "), want)
	}
	if len(rep.Runs) != 3 {
		t.Errorf("%d runs squashed, want 3", len(rep.Runs))
	}
	gittest.Fsck(t, r.Dir)
}
