package sync

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
)

// Redaction: the way out for a secret that reached a checkpoint. Every version of every
// file (and every commit message) has each finding of the secret scan replaced by a marker,
// the old objects are pruned, and a commit on top says which kinds were redacted. History a
// remote has is left alone unless forced, and then the report says what the remote must
// drop.

// RedactTrigger is the Ckpt-Trigger of the commit a redaction adds.
const RedactTrigger = "redact"

// RedactMarker is the text that replaces a secret: [REDACTED:<rule>:<hash>], hash being the
// first 8 hex digits of the value's SHA-256. One secret gets one marker wherever it was, so a
// reader can tell that two places held the same value, and the owner can tell which of their
// credentials it was by hashing it.
func RedactMarker(rule, value string) string {
	sum := sha256.Sum256([]byte(value))
	return "[REDACTED:" + rule + ":" + hex.EncodeToString(sum[:4]) + "]"
}

// redactText replaces every secret the scan finds in data (the config's allowlist applies)
// with its marker, and returns the secrets replaced. Replacing one secret can uncover
// another that a more specific rule was hiding, so it scans again until nothing is left.
func (s *Service) redactText(data []byte) ([]byte, []sections.Secret) {
	var all []sections.Secret
	for range 4 {
		found := sections.ScanSecrets(data, 0, s.Config.Secrets.Allow)
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
				pairs = append(pairs, f.Value, RedactMarker(f.Rule, f.Value))
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
	unlock, err := s.Store.Lock(r.LockName, true)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rep := &RedactReport{Session: r.ID, Knowledge: r.LockName == repo.KnowledgeLock, DryRun: o.DryRun, Kinds: map[string]int{}, Redacted: []Redacted{}}
	if mh, err := r.MergeHead(); err != nil || mh != repo.ZeroHash {
		if err == nil {
			err = fmt.Errorf("%s: a merge is pending (MERGE_HEAD %s); nothing redacted\nhint: resolve it and ckpt commit -s %s first", r.ID, repo.ShortHash(mh), r.ID)
		}
		return nil, err
	}
	head, old, err := headFiles(r)
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
		var auto *Autosave
		if head, old, auto, err = s.autosave(r, head, old, disk, "redacting"); err != nil {
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
					return nil, fmt.Errorf("%s: %s has commits this repository lacks; nothing redacted\nhint: ckpt pull first, so that a forced push does not drop them", r.ID, remote)
				}
			}
			continue
		}
		keep = append(keep, h)
	}

	seen := map[string]bool{}
	note := func(list *[]Redacted, kinds map[string]int, file string, found []sections.Secret) {
		for _, f := range found {
			k := f.Rule + "\x00" + f.Value
			if seen[k] {
				continue
			}
			seen[k] = true
			if kinds != nil {
				kinds[f.Rule]++
			}
			*list = append(*list, Redacted{File: file, Line: f.Line, Rule: f.Rule, Secret: f.Redacted, Marker: RedactMarker(f.Rule, f.Value)})
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
		if err := s.scanKept(r, keep, func(file string, found []sections.Secret) { note(&rep.Pushed, nil, file, found) }); err != nil {
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
	p, err := r.Prepare(repo.CommitRequest{Files: files, Message: msg, Parents: []repo.Hash{newHead}, Force: true, Disk: disk, Appendable: []string{NotesFile}})
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
	subject := fmt.Sprintf("checkpoint(%s): redact %d possible secret(s) (%s)", RedactTrigger, rep.Total(), strings.Join(kinds, ", "))
	var b strings.Builder
	b.WriteString(subject + "\n\n")
	fmt.Fprintf(&b, "Every version of every file now holds [REDACTED:<kind>:<hash>] instead;\n%d commit(s) were rewritten and the old objects pruned.\n\n", rep.Commits)
	b.WriteString("Ckpt-Session: " + id + "\n")
	b.WriteString("Ckpt-Trigger: " + RedactTrigger + "\n")
	b.WriteString("Ckpt-Sections: \n")
	b.WriteString("Ckpt-Redacted: " + rep.KindList() + "\n")
	return b.String()
}

// pushedRefs returns what the transport repository says remotes have of r: its mirror
// ref and each remote's tracking ref, name -> commit. A store that never pushed has none.
// It reads a few refs, not the transport's thousands: a status calls it per session.
func (s *Service) pushedRefs(r *repo.Repo) (map[string]repo.Hash, error) {
	out := map[string]repo.Hash{}
	dir := s.Store.TransportDir()
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	t, err := s.Store.Transport()
	if err != nil {
		return nil, err
	}
	remotes := map[string]bool{}
	if es, err := os.ReadDir(filepath.Join(dir, "refs", "remotes")); err == nil {
		for _, e := range es {
			remotes[e.Name()] = true
		}
	}
	if rs, err := s.Store.Remotes(); err == nil {
		for name := range rs {
			remotes[name] = true // its tracking refs may be in packed-refs only
		}
	}
	ref := transportRef(r)
	names := []string{ref}
	for name := range remotes {
		names = append(names, trackingRef(name, ref))
	}
	for _, name := range names {
		h, err := t.Ref(name)
		if err != nil {
			return nil, err
		}
		if h != repo.ZeroHash {
			out[name] = h
		}
	}
	return out, nil
}

// remoteOfRef splits a tracking ref (refs/remotes/<remote>/sessions/<id>) into the ref the
// remote has and the remote's name; the transport's own refs have no remote.
func remoteOfRef(ref string) (name, remote string) {
	rest, ok := strings.CutPrefix(ref, "refs/remotes/")
	if !ok {
		return ref, ""
	}
	remote, rel, _ := strings.Cut(rest, "/")
	return "refs/heads/" + rel, remote
}

// scanKept scans the files of the history a remote has (first parents from each of keep),
// each blob once, and hands the findings to found.
func (s *Service) scanKept(r *repo.Repo, keep []repo.Hash, found func(file string, secrets []sections.Secret)) error {
	if len(keep) == 0 {
		return nil
	}
	commits, err := r.Ancestors(keep...)
	if err != nil {
		return err
	}
	scanned := map[repo.Hash]bool{}
	for _, c := range sortedHashes(commits) {
		files, err := r.FileHashes(c)
		if err != nil {
			return err
		}
		for _, name := range sortedHashNames(files) {
			h := files[name]
			if scanned[h] {
				continue
			}
			scanned[h] = true
			data, err := r.Blob(h)
			if err != nil {
				return err
			}
			if fs := sections.ScanSecrets(data, 0, s.Config.Secrets.Allow); len(fs) > 0 {
				found(name, fs)
			}
		}
	}
	return nil
}

// forgetSearchIndex removes the search index of r (search.indexPath): it holds the text of
// every version, secrets included, and search rebuilds it from git when it is missing.
func (s *Service) forgetSearchIndex(r *repo.Repo) {
	p := filepath.Join(s.Store.StateDir(), "search", "sessions", r.ID+".idx")
	if r.LockName == repo.KnowledgeLock {
		p = filepath.Join(s.Store.StateDir(), "search", "knowledge.idx")
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

func sortedRefNames(m map[string]repo.Hash) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedHashNames(m map[string]repo.Hash) []string { return sortedRefNames(m) }

func sortedFileNames(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedHashes(m map[repo.Hash]bool) []repo.Hash {
	out := make([]repo.Hash, 0, len(m))
	for h := range m {
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// SecretFindings returns what the secret scan finds in r that no remote has yet: in every
// blob of its history that is new to every remote the transport knows (what would hold a
// push back) and in its work tree as it is (Commit ""). The history part is cached under
// state/secrets/ (findings shown redacted, as ever), so that a status costs the commits
// made since the last one, not the whole history. It takes no lock: objects are immutable
// and refs are replaced atomically.
func (s *Service) SecretFindings(r *repo.Repo) ([]SecretFinding, error) {
	head, err := r.Head()
	if err != nil || head == repo.ZeroHash {
		return nil, err
	}
	pushed, err := s.pushedRefs(r)
	if err != nil {
		return nil, err
	}
	var t *repo.Repo
	var have []string
	var haveHashes []repo.Hash
	if len(pushed) > 0 {
		if t, err = s.Store.Transport(); err != nil {
			return nil, err
		}
		for _, ref := range sortedRefNames(pushed) {
			haveHashes = append(haveHashes, pushed[ref])
			have = append(have, pushed[ref].String())
		}
	}
	key := findingsKey(s.Config.Secrets.Allow)
	cache := s.loadFindings(r)
	var out []SecretFinding
	switch {
	case cache.Key == key && cache.Pushed == strings.Join(have, ",") && cache.Head == head.String():
		out = cache.Findings
	case cache.Key == key && cache.Pushed == strings.Join(have, ",") && cache.Head != "" && isAncestor(r, cache.Head, head):
		more, err := s.scanOutgoing(r, head, t, haveHashes, plumbingHash(cache.Head))
		if err != nil {
			return nil, err
		}
		out = append(cache.Findings, more...)
	default:
		if out, err = s.scanOutgoing(r, head, t, haveHashes, repo.ZeroHash); err != nil {
			return nil, err
		}
	}
	s.saveFindings(r, findingsCache{Key: key, Head: head.String(), Pushed: strings.Join(have, ","), Findings: out})
	out = append([]SecretFinding(nil), out...)
	committed, err := r.FileHashes(head)
	if err != nil {
		return nil, err
	}
	disk, err := r.WorkFiles()
	if err != nil {
		return nil, err
	}
	for _, name := range sortedFileNames(disk) {
		if committed[name] == repo.BlobHash(disk[name]) {
			continue // scanned with history, or pushed
		}
		for _, sec := range sections.ScanSecrets(disk[name], 0, s.Config.Secrets.Allow) {
			out = append(out, SecretFinding{Session: r.ID, File: name, Section: sec.Section, Line: sec.Line, Rule: sec.Rule, Secret: sec.Redacted})
		}
	}
	return out, nil
}

// findingsCache is what SecretFindings found in the history up to Head, given the pushed
// commits and the rules and allowlist summed up by Key.
type findingsCache struct {
	Key      string          `json:"key"`
	Head     string          `json:"head"`
	Pushed   string          `json:"pushed"`
	Findings []SecretFinding `json:"findings"`
}

// findingsKey sums up what a scan's result depends on besides git: the rules and the
// allowlist.
func findingsKey(allow []string) string {
	h := sha256.New()
	for _, r := range sections.SecretRules() {
		fmt.Fprintf(h, "%s\x00%s\x00", r.ID, r.Description)
	}
	for _, a := range allow {
		fmt.Fprintf(h, "%s\x00", a)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func (s *Service) findingsPath(r *repo.Repo) string {
	return filepath.Join(s.Store.StateDir(), "secrets", r.LockName+".json")
}

// loadFindings reads the cache; a missing or damaged one is empty.
func (s *Service) loadFindings(r *repo.Repo) findingsCache {
	var c findingsCache
	if b, err := os.ReadFile(s.findingsPath(r)); err == nil {
		if json.Unmarshal(b, &c) != nil {
			c = findingsCache{}
		}
	}
	return c
}

// saveFindings writes the cache, atomically and without fsync: a torn one is rebuilt.
func (s *Service) saveFindings(r *repo.Repo, c findingsCache) {
	p := s.findingsPath(r)
	if os.MkdirAll(filepath.Dir(p), repo.DirPerm) != nil {
		return
	}
	if b, err := json.Marshal(c); err == nil {
		_ = repo.WriteFileAtomic(p, b, repo.FilePerm, false)
	}
}

func plumbingHash(s string) repo.Hash {
	var h repo.Hash
	if b, err := hex.DecodeString(s); err == nil && len(b) == len(h) {
		copy(h[:], b)
	}
	return h
}

// isAncestor reports whether the commit named a is an ancestor of b (false on any error).
func isAncestor(r *repo.Repo, a string, b repo.Hash) bool {
	h := plumbingHash(a)
	if h == repo.ZeroHash || !r.Has(h) {
		return false
	}
	ok, err := r.IsAncestor(h, b)
	return err == nil && ok
}
