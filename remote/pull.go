package remote

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/internal/failpoint"
	"github.com/ckpt-dev/ckpt/internal/hint"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
)

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
func (s *Service) Pull(o Options) (*PullReport, error) {
	url, t, unlock, err := s.openTransport(o.Remote)
	if err != nil {
		return nil, err
	}
	defer unlock()
	// Everything under refs/heads: the sessions and the knowledge graph, whichever exist.
	specs := []string{"+refs/heads/*:" + trackingRef(o.Remote, "refs/heads/*")}
	if err := o.Network.Fetch(t, url, specs); err != nil {
		return nil, networkError(o.Remote, url, err)
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
	fresh, err := s.checkIncoming(t, o, names, remote, want)
	if err != nil {
		return rep, err
	}
	// Sessions new here are made ahead, several at once; the loop below takes each
	// result in order, as if it had made it there.
	ahead := s.createAhead(o, fresh, remote)
	conflicts := 0
	// What the remote has is mirrored here as each repository is brought up to date; the
	// refs are written together, in one update of packed-refs, however the pull ends.
	mirrored := map[string]repo.Hash{}
	mirrorRef := func(ref string) string {
		return strings.Replace(ref, "refs/remotes/"+o.Remote+"/", "refs/heads/", 1)
	}
	mirror := func() error {
		m := mirrored
		mirrored = map[string]repo.Hash{}
		return t.SetRefs(m, "ckpt transport")
	}
	defer func() {
		// A pull that stopped half way: what it did, sessions made ahead that the loop
		// did not reach included (each was made whole; the report says so).
		for _, c := range ahead.finish() {
			mirrored[mirrorRef(c.ref)] = remote[c.ref]
			rep.Sessions = append(rep.Sessions, c.ps)
		}
		_ = mirror()
	}()

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
			if c, ok := ahead.result(ref); ok && c.done {
				ps, err = c.ps, c.err
			} else {
				ps, err = s.pullSession(t, id, theirs, o)
			}
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
		mirrored[mirrorRef(ref)] = theirs
		if ps.Result == "conflict" {
			conflicts++
		}
		rep.Sessions = append(rep.Sessions, ps)
	}
	if err := mirror(); err != nil {
		return rep, err
	}
	if o.Quick {
		if err := s.cp.Store.SyncFS(); err != nil {
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
		var cmds []string
		for _, ps := range rep.Sessions {
			if ps.Result == "conflict" {
				cmds = append(cmds, commitCommand(ps.Session))
			}
		}
		return rep, hint.New(fmt.Errorf("%w in %d repositor(ies); the merged files, with conflict markers, are in the work tree", ErrConflict, conflicts), "resolve them, then %s", strings.Join(cmds, "; "))
	}
	return rep, nil
}

// checkIncoming checks every commit the pull would bring into a repository here, and its
// tree, before anything is written (repo.CheckHistory): one refused tree refuses the pull.
// It returns the refs of the sessions that are not here.
func (s *Service) checkIncoming(t *repo.Repo, o Options, names []string, remote map[string]repo.Hash, want map[string]bool) ([]string, error) {
	var fresh []string
	for _, ref := range names {
		rel := strings.TrimPrefix(ref, "refs/remotes/"+o.Remote+"/")
		var local *repo.Repo
		var err error
		switch {
		case rel == "knowledge" && len(want) == 0:
			local, err = s.cp.Store.OpenKnowledge()
		case strings.HasPrefix(rel, "sessions/"):
			id := strings.TrimPrefix(rel, "sessions/")
			sid, bad := repo.ParseSessionID(id)
			if bad != nil || (len(want) > 0 && !want[id]) {
				continue
			}
			local, err = s.cp.Store.Open(sid)
		default:
			continue
		}
		if errors.Is(err, repo.ErrNotFound) {
			local, err = nil, nil
			if rel != "knowledge" {
				fresh = append(fresh, ref)
			}
		}
		if err != nil {
			return nil, err
		}
		if local != nil {
			if h, err := local.Head(); err == nil && h == remote[ref] {
				continue // up to date: nothing arrives
			}
		}
		if err := repo.CheckHistory(t, remote[ref], local); err != nil {
			return nil, refusedIncoming(o.Remote, rel, err)
		}
	}
	return fresh, nil
}

// ahead makes sessions new here on a few goroutines while Pull goes through the others:
// each is a repository of its own, made in a directory of its own and renamed into place,
// so making them at once changes nothing but the time it takes (a clone makes a thousand).
// Each worker reads the transport through a Repo of its own.
type ahead struct {
	fresh   []string // the refs, in Pull's order
	results map[string]chan createdSession
	taken   map[string]bool // results Pull read (its goroutine only)
	quit    chan struct{}
	stopped sync.Once
	wg      sync.WaitGroup
}

type createdSession struct {
	ps   PulledSession
	err  error
	done bool // false: Pull does it itself (the session appeared meanwhile)
}

func (s *Service) createAhead(o Options, fresh []string, remote map[string]repo.Hash) *ahead {
	a := &ahead{fresh: fresh, results: make(map[string]chan createdSession, len(fresh)), taken: map[string]bool{}, quit: make(chan struct{})}
	if len(fresh) == 0 {
		return a
	}
	work := make(chan string, len(fresh))
	for _, ref := range fresh {
		a.results[ref] = make(chan createdSession, 1)
		work <- ref
	}
	close(work)
	for range min(runtime.GOMAXPROCS(0), maxCreators, len(fresh)) {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			t, err := s.cp.Store.Transport()
			if err == nil {
				defer t.Reset() // its open packs
			}
			for ref := range work {
				select {
				case <-a.quit:
					return
				default:
				}
				var c createdSession
				if err != nil {
					c = createdSession{err: err, done: true}
				} else {
					id := strings.TrimPrefix(ref, "refs/remotes/"+o.Remote+"/sessions/")
					c.ps, c.err = s.createSession(t, id, remote[ref], o)
					c.done = !errors.Is(c.err, repo.ErrExists)
				}
				a.results[ref] <- c
			}
		}()
	}
	return a
}

