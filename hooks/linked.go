package hooks

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/internal/trailer"
	"github.com/ckpt-dev/ckpt/repo"
)

// What the code commits last named (LastLinked) is a function of the commit at HEAD, so
// prepare-commit-msg keeps its answer per commit in state/linked.json: the next commit's
// answer is its parent's, with what the new commit's own trailers name, read from its loose
// object (git has just written it). Only a commit the cache cannot answer for with
// certainty (a merge, a packed object, an unusual repository, a message that mentions the
// trailer outside its trailer block) costs a git log.

// linkedKeep is how many commits' answers the cache keeps (all repositories of the store).
const linkedKeep = 16

// linkedAt is where a session was last named, seen from one commit: its value, and how many
// commits back (0: by that commit itself). V is "" when none of the last linkedDepth
// commits names it.
type linkedAt struct {
	V string `json:"v,omitempty"`
	D int    `json:"d,omitempty"`
}

// linkedCache is state/linked.json: commit id to the sessions looked up there, oldest first.
type linkedCache struct {
	Commits []linkedCommit `json:"commits"`
}

type linkedCommit struct {
	ID       string              `json:"id"`
	Sessions map[string]linkedAt `json:"sessions"`
}

func linkedCachePath(home string) string { return filepath.Join(stateDir(home), "linked.json") }

// lastLinked is LastLinked for the repository at workTree, from the cache when it can be.
func (rn *Runner) lastLinked(workTree string, want []string) map[string]string {
	if len(want) == 0 {
		return map[string]string{}
	}
	g, ok := openGitDirs(workTree)
	if !ok {
		return LastLinked(workTree, want)
	}
	head, ok := g.head()
	if !ok {
		return LastLinked(workTree, want)
	}
	if head == "" {
		return map[string]string{} // no commit yet
	}
	cache := readLinkedCache(rn.home())
	at, ok := cache.lookup(head, want)
	if !ok {
		if at, ok = cache.step(g, head, want); !ok {
			if at, ok = lastLinkedGit(workTree, want); !ok {
				return map[string]string{}
			}
		}
		cache.put(head, at)
		_ = cache.write(rn.home())
	}
	out := map[string]string{}
	for id, a := range at {
		if a.V != "" {
			out[id] = a.V
		}
	}
	return out
}

func readLinkedCache(home string) *linkedCache {
	c := &linkedCache{}
	if data, err := os.ReadFile(linkedCachePath(home)); err == nil {
		if json.Unmarshal(data, c) != nil {
			c = &linkedCache{}
		}
	}
	return c
}

func (c *linkedCache) write(home string) error {
	if _, err := os.Stat(stateDir(home)); err != nil {
		return err // no state directory: no store to keep a cache in
	}
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	// A cache: a lost write costs one git log later, so no fsync.
	return repo.WriteFileAtomic(linkedCachePath(home), append(data, '\n'), repo.FilePerm, false)
}

// lookup is the answer kept for commit id, if it covers every session of want.
func (c *linkedCache) lookup(id string, want []string) (map[string]linkedAt, bool) {
	for _, e := range c.Commits {
		if e.ID != id {
			continue
		}
		out := map[string]linkedAt{}
		for _, s := range want {
			a, ok := e.Sessions[s]
			if !ok {
				return nil, false
			}
			out[s] = a
		}
		return out, true
	}
	return nil, false
}

// put keeps the answer for commit id, the newest last, and forgets the oldest.
func (c *linkedCache) put(id string, at map[string]linkedAt) {
	c.Commits = slices.DeleteFunc(c.Commits, func(e linkedCommit) bool { return e.ID == id })
	c.Commits = append(c.Commits, linkedCommit{ID: id, Sessions: at})
	if n := len(c.Commits) - linkedKeep; n > 0 {
		c.Commits = c.Commits[n:]
	}
}

