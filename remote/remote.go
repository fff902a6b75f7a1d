// Package remote moves a store's sessions and knowledge repository to and from git
// remotes: push (with the secret gate: what would leave is scanned first and a repository
// with findings held back), pull and clone (every incoming commit and tree checked before
// anything is written; a session new here created, one behind fast-forwarded, one that
// moved on both sides merged section by section), the finishing of a pull that was killed,
// redaction of secrets out of history, and gc, which must leave alone what a remote has.
package remote

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/internal/hint"
	"github.com/ckpt-dev/ckpt/repo"
)

// Service moves repositories between the store and its remotes; it commits through the
// checkpoint service it is given.
type Service struct {
	cp *checkpoint.Service
}

// New returns a Service over cp. Whoever builds it sets cp.FinishPull to its FinishPull, so
// that every commit finishes a pull that was killed first.
func New(cp *checkpoint.Service) *Service { return &Service{cp: cp} }

// ErrConflict is wrapped by a pull that left conflicts in a work tree for resolution.
var ErrConflict = errors.New("merge conflict")

// ErrSecrets refuses a push that would send secrets.
var ErrSecrets = errors.New("possible secrets in what would be pushed")

// Options say which sessions travel, and how.
type Options struct {
	Remote       string   // remote name ("origin")
	Sessions     []string // nil: all
	AllowSecrets bool
	Force        bool // push: replace the remote's history (after gc --force rewrote it)
	// Network moves refs to and from the remote URL.
	Network *repo.GitNetwork
	// Progress is called once per session handled (for a progress line on a terminal).
	Progress func(done, total int, session string)
	// Quick writes new sessions' objects without an fsync each and syncs the file system
	// once at the end (a clone of a whole store).
	Quick bool
}

// PushReport says what a push sent.
type PushReport struct {
	Remote   string   `json:"remote"`
	Pushed   []string `json:"pushed"`     // sessions (and "knowledge") whose refs moved
	UpToDate int      `json:"up_to_date"` // repositories the remote already had
	// HeldBack are the repositories the secret scan kept home, with their findings.
	HeldBack []string        `json:"held_back,omitempty"`
	Secrets  []SecretFinding `json:"secrets,omitempty"`
}

// Push mirrors the chosen sessions (and the knowledge repository) into the transport
// repository and pushes them as refs/heads/sessions/<id> and refs/heads/knowledge in one
// git push. What would leave is scanned for secrets first (every blob the remote does not
// have, whole): a repository with findings is held back, unless AllowSecrets or the
// config's allowlist lets them through, and the others are pushed all the same; the push
// then returns ErrSecrets with the report.
func (s *Service) Push(o Options) (*PushReport, error) {
	url, t, unlock, err := s.openTransport(o.Remote)
	if err != nil {
		return nil, err
	}
	defer unlock()
	repos, err := s.travellers(o.Sessions, true)
	if err != nil {
		return nil, err
	}
	rep := &PushReport{Remote: o.Remote, Pushed: []string{}}
	var specs []string
	type move struct {
		ref     string
		old, to repo.Hash
	}
	var moves []move
	var redact []string // the command that clears each repository held back
	// Every ref the transport has, read once: a thousand sessions would otherwise read
	// packed-refs two thousand times.
	refs, err := t.Refs("refs/")
	if err != nil {
		return nil, err
	}
	// Each repository is scanned before its objects are copied (a repository held back
	// leaves nothing of itself in the transport either), on a goroutine of its own that
	// keeps a few repositories ahead of the copy: the scan reads every new object, the
	// copy then finds most of them read.
	scans := s.scanAhead(repos, refs, o)
	defer scans.stop()
	copier := repo.NewCopier(t)
	for i, r := range repos {
		if o.Progress != nil {
			o.Progress(i+1, len(repos), r.ID)
		}
		ref := transportRef(r)
		sc := <-scans.out
		head, remoteHas, err := sc.head, sc.remoteHas, sc.err
		if err != nil {
			copier.Abort()
			return nil, err
		}
		if head == repo.ZeroHash || head == remoteHas {
			rep.UpToDate++
			continue
		}
		if !o.AllowSecrets {
			found := sc.found
			if len(found) > 0 {
				rep.HeldBack = append(rep.HeldBack, r.ID)
				rep.Secrets = append(rep.Secrets, found...)
				if r.LockName == repo.KnowledgeLock {
					redact = append(redact, "ckpt redact --knowledge")
				} else {
					redact = append(redact, "ckpt redact -s "+r.ID)
				}
				continue
			}
		}
		if err := copier.Copy(r, head); err != nil {
			copier.Abort()
			return nil, fmt.Errorf("%s: %w", r.ID, err)
		}
		moves = append(moves, move{ref, refs[ref], head})
		spec := ref + ":" + ref
		if o.Force {
			spec = "+" + spec
		}
		specs = append(specs, spec)
		rep.Pushed = append(rep.Pushed, r.ID)
	}
	if _, err := copier.Finish(); err != nil {
		return nil, err
	}
	set := func(ref func(move) string, to func(move) repo.Hash) error {
		up := make(map[string]repo.Hash, len(moves))
		for _, m := range moves {
			up[ref(m)] = to(m)
		}
		return t.SetRefs(up, "ckpt transport")
	}
	mirror := func(m move) string { return m.ref }
	if err := set(mirror, func(m move) repo.Hash { return m.to }); err != nil {
		return nil, err
	}
	if len(specs) > 0 {
		if err := o.Network.Push(t, url, specs); err != nil {
			_ = set(mirror, func(m move) repo.Hash { return m.old })
			return nil, networkError(o.Remote, url, err)
		}
	}
	if err := set(func(m move) string { return trackingRef(o.Remote, m.ref) }, func(m move) repo.Hash { return m.to }); err != nil {
		return nil, err
	}
	// A forced push replaced history (after redact --force or gc --force): what only the
	// old history reached, a redacted secret say, leaves the transport too.
	if o.Force && len(moves) > 0 {
		if err := t.PruneMirror(); err != nil {
			return rep, fmt.Errorf("pushed; prune the transport: %w", err)
		}
	}
	if len(rep.HeldBack) > 0 {
		return rep, secretsError(rep, redact)
	}
	return rep, nil
}