// maxCreators bounds the goroutines that make sessions: beyond a few, they only wait for
// the file system.
const maxCreators = 4

// result waits for the session of ref, when it is one made ahead (ok).
func (a *ahead) result(ref string) (c createdSession, ok bool) {
	ch, ok := a.results[ref]
	if !ok {
		return c, false
	}
	a.taken[ref] = true
	return <-ch, true
}

// madeAhead is a session a worker made that Pull did not take.
type madeAhead struct {
	ref string
	ps  PulledSession
}

// finish lets the workers finish the session each is making and waits for them, so that
// nothing is written once Pull has returned; it returns the sessions they made that Pull
// did not take (it stopped before them), in Pull's order.
func (a *ahead) finish() []madeAhead {
	a.stopped.Do(func() { close(a.quit) })
	a.wg.Wait()
	var out []madeAhead
	for _, ref := range a.fresh {
		if a.taken[ref] {
			continue
		}
		select {
		case c := <-a.results[ref]:
			if c.done && c.err == nil {
				out = append(out, madeAhead{ref, c.ps})
			}
		default: // never started
		}
	}
	return out
}

// refusedIncoming words a refusal of what branch rel of a remote holds: the remote, the
// commit, the entry and the rule, in one line. Other errors pass as they are.
func refusedIncoming(remote, rel string, err error) error {
	var terr *repo.TreeError
	if !errors.As(err, &terr) {
		return err
	}
	return hint.New(fmt.Errorf("remote %s: %w", remote, terr), "nothing was pulled; branch %s of %s holds what ckpt never writes into a work tree (docs/remotes.md)", rel, remote)
}

func (s *Service) pullSession(t *repo.Repo, id string, theirs repo.Hash, o Options) (PulledSession, error) {
	ps := PulledSession{Session: id}
	sid, err := repo.ParseSessionID(id)
	if err != nil {
		return ps, fmt.Errorf("remote session %q: %w", id, err)
	}
	r, err := s.cp.Store.Open(sid)
	if errors.Is(err, repo.ErrNotFound) {
		return s.createSession(t, id, theirs, o)
	}
	if err != nil {
		return ps, err
	}
	return s.integrate(r, t, theirs, o.Remote+"/"+id)
}

