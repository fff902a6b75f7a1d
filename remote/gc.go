package remote

import (
	"strings"
	"time"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/repo"
)

// GCOptions say what gc may rewrite and prune.
type GCOptions struct {
	checkpoint.SquashOptions
	// PruneBefore: the repack deletes unreachable objects whose file is older than this
	// (zero: repo.DefaultPruneAge ago). Judged by the wall clock, as file times are.
	PruneBefore time.Time
}

// GCReport says what gc did.
type GCReport struct {
	checkpoint.SquashReport
	Repack repo.RepackReport
}

// GC squashes a session's old sparse checkpoints (checkpoint.Squash), then repacks it
// (repo.Repack: one pack of everything reachable from a ref, a reflog, MERGE_HEAD or the
// index; unreachable objects pruned after o.PruneBefore). History that was pushed (what the
// transport repository says any remote has) is left alone unless forced. A squash is
// refused while a merge is pending.
func (s *Service) GC(r *repo.Repo, o GCOptions) (GCReport, error) {
	var rep GCReport
	unlock, err := s.cp.Store.Lock(r.LockName, true)
	if err != nil {
		return rep, err
	}
	defer unlock()
	if t, err := s.cp.Store.Transport(); err == nil {
		refs, err := t.Refs("refs/")
		if err != nil {
			return rep, err
		}
		ref := transportRef(r)
		for name, h := range refs {
			if name == ref || strings.HasSuffix(name, "/"+strings.TrimPrefix(ref, "refs/heads/")) {
				o.Pushed = append(o.Pushed, h)
			}
		}
	}
	if rep.SquashReport, err = checkpoint.Squash(r, o.SquashOptions); err != nil || o.DryRun {
		return rep, err
	}
	rep.Repack, err = r.Repack(o.PruneBefore)
	return rep, err
}
