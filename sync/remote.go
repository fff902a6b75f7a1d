package sync

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ckpt-dev/ckpt/internal/failpoint"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
)

// ErrConflict is wrapped by a pull that left conflicts in a work tree for resolution.
var ErrConflict = errors.New("merge conflict")

// ErrSecrets refuses a push that would send secrets.
var ErrSecrets = errors.New("possible secrets in what would be pushed")

// RemoteOptions say which sessions travel, and how.
type RemoteOptions struct {
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

// SecretFinding is a possible secret in a commit that a push would send, or in a work tree.
type SecretFinding struct {
	Session string      `json:"session"`
	Commit  string      `json:"commit"` // "" on disk
	File    string      `json:"file"`
	Section sections.ID `json:"section"`
	Line    int         `json:"line"`
	Rule    string      `json:"rule"`
	Secret  string      `json:"secret"` // redacted
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
func (s *Service) Push(o RemoteOptions) (*PushReport, error) {
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
	copier := repo.NewCopier(t)
	for i, r := range repos {
		if o.Progress != nil {
			o.Progress(i+1, len(repos), r.ID)
		}
		ref := transportRef(r)
		tracking := trackingRef(o.Remote, ref)
		head, err := r.Head()
		if err != nil {
			copier.Abort()
			return nil, err
		}
		remoteHas, err := t.Ref(tracking)
		if err != nil {
			copier.Abort()
			return nil, err
		}
		if head == repo.ZeroHash || head == remoteHas {
			rep.UpToDate++
			continue
		}
		// Scanned before its objects are copied: a repository held back leaves nothing of
		// itself in the transport either.
		if !o.AllowSecrets {
			found, err := s.scanOutgoing(r, head, t, []repo.Hash{remoteHas}, repo.ZeroHash)
			if err != nil {
				copier.Abort()
				return nil, err
			}
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
		old, _ := t.Ref(ref)
		moves = append(moves, move{ref, old, head})
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
	for _, m := range moves {
		if err := t.SetRef(m.ref, m.to); err != nil {
			return nil, err
		}
	}
	if len(specs) > 0 {
		if err := o.Network.Push(t, url, specs); err != nil {
			for _, m := range moves {
				_ = t.SetRef(m.ref, m.old)
			}
			return nil, err
		}
	}
	for _, m := range moves {
		if err := t.SetRef(trackingRef(o.Remote, m.ref), m.to); err != nil {
			return nil, err
		}
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

// openTransport resolves a remote's URL and locks the transport repository.
func (s *Service) openTransport(remote string) (string, *repo.Repo, repo.Unlock, error) {
	url, err := s.Store.RemoteURL(remote)
	if err != nil {
		return "", nil, nil, err
	}
	t, err := s.Store.Transport()
	if err != nil {
		return "", nil, nil, err
	}
	unlock, err := s.Store.Lock(t.LockName, true)
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
		sids, err := s.Store.SessionIDs()
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
		r, err := s.Store.Open(sid)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if all && withKnowledge {
		if k, err := s.Store.OpenKnowledge(); err == nil {
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
	return fmt.Errorf("%w: held back %s (%d finding(s)); pushed %d other(s)\nhint: to send nothing, rewrite them out of unpushed history with %s, then ckpt push; or allow them in config.toml [secrets] allow; or send them with ckpt push --allow-secrets",
		ErrSecrets, strings.Join(rep.HeldBack, ", "), len(rep.Secrets), len(rep.Pushed), strings.Join(redact, "; "))
}

// CommitMessage stands for the file name of a finding in a commit's message.
const CommitMessage = "(commit message)"

// scanOutgoing scans every blob of head's history that the remote does not have: not in
// any commit reachable from have (the remote's commits of this repository, read in the
// transport t; several remotes' for a status). Each blob is scanned once and whole, not
// only the lines its commit added, so that a secret completed by a later edit (a key body
// pasted between BEGIN and END lines already pushed) is found; the messages of the new
// commits are scanned too. A finding names the oldest new commit holding the blob.
//
// What the remote has is worked out lazily, because walking its whole history costs far
// more than a push usually scans: the walk stops at the commits the remote has, whose
// files (unchanged ones, mostly) are not scanned again; and only a blob with findings
// that the transport holds is looked for in the rest of the remote's history (a version
// restored from long ago, say), so that what was sent once is not held back again.
//
// done, when not ZeroHash, is a commit of r whose history was scanned before (a status's
// cache): the walk stops there too.
func (s *Service) scanOutgoing(r *repo.Repo, head repo.Hash, t *repo.Repo, have []repo.Hash, done repo.Hash) ([]SecretFinding, error) {
	tips := map[repo.Hash]bool{}
	for _, h := range have {
		tips[h] = true
	}
	var remoteCommits, remoteBlobs map[repo.Hash]bool // the whole remote history, when needed
	walkRemote := func() error {
		var err error
		if remoteCommits == nil {
			remoteCommits, err = t.Ancestors(have...)
		}
		return err
	}
	hasCommit := func(c repo.Hash) (bool, error) {
		if tips[c] {
			return true, nil
		}
		if t == nil || len(have) == 0 || !t.Has(c) {
			return false, nil
		}
		if err := walkRemote(); err != nil {
			return false, err
		}
		return remoteCommits[c], nil
	}
	hasBlob := func(b repo.Hash) (bool, error) {
		if t == nil || len(have) == 0 || !t.Has(b) {
			return false, nil
		}
		if remoteBlobs == nil {
			if err := walkRemote(); err != nil {
				return false, err
			}
			remoteBlobs = map[repo.Hash]bool{}
			for c := range remoteCommits {
				files, err := t.FileHashes(c)
				if err != nil {
					return false, err
				}
				for _, h := range files {
					remoteBlobs[h] = true
				}
			}
		}
		return remoteBlobs[b], nil
	}
	// The new commits, newest first, then scanned oldest first.
	scanned := map[repo.Hash]bool{} // blobs scanned, or in a commit the remote has
	var fresh []repo.Hash
	seen := map[repo.Hash]bool{}
	stack := []repo.Hash{head}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[h] || h == repo.ZeroHash {
			continue
		}
		seen[h] = true
		if h == done {
			files, err := r.FileHashes(h)
			if err != nil {
				return nil, err
			}
			for _, b := range files {
				scanned[b] = true
			}
			continue
		}
		known, err := hasCommit(h)
		if err != nil {
			return nil, err
		}
		if known {
			files, err := t.FileHashes(h)
			if err != nil {
				return nil, err
			}
			for _, b := range files {
				scanned[b] = true
			}
			continue
		}
		ci, err := r.CommitInfo(h)
		if err != nil {
			return nil, err
		}
		fresh = append(fresh, h)
		for i := len(ci.Parents) - 1; i >= 0; i-- {
			stack = append(stack, ci.Parents[i])
		}
	}
	var out []SecretFinding
	for i := len(fresh) - 1; i >= 0; i-- {
		c := fresh[i]
		// The message leaves with the commit (ckpt commit -m puts text of the user's there).
		ci, err := r.CommitInfo(c)
		if err != nil {
			return nil, err
		}
		for _, sec := range sections.ScanSecrets([]byte(ci.Message), 0, s.Config.Secrets.Allow) {
			out = append(out, SecretFinding{Session: r.ID, Commit: c.String()[:12], File: CommitMessage, Line: sec.Line, Rule: sec.Rule, Secret: sec.Redacted})
		}
		files, err := r.FileHashes(c)
		if err != nil {
			return nil, err
		}
		names := make([]string, 0, len(files))
		for n := range files {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, name := range names {
			h := files[name]
			if scanned[h] {
				continue
			}
			scanned[h] = true
			data, err := r.Blob(h)
			if err != nil {
				return nil, err
			}
			found := sections.ScanSecrets(data, 0, s.Config.Secrets.Allow)
			if len(found) == 0 {
				continue
			}
			if sent, err := hasBlob(h); err != nil {
				return nil, err
			} else if sent {
				continue
			}
			for _, sec := range found {
				out = append(out, SecretFinding{Session: r.ID, Commit: c.String()[:12], File: name, Section: sec.Section, Line: sec.Line, Rule: sec.Rule, Secret: sec.Redacted})
			}
		}
	}
	return out, nil
}

// PullReport says what a pull did to each repository.
type PullReport struct {
	Remote   string          `json:"remote"`
	Sessions []PulledSession `json:"sessions"`
	// Warnings name what was skipped: a remote branch whose name is not a session id.
	Warnings []string `json:"warnings,omitempty"`
}

// PulledSession is one repository's pull.
type PulledSession struct {
	Session   string              `json:"session"`
	Result    string              `json:"result"` // up-to-date, ahead, created, fast-forward, merged, conflict
	Commit    string              `json:"commit,omitempty"`
	Conflicts []sections.Conflict `json:"conflicts,omitempty"`
	Files     []string            `json:"conflicted_files,omitempty"`
}

// Pull fetches the remote's sessions into the transport repository, then brings each
// chosen session up to date: created when new here, fast-forwarded when it can be, else
// merged section by section into a merge commit with both parents. A true conflict leaves
// the merged files with conflict markers in the work tree, records the pending merge
// (MERGE_HEAD), and makes the pull return ErrConflict; `ckpt commit` finishes it.
func (s *Service) Pull(o RemoteOptions) (*PullReport, error) {
	url, t, unlock, err := s.openTransport(o.Remote)
	if err != nil {
		return nil, err
	}
	defer unlock()
	// Everything under refs/heads: the sessions and the knowledge graph, whichever exist.
	specs := []string{"+refs/heads/*:" + trackingRef(o.Remote, "refs/heads/*")}
	if err := o.Network.Fetch(t, url, specs); err != nil {
		return nil, err
	}
	if err := failpoint.Check("pull-after-fetch"); err != nil {
		return nil, err
	}
	remote, err := t.Refs("refs/remotes/" + o.Remote + "/")
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, id := range o.Sessions {
		want[id] = true
	}
	var names []string
	for ref := range remote {
		names = append(names, ref)
	}
	sort.Strings(names)
	rep := &PullReport{Remote: o.Remote, Sessions: []PulledSession{}}
	if err := s.checkIncoming(t, o, names, remote, want); err != nil {
		return rep, err
	}
	conflicts := 0
	for i, ref := range names {
		theirs := remote[ref]
		rel := strings.TrimPrefix(ref, "refs/remotes/"+o.Remote+"/")
		var ps PulledSession
		switch {
		case rel == "knowledge":
			if len(want) > 0 {
				continue
			}
			ps, err = s.pullKnowledge(t, theirs, o)
		case strings.HasPrefix(rel, "sessions/"):
			id := strings.TrimPrefix(rel, "sessions/")
			if len(want) > 0 && !want[id] {
				continue
			}
			if _, err := repo.ParseSessionID(id); err != nil {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("remote %s: branch %s skipped: %v", o.Remote, rel, err))
				continue
			}
			if o.Progress != nil {
				o.Progress(i+1, len(names), id)
			}
			ps, err = s.pullSession(t, id, theirs, o)
		default:
			continue
		}
		if err != nil {
			return rep, refusedIncoming(o.Remote, rel, err)
		}
		if err := failpoint.Check("pull-after-integrate"); err != nil {
			return rep, err
		}
		// What the remote has is now mirrored here; a later push compares with it.
		if err := t.SetRef(strings.Replace(ref, "refs/remotes/"+o.Remote+"/", "refs/heads/", 1), theirs); err != nil {
			return rep, err
		}
		if ps.Result == "conflict" {
			conflicts++
		}
		rep.Sessions = append(rep.Sessions, ps)
	}
	if o.Quick {
		if err := s.Store.SyncFS(); err != nil {
			return rep, err
		}
	}
	for id := range want {
		found := false
		for _, ps := range rep.Sessions {
			found = found || ps.Session == id
		}
		if !found {
			return rep, fmt.Errorf("%s: no such session on remote %s", id, o.Remote)
		}
	}
	if conflicts > 0 {
		return rep, fmt.Errorf("%w in %d repositor(ies); the merged files, with conflict markers, are in the work tree\nhint: resolve them, check with ckpt check -s ID, then ckpt commit -s ID", ErrConflict, conflicts)
	}
	return rep, nil
}

// checkIncoming checks every commit the pull would bring into a repository here, and its
// tree, before anything is written (repo.CheckHistory): one refused tree refuses the pull.
func (s *Service) checkIncoming(t *repo.Repo, o RemoteOptions, names []string, remote map[string]repo.Hash, want map[string]bool) error {
	for _, ref := range names {
		rel := strings.TrimPrefix(ref, "refs/remotes/"+o.Remote+"/")
		var local *repo.Repo
		var err error
		switch {
		case rel == "knowledge" && len(want) == 0:
			local, err = s.Store.OpenKnowledge()
		case strings.HasPrefix(rel, "sessions/"):
			id := strings.TrimPrefix(rel, "sessions/")
			sid, bad := repo.ParseSessionID(id)
			if bad != nil || (len(want) > 0 && !want[id]) {
				continue
			}
			local, err = s.Store.Open(sid)
		default:
			continue
		}
		if errors.Is(err, repo.ErrNotFound) {
			local, err = nil, nil
		}
		if err != nil {
			return err
		}
		if local != nil {
			if h, err := local.Head(); err == nil && h == remote[ref] {
				continue // up to date: nothing arrives
			}
		}
		if err := repo.CheckHistory(t, remote[ref], local); err != nil {
			return refusedIncoming(o.Remote, rel, err)
		}
	}
	return nil
}

// refusedIncoming words a refusal of what branch rel of a remote holds: the remote, the
// commit, the entry and the rule, in one line. Other errors pass as they are.
func refusedIncoming(remote, rel string, err error) error {
	var terr *repo.TreeError
	if !errors.As(err, &terr) {
		return err
	}
	return fmt.Errorf("remote %s: %w\nhint: nothing was pulled; branch %s of %s holds what ckpt never writes into a work tree (docs/remotes.md)", remote, terr, rel, remote)
}

func (s *Service) pullSession(t *repo.Repo, id string, theirs repo.Hash, o RemoteOptions) (PulledSession, error) {
	ps := PulledSession{Session: id}
	sid, err := repo.ParseSessionID(id)
	if err != nil {
		return ps, fmt.Errorf("remote session %q: %w", id, err)
	}
	r, err := s.Store.Open(sid)
	if errors.Is(err, repo.ErrNotFound) {
		cp, err := t.ReadFile(theirs, CheckpointFile)
		if err != nil {
			return ps, fmt.Errorf("remote session %s: %w", id, err)
		}
		st := s.Store
		if o.Quick {
			st = st.Quick()
		}
		unlock, err := s.Store.Lock(string(sid), true)
		if err != nil {
			return ps, err
		}
		defer unlock()
		if _, err := st.Materialize(sid, t, theirs, map[string]string{"template": s.GuessTemplate(cp)}); err != nil {
			return ps, fmt.Errorf("%s: %w", id, err)
		}
		ps.Result, ps.Commit = "created", theirs.String()
		return ps, nil
	}
	if err != nil {
		return ps, err
	}
	return s.integrate(r, t, theirs, o.Remote+"/"+id)
}

func (s *Service) pullKnowledge(t *repo.Repo, theirs repo.Hash, o RemoteOptions) (PulledSession, error) {
	ps := PulledSession{Session: "knowledge"}
	unlock, err := s.Store.Lock(repo.KnowledgeLock, true)
	if err != nil {
		return ps, err
	}
	kr, err := s.Store.OpenKnowledge()
	if errors.Is(err, repo.ErrNotFound) {
		defer unlock()
		st := s.Store
		if o.Quick {
			st = st.Quick()
		}
		if _, err := st.MaterializeKnowledge(t, theirs); err != nil {
			return ps, err
		}
		ps.Result, ps.Commit = "created", theirs.String()
		return ps, nil
	}
	unlock()
	if err != nil {
		return ps, err
	}
	return s.integrate(kr, t, theirs, o.Remote+"/knowledge")
}

// integrate brings theirs (a commit of src) into r: nothing to do, a fast-forward, or a
// section-aware three-way merge. Uncommitted changes in the work tree are committed first,
// so that nothing on disk is lost to the merge.
func (s *Service) integrate(r *repo.Repo, src *repo.Repo, theirs repo.Hash, label string) (PulledSession, error) {
	ps := PulledSession{Session: r.ID}
	unlock, err := s.Store.Lock(r.LockName, true)
	if err != nil {
		return ps, err
	}
	defer unlock()
	if err := s.FinishPull(r); err != nil {
		return ps, fmt.Errorf("%s: finish the interrupted pull: %w", r.ID, err)
	}
	if mh, err := r.MergeHead(); err != nil || mh != repo.ZeroHash {
		if err == nil {
			err = fmt.Errorf("%s: a merge is already pending (MERGE_HEAD %s)\nhint: resolve the conflicts, then ckpt commit -s %s", r.ID, repo.ShortHash(mh), r.ID)
		}
		return ps, err
	}
	head, err := r.Head()
	if err != nil {
		return ps, err
	}
	if head == theirs {
		ps.Result = "up-to-date"
		return ps, nil
	}
	if _, err := repo.CopyHistory(src, r, theirs); err != nil {
		return ps, err
	}
	if ahead, err := r.IsAncestor(theirs, head); err != nil || ahead {
		ps.Result = "ahead"
		return ps, err
	}
	return retryPlan(func() (PulledSession, error) { return s.integrateOnce(r, theirs, label) })
}

// integrateOnce is one attempt of integrate under the lock: what is on disk is recorded
// first (autosave), then theirs is checked out or merged, each file written only while it
// holds the bytes read.
func (s *Service) integrateOnce(r *repo.Repo, theirs repo.Hash, label string) (PulledSession, error) {
	ps := PulledSession{Session: r.ID}
	head, old, err := headFiles(r)
	if err != nil {
		return ps, err
	}
	disk, err := r.WorkFiles()
	if err != nil {
		return ps, err
	}
	if head, old, _, err = s.autosave(r, head, old, disk, "merging "+label); err != nil {
		return ps, fmt.Errorf("%s: %w", r.ID, err)
	}
	if ff, err := r.IsAncestor(head, theirs); err != nil {
		return ps, err
	} else if ff {
		if err := notePull(r, theirs.String(), func() error { return r.Checkout(head, theirs, disk) }); err != nil {
			return ps, err
		}
		ps.Result, ps.Commit = "fast-forward", theirs.String()
		return ps, nil
	}
	base, err := r.MergeBase(head, theirs)
	if err != nil {
		return ps, err
	}
	baseFiles := map[string][]byte{}
	if base != repo.ZeroHash {
		if baseFiles, err = r.Files(base); err != nil {
			return ps, err
		}
	}
	theirFiles, err := r.Files(theirs)
	if err != nil {
		return ps, err
	}
	merged, conflicts, err := s.mergeFiles(r, baseFiles, old, theirFiles, label)
	if err != nil {
		return ps, err
	}
	msg := fmt.Sprintf("checkpoint(merge): merge %s\n\nCkpt-Session: %s\nCkpt-Trigger: merge\n", label, r.ID)
	if len(conflicts) > 0 {
		err := notePull(r, "conflict "+theirs.String()+" "+label, func() error {
			if err := r.WriteWorkFiles(merged, old, disk); err != nil {
				return err
			}
			return r.SetMergeHead(theirs, msg)
		})
		if err != nil {
			return ps, err
		}
		ps.Result = "conflict"
		for name, cs := range conflicts {
			ps.Files = append(ps.Files, name)
			ps.Conflicts = append(ps.Conflicts, cs...)
		}
		sort.Strings(ps.Files)
		return ps, nil
	}
	p, _, err := s.prepareCommit(r, commitPlan{head: head, old: old, next: merged, disk: disk}, CommitOptions{Trigger: "merge", Message: "merge " + label, Parents: []repo.Hash{head, theirs}}, false)
	if err != nil {
		return ps, err
	}
	if err := notePull(r, p.Commit().String(), p.Apply); err != nil {
		return ps, err
	}
	r.MaybePack()
	ps.Result, ps.Commit = "merged", p.Commit().String()
	return ps, nil
}

// pullMarker is the file in a repository's git directory where a pull notes what it is
// doing to the work tree, from before it writes the first file until it is done: "<commit>"
// when it installs a commit (the target of a fast-forward, or its merge commit: the files,
// then main), "conflict <theirs> <label>" when it leaves a conflicted merge (the files, then
// MERGE_HEAD). A pull killed in between is finished or taken back by the next one
// (FinishPull), instead of its files being taken for new work: that made a commit the
// remote never has, and a new merge on every later pull.
const pullMarker = "CKPT_PULL"

// notePull writes the note, runs apply, and removes the note.
func notePull(r *repo.Repo, note string, apply func() error) error {
	marker := filepath.Join(r.GitDir, pullMarker)
	if err := repo.WriteFileAtomic(marker, []byte(note+"\n"), repo.FilePerm, r.Store().Opts.Fsync); err != nil {
		return fmt.Errorf("%s: note the pull: %w", r.ID, err)
	}
	if err := failpoint.Check("integrate-before-apply"); err != nil {
		return err
	}
	err := apply()
	if rerr := os.Remove(marker); rerr != nil && err == nil {
		err = fmt.Errorf("%s: clear the pull's note: %w", r.ID, rerr)
	}
	return err
}

// FinishPull deals with the note of a pull that was killed (see pullMarker). The disk is
// only ever changed when every file of the work tree is a version the pull itself had
// there: main's or the one it was writing. Otherwise (someone committed or edited since)
// the note is dropped and the work tree is left as it is. The caller holds the
// repository's lock. A pull calls it first; any command that commits what is on disk
// should too, or it records the files of a killed pull as new work.
//
//   - Installing a commit that main leads to: main moves to it (the fast-forward or merge
//     is finished), and a work tree already at main gets its index written again.
//   - Leaving a conflict, killed before MERGE_HEAD was written: the merged files are taken
//     back to main's, so the pull merges again and reports the conflict.
func (s *Service) FinishPull(r *repo.Repo) error {
	marker := filepath.Join(r.GitDir, pullMarker)
	b, err := os.ReadFile(marker)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	drop := func() error { return os.Remove(marker) }
	f := strings.Fields(string(b))
	conflict := len(f) == 3 && f[0] == "conflict"
	if len(f) != 1 && !conflict {
		return drop()
	}
	hash := f[0]
	if conflict {
		hash = f[1]
	}
	target, err := r.Resolve(hash)
	if err != nil {
		return drop() // not a commit this repository holds
	}
	head, err := r.Head()
	if err != nil || head == repo.ZeroHash {
		return err
	}
	old, err := r.Files(head)
	if err != nil {
		return err
	}
	disk, err := r.WorkFiles()
	if err != nil {
		return err
	}
	var want map[string][]byte // the files the pull was writing
	if conflict {
		if mh, err := r.MergeHead(); err != nil {
			return err
		} else if mh != repo.ZeroHash {
			return drop() // MERGE_HEAD comes last: the conflict is there to resolve
		}
		if want, err = s.conflictFiles(r, head, old, target, f[2]); err != nil {
			return drop()
		}
	} else {
		if ok, err := r.IsAncestor(head, target); err != nil || !ok {
			return drop() // main moved elsewhere
		}
		if want, err = r.Files(target); err != nil {
			return drop()
		}
	}
	names := map[string]bool{}
	for _, m := range []map[string][]byte{old, want, disk} {
		for n := range m {
			names[n] = true
		}
	}
	same := func(a map[string][]byte, name string) bool {
		x, ok := a[name]
		y, dok := disk[name]
		return ok == dok && bytes.Equal(x, y)
	}
	for name := range names {
		if !same(old, name) && !same(want, name) {
			return drop()
		}
	}
	if conflict {
		// Back to main's files: write each that differs from the disk, while it holds the
		// bytes just read.
		if err := r.WriteWorkFiles(old, disk, disk); err != nil {
			return err
		}
	} else if err := r.Checkout(head, target, disk); err != nil {
		// Checkout finishes the fast-forward or the merge; with main already there, it
		// writes the index.
		return err
	}
	return drop()
}

// conflictFiles are the files a pull that merged theirs into head (old being head's files)
// left in the work tree with conflict markers: the same merge, made again.
func (s *Service) conflictFiles(r *repo.Repo, head repo.Hash, old map[string][]byte, theirs repo.Hash, label string) (map[string][]byte, error) {
	base, err := r.MergeBase(head, theirs)
	if err != nil {
		return nil, err
	}
	baseFiles := map[string][]byte{}
	if base != repo.ZeroHash {
		if baseFiles, err = r.Files(base); err != nil {
			return nil, err
		}
	}
	theirFiles, err := r.Files(theirs)
	if err != nil {
		return nil, err
	}
	merged, _, err := s.mergeFiles(r, baseFiles, old, theirFiles, label)
	return merged, err
}

// mergeFiles merges three versions of a repository's files: a file changed on one side
// takes that side; changed on both, it is merged section by section (the knowledge graph by
// entry id). A file deleted on one side and changed on the other is kept, changed.
func (s *Service) mergeFiles(r *repo.Repo, base, ours, theirs map[string][]byte, label string) (map[string][]byte, map[string][]sections.Conflict, error) {
	out := map[string][]byte{}
	conflicts := map[string][]sections.Conflict{}
	names := map[string]bool{}
	for _, m := range []map[string][]byte{base, ours, theirs} {
		for n := range m {
			names[n] = true
		}
	}
	for name := range names {
		b, bok := base[name]
		o, ook := ours[name]
		t, tok := theirs[name]
		switch {
		case ook == tok && bytes.Equal(o, t):
			if ook {
				out[name] = o
			}
		case bok == ook && bytes.Equal(b, o):
			if tok {
				out[name] = t
			}
		case bok == tok && bytes.Equal(b, t):
			if ook {
				out[name] = o
			}
		case !ook:
			out[name] = t // deleted here, changed there: keep the change
		case !tok:
			out[name] = o
		case name == KnowledgeFile:
			kg, err := MergeKnowledgeGraphs(b, o, t)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", name, err)
			}
			out[name] = kg
		default:
			opts, err := s.mergeOptions(r, name)
			if err != nil {
				return nil, nil, err
			}
			opts.TheirsLabel = label
			res := sections.Merge3(b, o, t, opts)
			out[name] = res.Content
			if len(res.Conflicts) > 0 {
				conflicts[name] = res.Conflicts
			}
		}
	}
	return out, conflicts, nil
}

// NewestWins are the metadata lines ckpt maintains: in a merge the newest value wins, so
// they never conflict.
var NewestWins = []string{"last_updated", "session_id", "delta_since_last"}

// mergeOptions are the merge settings for one file: its template's heading level and
// section order.
func (s *Service) mergeOptions(r *repo.Repo, name string) (sections.MergeOptions, error) {
	o := sections.MergeOptions{NewestWins: NewestWins, OursLabel: "ours"}
	tmpl := ""
	switch {
	case name == CheckpointFile:
		tmpl = r.Template()
	case name == MemoryFile:
		tmpl = "memory"
	}
	if tmpl == "" {
		return o, nil
	}
	t, err := s.LoadTemplate(tmpl)
	if err != nil {
		return o, err
	}
	o.Level, o.Order = t.Doc.Level, t.Order()
	return o, nil
}

// MergeKnowledgeGraphs merges three versions of knowledge-graph.md by entry id: the union of
// entries, provenance lists united, a state changed on one side taking that side.
func MergeKnowledgeGraphs(base, ours, theirs []byte) ([]byte, error) {
	parse := func(b []byte) (*KnowledgeGraph, error) {
		if b == nil {
			return &KnowledgeGraph{}, nil
		}
		return ParseKnowledgeGraph(b)
	}
	b, err := parse(base)
	if err != nil {
		return nil, err
	}
	o, err := parse(ours)
	if err != nil {
		return nil, err
	}
	t, err := parse(theirs)
	if err != nil {
		return nil, err
	}
	baseState := map[string]string{}
	for _, e := range b.Entries {
		baseState[e.ID] = e.State
	}
	byID := map[string]*KGEntry{}
	for _, e := range o.Entries {
		byID[e.ID] = e
	}
	for _, te := range t.Entries {
		oe, ok := byID[te.ID]
		if !ok {
			o.Entries = append(o.Entries, te)
			byID[te.ID] = te
			continue
		}
		if oe.State == baseState[te.ID] && te.State != oe.State {
			oe.State = te.State
		}
		for _, p := range te.Provenance {
			dup := false
			for _, q := range oe.Provenance {
				dup = dup || (p.Session == q.Session && p.Commit == q.Commit)
			}
			if !dup {
				oe.Provenance = append(oe.Provenance, p)
			}
		}
		for _, sup := range te.Supersedes {
			dup := false
			for _, x := range oe.Supersedes {
				dup = dup || x == sup
			}
			if !dup {
				oe.Supersedes = append(oe.Supersedes, sup)
			}
		}
	}
	if len(o.Header) == 0 {
		o.Header = t.Header
	}
	return o.Render(), nil
}

// Clone makes an empty store a copy of a remote store: every session and the knowledge
// repository. The remote is recorded as origin.
func (s *Service) Clone(url string, network *repo.GitNetwork, progress func(done, total int, session string)) (*PullReport, error) {
	if ids, err := s.Store.SessionIDs(); err != nil || len(ids) > 0 {
		if err == nil {
			err = fmt.Errorf("%s: not an empty store (%d sessions)", s.Store.Home, len(ids))
		}
		return nil, err
	}
	if err := os.MkdirAll(s.Store.Home, repo.DirPerm); err != nil {
		return nil, err
	}
	// A password in the URL goes to git's credential helper, which the fetch then asks.
	if _, err := s.Store.AddRemote("origin", url); err != nil {
		return nil, err
	}
	return s.Pull(RemoteOptions{Remote: "origin", Network: network, Progress: progress, Quick: true})
}

// GC squashes a session's old sparse checkpoints (repo.Squash), then repacks it
// (repo.Repack: one pack of everything reachable from a ref, a reflog, MERGE_HEAD or the
// index; unreachable objects pruned after o.PruneBefore). History that was pushed (what the
// transport repository says any remote has) is left alone unless force. A squash is
// refused while a merge is pending.
func (s *Service) GC(r *repo.Repo, o repo.SquashOptions) (repo.SquashReport, error) {
	unlock, err := s.Store.Lock(r.LockName, true)
	if err != nil {
		return repo.SquashReport{}, err
	}
	defer unlock()
	if t, err := s.Store.Transport(); err == nil {
		refs, err := t.Refs("refs/")
		if err != nil {
			return repo.SquashReport{}, err
		}
		ref := transportRef(r)
		for name, h := range refs {
			if name == ref || strings.HasSuffix(name, "/"+strings.TrimPrefix(ref, "refs/heads/")) {
				o.Pushed = append(o.Pushed, h)
			}
		}
	}
	rep, err := r.Squash(o)
	if err != nil || o.DryRun {
		return rep, err
	}
	rep.Repack, err = r.Repack(o.PruneBefore)
	return rep, err
}
