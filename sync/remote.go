package sync

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

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

// SecretFinding is a possible secret in a commit that a push would send.
type SecretFinding struct {
	Session string      `json:"session"`
	Commit  string      `json:"commit"`
	File    string      `json:"file"`
	Section sections.ID `json:"section"`
	Line    int         `json:"line"`
	Rule    string      `json:"rule"`
	Secret  string      `json:"secret"` // redacted
}

// PushReport says what a push sent.
type PushReport struct {
	Remote   string          `json:"remote"`
	Pushed   []string        `json:"pushed"`     // sessions (and "knowledge") whose refs moved
	UpToDate int             `json:"up_to_date"` // repositories the remote already had
	Secrets  []SecretFinding `json:"secrets,omitempty"`
}

// Push mirrors the chosen sessions (and the knowledge repository) into the transport
// repository and pushes them as refs/heads/sessions/<id> and refs/heads/knowledge in one
// git push. Commits that would leave are scanned for secrets first; any found refuse the
// push (ErrSecrets) unless AllowSecrets or the config's allowlist lets them through.
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
		if err := copier.Copy(r, head); err != nil {
			copier.Abort()
			return nil, fmt.Errorf("%s: %w", r.ID, err)
		}
		if !o.AllowSecrets {
			found, err := s.scanOutgoing(r, head, remoteHas)
			if err != nil {
				copier.Abort()
				return nil, err
			}
			rep.Secrets = append(rep.Secrets, found...)
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
	if len(rep.Secrets) > 0 {
		copier.Abort()
	} else if _, err := copier.Finish(); err != nil {
		return nil, err
	}
	if len(rep.Secrets) > 0 {
		return rep, fmt.Errorf("%w: %d finding(s); nothing pushed\nhint: remove them and commit, allow them in config.toml [secrets] allow, or push with --allow-secrets", ErrSecrets, len(rep.Secrets))
	}
	for _, m := range moves {
		if err := t.SetRef(m.ref, m.to); err != nil {
			return nil, err
		}
	}
	if err := o.Network.Push(t, url, specs); err != nil {
		for _, m := range moves {
			_ = t.SetRef(m.ref, m.old)
		}
		return nil, err
	}
	for _, m := range moves {
		if err := t.SetRef(trackingRef(o.Remote, m.ref), m.to); err != nil {
			return nil, err
		}
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

// scanOutgoing scans what the commits between have (what the remote holds) and head add:
// the lines each commit introduced in each file it changed, so a push of thousands of
// versions scans each new line once instead of every version whole.
func (s *Service) scanOutgoing(r *repo.Repo, head, have repo.Hash) ([]SecretFinding, error) {
	var out []SecretFinding
	var failed error
	scanned := map[repo.Hash]bool{}
	err := r.Log(head, func(ci repo.CommitInfo) bool {
		if ci.Hash == have {
			return false
		}
		files, err := r.FileHashes(ci.Hash)
		if err != nil {
			failed = err
			return false
		}
		var parent map[string]repo.Hash
		if len(ci.Parents) > 0 {
			if parent, err = r.FileHashes(ci.Parents[0]); err != nil {
				failed = err
				return false
			}
		}
		for name, h := range files {
			if parent[name] == h || scanned[h] {
				continue
			}
			scanned[h] = true
			data, err := r.Blob(h)
			if err != nil {
				failed = err
				return false
			}
			var old []byte
			if ph, ok := parent[name]; ok {
				if old, err = r.Blob(ph); err != nil {
					failed = err
					return false
				}
			}
			for _, sec := range scanAddedLines(old, data, s.Config.Secrets.Allow) {
				out = append(out, SecretFinding{Session: r.ID, Commit: ci.Hash.String()[:12], File: name, Section: sec.Section, Line: sec.Line, Rule: sec.Rule, Secret: sec.Redacted})
			}
		}
		return true
	})
	if failed != nil {
		return nil, failed
	}
	return out, err
}

// scanAddedLines runs the secret scan over the lines of data that old lacks, reporting
// their line numbers and sections in data.
func scanAddedLines(old, data []byte, allow []string) []sections.Secret {
	have := map[string]int{}
	for _, l := range bytes.SplitAfter(old, []byte("\n")) {
		have[string(l)]++
	}
	var added bytes.Buffer
	var lineOf []int // line in data of each line of added
	for i, l := range bytes.SplitAfter(data, []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		if have[string(l)] > 0 {
			have[string(l)]--
			continue
		}
		added.Write(l)
		if l[len(l)-1] != '\n' {
			added.WriteByte('\n')
		}
		lineOf = append(lineOf, i+1)
	}
	if added.Len() == 0 {
		return nil
	}
	found := sections.ScanSecrets(added.Bytes(), 0, allow)
	if len(found) == 0 {
		return nil
	}
	doc := sections.Parse(data, sections.Options{})
	for i := range found {
		line := lineOf[found[i].Line-1]
		found[i].Line, found[i].Section = line, ""
		for _, sec := range doc.Sections {
			if sec.Line <= line {
				found[i].Section = sec.ID
			}
		}
	}
	return found
}

// PullReport says what a pull did to each repository.
type PullReport struct {
	Remote   string          `json:"remote"`
	Sessions []PulledSession `json:"sessions"`
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
			if o.Progress != nil {
				o.Progress(i+1, len(names), id)
			}
			ps, err = s.pullSession(t, id, theirs, o)
		default:
			continue
		}
		if err != nil {
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
		if err := r.Checkout(head, theirs, disk); err != nil {
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
		if err := r.WriteWorkFiles(merged, old, disk); err != nil {
			return ps, err
		}
		if err := r.SetMergeHead(theirs, msg); err != nil {
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
	res, err := s.commitFiles(r, commitPlan{head: head, old: old, next: merged, disk: disk}, CommitOptions{Trigger: "merge", Message: "merge " + label, Parents: []repo.Hash{head, theirs}})
	if err != nil {
		return ps, err
	}
	ps.Result, ps.Commit = "merged", res.Commit.String()
	return ps, nil
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
	if err := os.MkdirAll(s.Store.Home, 0o755); err != nil {
		return nil, err
	}
	if err := s.Store.SetRemote("origin", url); err != nil {
		return nil, err
	}
	return s.Pull(RemoteOptions{Remote: "origin", Network: network, Progress: progress, Quick: true})
}

// GC squashes a session's old sparse checkpoints (repo.Squash) and repacks it. History that
// was pushed (what the transport repository says any remote has) is left alone unless
// force.
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
	if err != nil || o.DryRun || len(rep.Runs) > 0 {
		return rep, err
	}
	return rep, r.Pack()
}
