package remote

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/internal/hint"
	"github.com/ckpt-dev/ckpt/internal/trailer"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/secrets"
)

// Redaction: the way out for a secret that reached a checkpoint. Every version of every
// file (and every commit message) has each finding of the secret scan replaced by a marker,
// the old objects are pruned, and a commit on top says which kinds were redacted. History a
// remote has is left alone unless forced, and then the report says what the remote must
// drop.

// redactMarker is the text that replaces a secret: [REDACTED:<rule>:<hash>], hash being the
// first 8 hex digits of the value's SHA-256. One secret gets one marker wherever it was, so a
// reader can tell that two places held the same value, and the owner can tell which of their
// credentials it was by hashing it.
func redactMarker(rule, value string) string {
	sum := sha256.Sum256([]byte(value))
	return "[REDACTED:" + rule + ":" + hex.EncodeToString(sum[:4]) + "]"
}

// redactText replaces every secret the scan finds in data (the config's allowlist applies)
// with its marker, and returns the secrets replaced. Replacing one secret can uncover
// another that a more specific rule was hiding, so it scans again until nothing is left.
func (s *Service) redactText(data []byte) ([]byte, []secrets.Finding) {
	var all []secrets.Finding
	for range 4 {
		found := secrets.Scan(data, 0, s.cp.Config.Secrets.Allow)
		if len(found) == 0 {
			break
		}
		all = append(all, found...)
		// Longest first, in one pass: a value inside another, or inside a marker already
		// written, is never replaced on its own.
		sort.SliceStable(found, func(i, j int) bool { return len(found[i].Value) > len(found[j].Value) })
		var pairs []string
		seen := map[string]bool{}
		for _, f := range found {
			if !seen[f.Value] {
				seen[f.Value] = true
				pairs = append(pairs, f.Value, redactMarker(f.Rule, f.Value))
			}
		}
		data = []byte(strings.NewReplacer(pairs...).Replace(string(data)))
	}
	return data, all
}

// RedactOptions say what a redaction may rewrite.
type RedactOptions struct {
	// Force rewrites history a remote has too; the report then says what each remote must
	// drop, and the next push must be a forced one.
	Force bool
	// DryRun reports what would change and writes nothing.
	DryRun bool
}

// Redacted is one secret a redaction replaced (or would replace).
type Redacted struct {
	File   string `json:"file"`
	Line   int    `json:"line"` // in the first version of the file it was found in
	Rule   string `json:"rule"`
	Secret string `json:"secret"` // redacted
	Marker string `json:"marker"`
}

// RemoteDrop is a ref a remote holds whose history a forced redaction rewrote: until
// `ckpt push --force` replaces it, and the remote prunes the old objects, the remote still
// has the secret.
type RemoteDrop struct {
	Remote string `json:"remote"`
	Ref    string `json:"ref"`
	Old    string `json:"old"` // the commit the remote has
	New    string `json:"new"` // what replaces it
}

// RedactReport says what a redaction did.
type RedactReport struct {
	Session   string `json:"session"`
	Knowledge bool   `json:"knowledge,omitempty"` // the knowledge repository, not a session
	DryRun    bool   `json:"dry_run,omitempty"`
	// Kinds counts the distinct secrets redacted by rule.
	Kinds    map[string]int `json:"kinds"`
	Redacted []Redacted     `json:"redacted"`
	// Commits is how many commits were rewritten (or would be).
	Commits int `json:"commits_rewritten"`
	// Recorded is the commit that recorded uncommitted work-tree bytes first; Rejected the
	// ref that kept them when check rejected them.
	Recorded string `json:"recorded,omitempty"`
	Rejected string `json:"rejected,omitempty"`
	// Commit is the redaction's own commit on top.
	Commit string `json:"commit,omitempty"`
	// Refs lists the refs moved, "name old new".
	Refs []string `json:"refs,omitempty"`
	// Pushed are secrets left in history a remote has (without Force).
	Pushed []Redacted `json:"pushed,omitempty"`
	// Remotes say what each remote must drop (with Force).
	Remotes []RemoteDrop `json:"remotes,omitempty"`
}

// Total is the number of distinct secrets redacted.
func (r *RedactReport) Total() int {
	n := 0
	for _, c := range r.Kinds {
		n += c
	}
	return n
}

