package remote

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
	"github.com/ckpt-dev/ckpt/secrets"
	"github.com/ckpt-dev/ckpt/sections"
)

// pushedRefs returns what the transport repository says remotes have of r: its mirror
// ref and each remote's tracking ref, name -> commit. A store that never pushed has none.
// It reads a few refs, not the transport's thousands: a status calls it per session.
func (s *Service) pushedRefs(r *repo.Repo) (map[string]repo.Hash, error) {
	out := map[string]repo.Hash{}
	dir := s.cp.Store.TransportDir()
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	t, err := s.cp.Store.Transport()
	if err != nil {
		return nil, err
	}
	remotes := map[string]bool{}
	if es, err := os.ReadDir(filepath.Join(dir, "refs", "remotes")); err == nil {
		for _, e := range es {
			remotes[e.Name()] = true
		}
	}
	if rs, err := s.cp.Store.Remotes(); err == nil {
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
func (s *Service) scanKept(r *repo.Repo, keep []repo.Hash, found func(file string, secrets []secrets.Finding)) error {
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
			if fs := secrets.Scan(data, 0, s.cp.Config.Secrets.Allow); len(fs) > 0 {
				found(name, fs)
			}
		}
	}
	return nil
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
		if t, err = s.cp.Store.Transport(); err != nil {
			return nil, err
		}
		for _, ref := range sortedRefNames(pushed) {
			haveHashes = append(haveHashes, pushed[ref])
			have = append(have, pushed[ref].String())
		}
	}
	key := findingsKey(s.cp.Config.Secrets.Allow)
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
		for _, sec := range secrets.Scan(disk[name], 0, s.cp.Config.Secrets.Allow) {
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
	for _, r := range secrets.Rules() {
		fmt.Fprintf(h, "%s\x00%s\x00", r.ID, r.Description)
	}
	for _, a := range allow {
		fmt.Fprintf(h, "%s\x00", a)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func (s *Service) findingsPath(r *repo.Repo) string {
	return filepath.Join(s.cp.Store.StateDir(), "secrets", r.LockName+".json")
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
	type commit struct {
		hash repo.Hash
		repo.CommitFiles
	}
	var fresh []commit
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
		cf, err := r.CommitFiles(h)
		if err != nil {
			return nil, err
		}
		ci := commit{h, cf}
		fresh = append(fresh, ci)
		for i := len(ci.Parents) - 1; i >= 0; i-- {
			stack = append(stack, ci.Parents[i])
		}
	}
	var out []SecretFinding
	for i := len(fresh) - 1; i >= 0; i-- {
		ci := fresh[i]
		c := ci.hash
		// The message leaves with the commit (ckpt commit -m puts text of the user's there).
		for _, sec := range secrets.Scan([]byte(ci.Message), 0, s.cp.Config.Secrets.Allow) {
			out = append(out, SecretFinding{Session: r.ID, Commit: c.String()[:12], File: CommitMessage, Line: sec.Line, Rule: sec.Rule, Secret: sec.Redacted})
		}
		files := ci.Files
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
			found := secrets.Scan(data, 0, s.cp.Config.Secrets.Allow)
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