// createSession makes session id, which is not here, from commit theirs of the transport
// t. It wraps repo.ErrExists when the session appeared meanwhile.
func (s *Service) createSession(t *repo.Repo, id string, theirs repo.Hash, o Options) (PulledSession, error) {
	ps := PulledSession{Session: id}
	sid, err := repo.ParseSessionID(id)
	if err != nil {
		return ps, fmt.Errorf("remote session %q: %w", id, err)
	}
	cp, err := t.ReadFile(theirs, checkpoint.File)
	if err != nil {
		return ps, fmt.Errorf("remote session %s: %w", id, err)
	}
	st := s.cp.Store
	if o.Quick {
		st = st.Quick()
	}
	unlock, err := s.cp.Store.Lock(string(sid), true)
	if err != nil {
		return ps, err
	}
	defer unlock()
	if _, err := st.Materialize(sid, t, theirs, map[string]string{"template": s.cp.GuessTemplate(cp)}); err != nil {
		return ps, fmt.Errorf("%s: %w", id, err)
	}
	ps.Result, ps.Commit = "created", theirs.String()
	return ps, nil
}

func (s *Service) pullKnowledge(t *repo.Repo, theirs repo.Hash, o Options) (PulledSession, error) {
	ps := PulledSession{Session: "knowledge"}
	unlock, err := s.cp.Store.Lock(repo.KnowledgeLock, true)
	if err != nil {
		return ps, err
	}
	kr, err := s.cp.Store.OpenKnowledge()
	if errors.Is(err, repo.ErrNotFound) {
		defer unlock()
		st := s.cp.Store
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
	unlock, err := s.cp.Store.Lock(r.LockName, true)
	if err != nil {
		return ps, err
	}
	defer unlock()
	if err := s.FinishPull(r); err != nil {
		return ps, fmt.Errorf("%s: finish the interrupted pull: %w", r.ID, err)
	}
	if mh, err := r.MergeHead(); err != nil || mh != repo.ZeroHash {
		if err == nil {
			err = hint.New(fmt.Errorf("%s: a merge is already pending (MERGE_HEAD %s)", r.ID, repo.ShortHash(mh)), "resolve the conflicts, then %s", commitCommand(repoName(r)))
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
	return checkpoint.Retry(func() (PulledSession, error) { return s.integrateOnce(r, theirs, label) })
}

// integrateOnce is one attempt of integrate under the lock: what is on disk is recorded
// first (autosave), then theirs is checked out or merged, each file written only while it
// holds the bytes read.
func (s *Service) integrateOnce(r *repo.Repo, theirs repo.Hash, label string) (PulledSession, error) {
	ps := PulledSession{Session: r.ID}
	head, old, err := checkpoint.HeadFiles(r)
	if err != nil {
		return ps, err
	}
	disk, err := r.WorkFiles()
	if err != nil {
		return ps, err
	}
	if head, old, _, err = s.cp.Autosave(r, head, old, disk, "merging "+label); err != nil {
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
	msg := checkpoint.MergeMessage(r.ID, label)
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
	p, _, err := s.cp.Prepare(r, checkpoint.Plan{Head: head, Old: old, Next: merged, Disk: disk}, checkpoint.CommitOptions{Trigger: checkpoint.TriggerMerge, Message: "merge " + label, Parents: []repo.Hash{head, theirs}}, false)
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

// Clone makes an empty store a copy of a remote store: every session and the knowledge
// repository. The remote is recorded as origin.
func (s *Service) Clone(url string, network *repo.GitNetwork, progress func(done, total int, session string)) (*PullReport, error) {
	if ids, err := s.cp.Store.SessionIDs(); err != nil || len(ids) > 0 {
		if err == nil {
			err = fmt.Errorf("%s: not an empty store (%d sessions)", s.cp.Store.Home, len(ids))
		}
		return nil, err
	}
	if err := os.MkdirAll(s.cp.Store.Home, repo.DirPerm); err != nil {
		return nil, err
	}
	// A password in the URL goes to git's credential helper, which the fetch then asks.
	if _, err := s.cp.Store.AddRemote("origin", url); err != nil {
		return nil, err
	}
	return s.Pull(Options{Remote: "origin", Network: network, Progress: progress, Quick: true})
}

// repoName is how a pull report names a repository: its session id, or "knowledge".
func repoName(r *repo.Repo) string {
	if r.LockName == repo.KnowledgeLock {
		return "knowledge"
	}
	return r.ID
}

// commitCommand is the command that commits what is on disk in a repository a pull
// reported, which finishes a merge it left pending.
func commitCommand(name string) string {
	if name == "knowledge" {
		return "ckpt commit --knowledge"
	}
	return "ckpt check -s " + name + " && ckpt commit -s " + name
}