// KindList is "rule:count,…" in rule order: the Ckpt-Redacted trailer.
func (r *RedactReport) KindList() string {
	rules := make([]string, 0, len(r.Kinds))
	for k := range r.Kinds {
		rules = append(rules, k)
	}
	sort.Strings(rules)
	for i, k := range rules {
		rules[i] = fmt.Sprintf("%s:%d", k, r.Kinds[k])
	}
	return strings.Join(rules, ",")
}

// Redact rewrites r's history so that every version of every file holds a marker
// (RedactMarker) instead of each secret the scan finds, then prunes the old objects: the
// refs (main, rejected writes), packed-refs and reflogs are rewritten with it. Uncommitted
// work-tree bytes are committed first, so nothing the agent wrote is lost, and the work
// tree is redacted with the commit the redaction adds on top (trigger redact, with a
// Ckpt-Redacted trailer naming the kinds and counts, never the values). History a remote
// has (per the transport repository) is left as it is unless o.Force.
func (s *Service) Redact(r *repo.Repo, o RedactOptions) (*RedactReport, error) {
	unlock, err := s.cp.Store.Lock(r.LockName, true)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if !o.DryRun {
		// Lock put back what it could; a guard it could not is an old copy of notes.md.
		if err := s.cp.Store.DropLate(r.LockName); err != nil {
			return nil, err
		}
	}
	rep := &RedactReport{Session: r.ID, Knowledge: r.LockName == repo.KnowledgeLock, DryRun: o.DryRun, Kinds: map[string]int{}, Redacted: []Redacted{}}
	if mh, err := r.MergeHead(); err != nil || mh != repo.ZeroHash {
		if err == nil {
			err = hint.New(fmt.Errorf("%s: a merge is pending (MERGE_HEAD %s); nothing redacted", r.ID, repo.ShortHash(mh)), "resolve it and %s first", commitCommand(repoName(r)))
		}
		return nil, err
	}
	head, old, err := checkpoint.HeadFiles(r)
	if err != nil {
		return nil, err
	}
	disk, err := r.WorkFiles()
	if err != nil {
		return nil, err
	}
	// Bytes on disk that no commit holds are recorded first (autosave): the redaction must
	// not be what loses them.
	if !o.DryRun {
		var auto *checkpoint.Autosave
		if head, old, auto, err = s.cp.Autosave(r, head, old, disk, "redacting"); err != nil {
			return nil, fmt.Errorf("%s: %w", r.ID, err)
		}
		if auto != nil {
			rep.Rejected = auto.RejectedRef // kept there, and redacted there with the rest
			if auto.Commit != repo.ZeroHash {
				rep.Recorded = auto.Commit.String()
			}
		}
	}

	pushed, err := s.pushedRefs(r)
	if err != nil {
		return nil, err
	}
	var keep []repo.Hash
	for _, ref := range sortedRefNames(pushed) {
		h := pushed[ref]
		if o.Force {
			if _, remote := remoteOfRef(ref); remote != "" && h != repo.ZeroHash {
				if _, err := r.CommitInfo(h); err != nil {
					return nil, hint.New(fmt.Errorf("%s: %s has commits this repository lacks; nothing redacted", r.ID, remote), "ckpt pull first, so that a forced push does not drop them")
				}
			}
			continue
		}
		keep = append(keep, h)
	}

	seen := map[string]bool{}
	note := func(list *[]Redacted, kinds map[string]int, file string, found []secrets.Finding) {
		for _, f := range found {
			k := f.Rule + "\x00" + f.Value
			if seen[k] {
				continue
			}
			seen[k] = true
			if kinds != nil {
				kinds[f.Rule]++
			}
			*list = append(*list, Redacted{File: file, Line: f.Line, Rule: f.Rule, Secret: f.Redacted, Marker: redactMarker(f.Rule, f.Value)})
		}
	}
	blob := func(path string, data []byte) ([]byte, error) {
		out, found := s.redactText(data)
		note(&rep.Redacted, rep.Kinds, path, found)
		return out, nil
	}
	message := func(msg string) string {
		out, found := s.redactText([]byte(msg))
		note(&rep.Redacted, rep.Kinds, CommitMessage, found)
		return string(out)
	}
	rw, err := r.RewriteHistory(repo.RewriteOptions{Blob: blob, Message: message, Keep: keep, DryRun: o.DryRun, Reason: "redact: rewrite history"})
	if err != nil {
		return nil, err
	}
	rep.Commits = len(rw.Commits)
	// What the disk holds beyond HEAD (a write check rejected) is redacted in place.
	newDisk := map[string][]byte{}
	for _, name := range sortedFileNames(disk) {
		if b, ok := old[name]; ok && string(b) == string(disk[name]) {
			continue
		}
		// Written back after the commit on top, which writes HEAD's files: the bytes stay.
		out, found := s.redactText(disk[name])
		note(&rep.Redacted, rep.Kinds, name, found)
		newDisk[name] = out
	}
	if !o.Force {
		if err := s.scanKept(r, keep, func(file string, found []secrets.Finding) { note(&rep.Pushed, nil, file, found) }); err != nil {
			return nil, err
		}
	}
	for _, m := range rw.Refs {
		rep.Refs = append(rep.Refs, fmt.Sprintf("%s %s %s", m.Name, repo.ShortHash(m.Old), repo.ShortHash(m.New)))
	}
	if rep.Total() == 0 || o.DryRun {
		return rep, nil
	}

	newHead := rw.New(head)
	files, err := r.Files(newHead)
	if err != nil {
		return nil, err
	}
	msg := redactMessage(r.ID, rep)
	p, err := r.Prepare(repo.CommitRequest{Files: files, Message: msg, Parents: []repo.Hash{newHead}, Force: true, Disk: disk, Appendable: []string{checkpoint.NotesFile}})
	if err != nil {
		return nil, err
	}
	// The work tree first, then main (from the old head straight to the commit on top), as
	// every commit does; then the other refs, the reflogs, and the prune.
	if err := p.Apply(); err != nil {
		return nil, err
	}
	if err := r.WriteWorkFiles(newDisk, nil, nil); err != nil {
		return nil, err
	}
	if err := rw.Finish(repo.MainRef); err != nil {
		return nil, err
	}
	rep.Commit = p.Commit().String()
	if newHead != head {
		rep.Refs = append([]string{fmt.Sprintf("%s %s %s", repo.MainRef, repo.ShortHash(head), repo.ShortHash(p.Commit()))}, dropRef(rep.Refs, repo.MainRef)...)
	}
	if o.Force {
		for _, ref := range sortedRefNames(pushed) {
			h := pushed[ref]
			name, remote := remoteOfRef(ref)
			if remote != "" && rw.New(h) != h {
				rep.Remotes = append(rep.Remotes, RemoteDrop{Remote: remote, Ref: name, Old: h.String(), New: rep.Commit})
			}
		}
	}
	// The search index caches the text of every version; it is rebuilt from git on demand.
	s.forgetSearchIndex(r)
	return rep, nil
}