// step answers for commit head from its parent's answer and head's own trailers; ok is
// false when it cannot be sure.
func (c *linkedCache) step(g gitDirs, head string, want []string) (map[string]linkedAt, bool) {
	parents, msg, ok := g.readCommit(head)
	if !ok || len(parents) > 1 {
		return nil, false
	}
	named, ok := namedBy(msg)
	if !ok {
		return nil, false
	}
	var prev map[string]linkedAt
	if len(parents) == 1 {
		if prev, ok = c.lookup(parents[0], want); !ok {
			return nil, false
		}
	}
	out := map[string]linkedAt{}
	for _, s := range want {
		switch p := prev[s]; {
		case named[s] != "":
			out[s] = linkedAt{V: named[s]}
		case p.V != "" && p.D+1 < linkedDepth:
			out[s] = linkedAt{V: p.V, D: p.D + 1}
		default:
			out[s] = linkedAt{}
		}
	}
	return out, true
}

// namedBy returns the sessions a commit message names in Ckpt-Checkpoint trailers (the
// first value of each), as git's %(trailers) reads them; ok is false when the message
// mentions the key anywhere else, where git's reading and ours could differ.
func namedBy(msg string) (map[string]string, bool) {
	named := map[string]string{}
	mentions := strings.Count(strings.ToLower(msg), strings.ToLower(checkpoint.KeyCheckpoint))
	if mentions == 0 {
		return named, true
	}
	n := 0
	for _, t := range trailer.Parse(msg) {
		if !strings.EqualFold(t.Key, checkpoint.KeyCheckpoint) {
			continue
		}
		n++
		for _, v := range strings.Fields(t.Value) {
			if id, _, ok := strings.Cut(v, "@"); ok && named[id] == "" {
				named[id] = v
			}
		}
	}
	return named, n == mentions
}

// lastLinkedGit asks git log, and says how far back each session of want was named; ok is
// false when git failed.
func lastLinkedGit(workTree string, want []string) (map[string]linkedAt, bool) {
	at := map[string]linkedAt{}
	cmd := exec.Command("git", "log", "-n", fmt.Sprint(linkedDepth), "--format=%(trailers:key="+checkpoint.KeyCheckpoint+",valueonly,separator=%x20)")
	cmd.Dir = workTree
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, false
	}
	if err := cmd.Start(); err != nil {
		return nil, false
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	found := 0
	for d := 0; found < len(want) && sc.Scan(); d++ { // one line per commit, newest first
		for _, v := range strings.Fields(sc.Text()) {
			id, _, ok := strings.Cut(v, "@")
			if _, seen := at[id]; ok && !seen && slices.Contains(want, id) {
				at[id] = linkedAt{V: v, D: d}
				found++
			}
		}
	}
	if found == len(want) {
		_ = cmd.Process.Kill() // the rest of the history cannot change the answer
		_ = cmd.Wait()
		return at, true
	}
	if sc.Err() != nil {
		// A line past the buffer (a commit with megabytes of trailers): the scan stopped
		// with git still writing; no answer, and git must not be left blocked on the pipe.
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, false
	}
	if err := cmd.Wait(); err != nil {
		return nil, false
	}
	for _, s := range want {
		if _, ok := at[s]; !ok {
			at[s] = linkedAt{}
		}
	}
	return at, true
}

// gitDirs are a work tree's git directory and the repository's common directory (the same
// but for a linked worktree).
type gitDirs struct{ git, common string }

