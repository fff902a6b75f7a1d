package remote

import "github.com/ckpt-dev/ckpt/repo"

// Pushed reports whether a remote has all of r's history: its head is what a remote was
// last known to have of it (pushed or fetched), or an ancestor of that. A repository with
// no commit has nothing to lose.
func (s *Service) Pushed(r *repo.Repo) (bool, error) {
	head, err := r.Head()
	if err != nil || head == repo.ZeroHash {
		return head == repo.ZeroHash, err
	}
	refs, err := s.pushedRefs(r)
	if err != nil {
		return false, err
	}
	for _, h := range refs {
		if h == head || (r.Has(h) && isAncestor(r, head.String(), h)) {
			return true, nil
		}
	}
	return false, nil
}