func redactMessage(id string, rep *RedactReport) string {
	var kinds []string
	for _, k := range strings.Split(rep.KindList(), ",") {
		rule, n, _ := strings.Cut(k, ":")
		kinds = append(kinds, rule+" ×"+n)
	}
	return checkpoint.Message{
		Subject: checkpoint.Subject(checkpoint.TriggerRedact, fmt.Sprintf("redact %d possible secret(s) (%s)", rep.Total(), strings.Join(kinds, ", "))),
		Body:    fmt.Sprintf("Every version of every file now holds [REDACTED:<kind>:<hash>] instead;\n%d commit(s) were rewritten and the old objects pruned.", rep.Commits),
		Trailers: []trailer.Trailer{
			{Key: checkpoint.KeySession, Value: id},
			{Key: checkpoint.KeyTrigger, Value: string(checkpoint.TriggerRedact)},
			{Key: checkpoint.KeySections, Value: ""},
			{Key: checkpoint.KeyRedacted, Value: rep.KindList()},
		},
	}.String()
}

// forgetSearchIndex removes the search index of r (search.indexPath): it holds the text of
// every version, secrets included, and search rebuilds it from git when it is missing.
func (s *Service) forgetSearchIndex(r *repo.Repo) {
	p := filepath.Join(s.cp.Store.StateDir(), "search", "sessions", r.ID+".idx")
	if r.LockName == repo.KnowledgeLock {
		p = filepath.Join(s.cp.Store.StateDir(), "search", "knowledge.idx")
	}
	_ = os.Remove(p)
}

func dropRef(refs []string, name string) []string {
	var out []string
	for _, r := range refs {
		if !strings.HasPrefix(r, name+" ") {
			out = append(out, r)
		}
	}
	return out
}