// openGitDirs finds them as git would without any GIT_* variable that moves them; ok is
// false for anything the cache should leave to git (those variables, refs in a reftable,
// replaced commits, grafts).
func openGitDirs(workTree string) (gitDirs, bool) {
	for _, v := range []string{"GIT_DIR", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY", "GIT_REPLACE_REF_BASE", "GIT_GRAFT_FILE"} {
		if os.Getenv(v) != "" {
			return gitDirs{}, false
		}
	}
	dot := filepath.Join(workTree, ".git")
	fi, err := os.Lstat(dot)
	if err != nil {
		return gitDirs{}, false
	}
	g := gitDirs{git: dot}
	if fi.Mode().IsRegular() {
		b, err := os.ReadFile(dot)
		dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
		if err != nil || !ok {
			return gitDirs{}, false
		}
		if g.git = strings.TrimSpace(dir); !filepath.IsAbs(g.git) {
			g.git = filepath.Join(workTree, g.git)
		}
	} else if !fi.IsDir() {
		return gitDirs{}, false
	}
	g.common = g.git
	if b, err := os.ReadFile(filepath.Join(g.git, "commondir")); err == nil {
		if g.common = strings.TrimSpace(string(b)); !filepath.IsAbs(g.common) {
			g.common = filepath.Join(g.git, g.common)
		}
	}
	for _, p := range []string{"reftable", filepath.Join("refs", "replace"), filepath.Join("info", "grafts")} {
		if _, err := os.Lstat(filepath.Join(g.common, p)); err == nil {
			return gitDirs{}, false
		}
	}
	return g, true
}

// head is the commit HEAD names ("" on an unborn branch); ok is false when it is not a
// branch or a commit id read from files.
func (g gitDirs) head() (string, bool) {
	b, err := os.ReadFile(filepath.Join(g.git, "HEAD"))
	if err != nil {
		return "", false
	}
	h := strings.TrimSpace(string(b))
	ref, sym := strings.CutPrefix(h, "ref:")
	if !sym {
		return h, isObjectID(h)
	}
	ref = strings.TrimSpace(ref)
	if !strings.HasPrefix(ref, "refs/heads/") || strings.Contains(ref, "..") {
		return "", false
	}
	if b, err := os.ReadFile(filepath.Join(g.common, filepath.FromSlash(ref))); err == nil {
		id := strings.TrimSpace(string(b))
		return id, isObjectID(id)
	} else if !os.IsNotExist(err) {
		return "", false
	}
	packed, err := os.ReadFile(filepath.Join(g.common, "packed-refs"))
	if os.IsNotExist(err) {
		return "", true // unborn
	}
	if err != nil {
		return "", false
	}
	for l := range strings.SplitSeq(string(packed), "\n") {
		if id, name, ok := strings.Cut(l, " "); ok && name == ref {
			return id, isObjectID(id)
		}
	}
	return "", true
}

func isObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// maxCommitObject bounds a commit read from a loose object.
const maxCommitObject = 1 << 20

// readCommit reads a commit's parents and message from its loose object; ok is false when
// it is not loose (packed) or not a commit.
func (g gitDirs) readCommit(id string) (parents []string, msg string, ok bool) {
	f, err := os.Open(filepath.Join(g.common, "objects", id[:2], id[2:]))
	if err != nil {
		return nil, "", false
	}
	defer f.Close()
	zr, err := zlib.NewReader(f)
	if err != nil {
		return nil, "", false
	}
	defer zr.Close()
	b, err := io.ReadAll(io.LimitReader(zr, maxCommitObject+64))
	if err != nil || len(b) > maxCommitObject {
		return nil, "", false
	}
	hdr, body, ok := bytes.Cut(b, []byte{0})
	if !ok || !bytes.HasPrefix(hdr, []byte("commit ")) || fmt.Sprint(len(body)) != string(hdr[len("commit "):]) {
		return nil, "", false
	}
	headers, message, _ := bytes.Cut(body, []byte("\n\n"))
	for l := range strings.SplitSeq(string(headers), "\n") {
		if p, ok := strings.CutPrefix(l, "parent "); ok {
			if !isObjectID(p) {
				return nil, "", false
			}
			parents = append(parents, p)
		}
		if strings.HasPrefix(l, "encoding ") {
			return nil, "", false // git would re-encode the message
		}
	}
	return parents, string(message), true
}