// scanned is what the scan of one repository found: the head it scanned, which is the
// head the push then copies, and what the remote has of it.
type scanned struct {
	head, remoteHas repo.Hash
	found           []SecretFinding
	err             error
}

// scanner scans repositories in order on a goroutine, a few ahead of whoever reads out.
type scanner struct {
	out  chan scanned
	quit chan struct{}
	done chan struct{}
}

// scanAhead scans repos, in order, as Push would one by one; it reads the transport
// through a Repo of its own (the push's copy writes into the transport meanwhile; the
// pack it writes is seen by nobody before it is finished, by the scan no more than by a
// scan made in turn).
func (s *Service) scanAhead(repos []*repo.Repo, refs map[string]repo.Hash, o Options) *scanner {
	sc := &scanner{out: make(chan scanned, scanAheadRepos), quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(sc.done)
		t, terr := s.cp.Store.Transport()
		if terr == nil {
			defer t.Reset() // its open packs
		}
		for _, r := range repos {
			var res scanned
			res.head, res.err = r.Head()
			res.remoteHas = refs[trackingRef(o.Remote, transportRef(r))]
			switch {
			case res.err != nil:
			case terr != nil:
				res.err = terr
			case res.head == repo.ZeroHash || res.head == res.remoteHas || o.AllowSecrets:
			default:
				res.found, res.err = s.scanOutgoing(r, res.head, t, []repo.Hash{res.remoteHas}, repo.ZeroHash)
			}
			select {
			case sc.out <- res:
			case <-sc.quit:
				return
			}
		}
	}()
	return sc
}

// scanAheadRepos is how many repositories the scan may be ahead of the copy.
const scanAheadRepos = 8

// stop ends the scan and waits for it.
func (sc *scanner) stop() {
	close(sc.quit)
	<-sc.done
}

// openTransport resolves a remote's URL and locks the transport repository.
func (s *Service) openTransport(remote string) (string, *repo.Repo, repo.Unlock, error) {
	url, err := s.cp.Store.RemoteURL(remote)
	if err != nil {
		return "", nil, nil, err
	}
	t, err := s.cp.Store.Transport()
	if err != nil {
		return "", nil, nil, err
	}
	unlock, err := s.cp.Store.Lock(t.LockName, true)
	if err != nil {
		return "", nil, nil, err
	}
	return url, t, unlock, nil
}

func transportRef(r *repo.Repo) string {
	if r.ID == "knowledge" && r.LockName == repo.KnowledgeLock {
		return repo.KnowledgeRef
	}
	return repo.SessionRefPrefix + r.ID
}

// trackingRef is where the transport remembers what a remote has of ref.
func trackingRef(remote, ref string) string {
	return "refs/remotes/" + remote + "/" + strings.TrimPrefix(ref, "refs/heads/")
}

// travellers lists the repositories a push or pull concerns: the chosen sessions (all when
// none is named) and, when all travel, the knowledge repository.
func (s *Service) travellers(ids []string, withKnowledge bool) ([]*repo.Repo, error) {
	var out []*repo.Repo
	all := len(ids) == 0
	if all {
		sids, err := s.cp.Store.SessionIDs()
		if err != nil {
			return nil, err
		}
		for _, id := range sids {
			ids = append(ids, string(id))
		}
	}
	for _, id := range ids {
		sid, err := repo.ParseSessionID(id)
		if err != nil {
			return nil, err
		}
		r, err := s.cp.Store.Open(sid)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if all && withKnowledge {
		if k, err := s.cp.Store.OpenKnowledge(); err == nil {
			out = append(out, k)
		}
	}
	return out, nil
}

// secretsError says which repositories a push held back and exactly how to get past.
func secretsError(rep *PushReport, redact []string) error {
	if len(redact) > 3 {
		redact = []string{"ckpt redact --all"}
	}
	return hint.New(fmt.Errorf("%w: held back %s (%d finding(s)); pushed %d other(s)", ErrSecrets, strings.Join(rep.HeldBack, ", "), len(rep.Secrets), len(rep.Pushed)),
		"to send nothing, rewrite them out of unpushed history with %s, then ckpt push; or allow them in config.toml [secrets] allow; or send them with ckpt push --allow-secrets", strings.Join(redact, "; "))
}
