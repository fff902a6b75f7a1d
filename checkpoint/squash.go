package checkpoint

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ckpt-dev/ckpt/internal/hint"
	"github.com/ckpt-dev/ckpt/internal/trailer"
	"github.com/ckpt-dev/ckpt/repo"
)

// SquashOptions say which history gc may rewrite.
type SquashOptions struct {
	// OlderThan: only sparse checkpoints committed before this time are squashed.
	OlderThan time.Time
	// Pushed are commits a remote has; their history is left alone unless Force.
	Pushed []repo.Hash
	Force  bool
	// DryRun reports what would be squashed without writing anything.
	DryRun bool
}

// SquashRun is one run of consecutive sparse checkpoints squashed into one commit.
type SquashRun struct {
	First, Last repo.Hash
	Count       int
	From, To    time.Time
}

// SquashReport says what a squash did.
type SquashReport struct {
	Before, After repo.Hash
	Runs          []SquashRun
	// Rewritten is the number of commits recreated (squashed runs and the commits after
	// them, which get new parents).
	Rewritten int
	// RewrotePushed is true when Force let gc rewrite history a remote has.
	RewrotePushed bool
	// Kept is the number of commits gc could not touch because a remote has them.
	Kept int
}

// Squash rewrites the first-parent history of main so that each run of two or more
// consecutive sparse checkpoints older than o.OlderThan becomes one commit (the last one's
// files, the run's sections and times in its message). Full, manual, merge and every other
// checkpoint is kept, with new parents. History a remote has (reachable from o.Pushed) is
// kept as it is unless o.Force. It refuses while a merge is pending: the merge commit would
// join history gc just rewrote. Nothing is deleted here (repo.Repack does that). The caller
// holds the exclusive lock.
func Squash(r *repo.Repo, o SquashOptions) (SquashReport, error) {
	var rep SquashReport
	if !o.OlderThan.IsZero() {
		mh, err := r.MergeHead()
		if err != nil {
			return rep, err
		}
		if mh != repo.ZeroHash {
			return rep, hint.New(fmt.Errorf("%w (MERGE_HEAD %s); gc does not squash during a merge", repo.ErrMergePending, repo.ShortHash(mh)), "resolve it and run ckpt commit -s %s, then gc again", r.ID)
		}
	}
	plan := func(chain []repo.CommitInfo) (int, []repo.Recommit, error) {
		// Commits up to the last one a remote has stay as they are.
		start := 0
		if len(o.Pushed) > 0 {
			pushed, err := r.Ancestors(o.Pushed...)
			if err != nil {
				return -1, nil, err
			}
			for i, c := range chain {
				if pushed[c.Hash] {
					start = i + 1
				}
			}
			if o.Force {
				rep.RewrotePushed = start > 0
				start = 0
			} else {
				rep.Kept = start
			}
		}
		squashable := func(c repo.CommitInfo) bool {
			return len(c.Parents) <= 1 && c.When.Before(o.OlderThan) && ReadTaken(c.Trailer).Sparse()
		}
		// Groups of chain indexes; a group of more than one commit is squashed.
		var groups [][]int
		for i := start; i < len(chain); i++ {
			if n := len(groups); n > 0 && squashable(chain[i]) {
				last := groups[n-1]
				if squashable(chain[last[len(last)-1]]) && last[len(last)-1] == i-1 {
					groups[n-1] = append(last, i)
					continue
				}
			}
			groups = append(groups, []int{i})
		}
		firstChange := -1
		for gi, grp := range groups {
			if len(grp) > 1 {
				first, last := chain[grp[0]], chain[grp[len(grp)-1]]
				rep.Runs = append(rep.Runs, SquashRun{First: first.Hash, Last: last.Hash, Count: len(grp), From: first.When, To: last.When})
				if firstChange < 0 {
					firstChange = gi
				}
			}
		}
		if firstChange < 0 || o.DryRun {
			return -1, nil, nil
		}
		var commits []repo.Recommit
		for _, grp := range groups[firstChange:] {
			last := chain[grp[len(grp)-1]]
			msg := last.Message
			if len(grp) > 1 {
				msg = squashMessage(chain, grp)
			}
			commits = append(commits, repo.Recommit{From: last.Hash, Message: msg})
			rep.Rewritten += len(grp)
		}
		return groups[firstChange][0], commits, nil
	}
	var err error
	rep.Before, rep.After, err = r.RewriteMain("gc: squash sparse checkpoints", plan)
	if err != nil {
		rep.Rewritten = 0
	}
	return rep, err
}

// squashMessage is the message of a squashed run: its times, its sections, how many.
func squashMessage(chain []repo.CommitInfo, grp []int) string {
	first, last := chain[grp[0]], chain[grp[len(grp)-1]]
	secs := map[string]bool{}
	for _, i := range grp {
		for _, s := range strings.Split(chain[i].Trailer(KeySections), ",") {
			if s = strings.TrimSpace(s); s != "" {
				secs[s] = true
			}
		}
	}
	ids := make([]string, 0, len(secs))
	for s := range secs {
		ids = append(ids, s)
	}
	sort.Strings(ids)
	m := Message{
		Subject: Subject(TriggerSparse, fmt.Sprintf("%d sparse checkpoints squashed (%s to %s)", len(grp), FormatTime(first.When), FormatTime(last.When))),
		Trailers: []trailer.Trailer{
			{Key: KeySession, Value: last.Trailer(KeySession)},
			{Key: KeyTrigger, Value: string(TriggerSparse)},
		},
	}
	// The run's cause, when one cause ran all of it (old forms read as theirs).
	cause := ReadTaken(first.Trailer).Cause
	for _, i := range grp {
		if ReadTaken(chain[i].Trailer).Cause != cause {
			cause = ""
		}
	}
	if cause != "" {
		m.Trailers = append(m.Trailers, trailer.Trailer{Key: KeyCause, Value: cause})
	}
	m.Trailers = append(m.Trailers,
		trailer.Trailer{Key: KeySections, Value: strings.Join(ids, ",")},
		trailer.Trailer{Key: KeySquashed, Value: strconv.Itoa(len(grp))})
	return m.String()
}
