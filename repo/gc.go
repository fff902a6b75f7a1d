package repo

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// SquashOptions say which history gc may rewrite.
type SquashOptions struct {
	// OlderThan: only sparse checkpoints committed before this time are squashed.
	OlderThan time.Time
	// Pushed are commits a remote has; their history is left alone unless Force.
	Pushed []Hash
	Force  bool
	// DryRun reports what would be squashed without writing anything.
	DryRun bool
}

// SquashRun is one run of consecutive sparse checkpoints squashed into one commit.
type SquashRun struct {
	First, Last Hash
	Count       int
	From, To    time.Time
}

// SquashReport says what gc did.
type SquashReport struct {
	Before, After Hash
	Runs          []SquashRun
	// Rewritten is the number of commits recreated (squashed runs and the commits after
	// them, which get new parents).
	Rewritten int
	// RewrotePushed is true when Force let gc rewrite history a remote has.
	RewrotePushed bool
	// Kept is the number of commits gc could not touch because a remote has them.
	Kept int
}

// Squash rewrites the first-parent history of main so that each run of two or more
// consecutive sparse checkpoints older than o.OlderThan becomes one commit (the last one's
// files, the run's sections and times in its message). Full, manual, merge and every other
// checkpoint is kept, with new parents. History a remote has (reachable from o.Pushed) is
// kept as it is unless o.Force. Then the repository is repacked. The caller holds the
// exclusive lock.
func (r *Repo) Squash(o SquashOptions) (SquashReport, error) {
	var rep SquashReport
	head, err := r.Head()
	if err != nil || head == ZeroHash {
		return rep, err
	}
	rep.Before, rep.After = head, head
	g := r.reader()
	var chain []*object.Commit // oldest first
	for h := head; h != ZeroHash; {
		c, err := g.commit(h)
		if err != nil {
			return rep, err
		}
		chain = append(chain, c)
		if len(c.ParentHashes) == 0 {
			break
		}
		h = c.ParentHashes[0]
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	// Commits up to the last one a remote has stay as they are.
	start := 0
	if len(o.Pushed) > 0 {
		pushed := map[Hash]bool{}
		for _, p := range o.Pushed {
			if err := r.ancestors(p, pushed); err != nil {
				return rep, err
			}
		}
		for i, c := range chain {
			if pushed[c.Hash] {
				start = i + 1
			}
		}
		if o.Force {
			rep.RewrotePushed = start > 0
			start = 0
		} else {
			rep.Kept = start
		}
	}
	squashable := func(c *object.Commit) bool {
		return len(c.ParentHashes) <= 1 && c.Committer.When.Before(o.OlderThan) &&
			strings.EqualFold(trailerValue(c.Message, "Ckpt-Trigger"), "sparse")
	}
	// Plan: groups of chain indexes; a group of more than one commit is squashed.
	var groups [][]int
	for i := start; i < len(chain); i++ {
		if n := len(groups); n > 0 && squashable(chain[i]) {
			last := groups[n-1]
			if squashable(chain[last[len(last)-1]]) && last[len(last)-1] == i-1 {
				groups[n-1] = append(last, i)
				continue
			}
		}
		groups = append(groups, []int{i})
	}
	firstChange := -1
	for gi, grp := range groups {
		if len(grp) > 1 {
			first, last := chain[grp[0]], chain[grp[len(grp)-1]]
			rep.Runs = append(rep.Runs, SquashRun{First: first.Hash, Last: last.Hash, Count: len(grp), From: first.Committer.When, To: last.Committer.When})
			if firstChange < 0 {
				firstChange = gi
			}
		}
	}
	if firstChange < 0 || o.DryRun {
		return rep, nil
	}
	ow := newObjectWriter(r.GitDir, r.store.Opts.Fsync)
	parent := ZeroHash
	if first := groups[firstChange][0]; first > 0 {
		parent = chain[first-1].Hash
	}
	for _, grp := range groups[firstChange:] {
		last := chain[grp[len(grp)-1]]
		parents := append([]Hash{}, last.ParentHashes...)
		if len(parents) == 0 {
			parents = nil
		}
		if parent != ZeroHash {
			if len(parents) == 0 {
				parents = []Hash{parent}
			} else {
				parents[0] = parent
			}
		}
		msg := last.Message
		if len(grp) > 1 {
			msg = squashMessage(chain, grp)
		}
		data := encodeCommitSigs(last.TreeHash, parents, last.Author, last.Committer, msg)
		h, err := ow.write(plumbing.CommitObject, data)
		if err != nil {
			return rep, err
		}
		rep.Rewritten += len(grp)
		parent = h
	}
	if err := ow.flush(); err != nil {
		return rep, err
	}
	if err := r.store.updateRef(r.GitDir, refUpdate{name: MainRef, old: head, new: parent, msg: "gc: squash sparse checkpoints"}, r.store.Opts.Author); err != nil {
		return rep, err
	}
	rep.After = parent
	r.Reset()
	return rep, r.repackReachable()
}

func (r *Repo) ancestors(h Hash, seen map[Hash]bool) error {
	g := r.reader()
	stack := []Hash{h}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[x] || !r.has(x) {
			continue
		}
		seen[x] = true
		c, err := g.commit(x)
		if err != nil {
			return err
		}
		stack = append(stack, c.ParentHashes...)
	}
	return nil
}

func trailerValue(msg, key string) string {
	for _, t := range ParseTrailers(msg) {
		if strings.EqualFold(t.Key, key) {
			return t.Value
		}
	}
	return ""
}

func squashMessage(chain []*object.Commit, grp []int) string {
	first, last := chain[grp[0]], chain[grp[len(grp)-1]]
	secs := map[string]bool{}
	for _, i := range grp {
		for _, s := range strings.Split(trailerValue(chain[i].Message, "Ckpt-Sections"), ",") {
			if s = strings.TrimSpace(s); s != "" {
				secs[s] = true
			}
		}
	}
	ids := make([]string, 0, len(secs))
	for s := range secs {
		ids = append(ids, s)
	}
	sort.Strings(ids)
	var b strings.Builder
	fmt.Fprintf(&b, "checkpoint(sparse): %d sparse checkpoints squashed (%s to %s)\n\n", len(grp),
		first.Committer.When.UTC().Format("2006-01-02T15:04Z"), last.Committer.When.UTC().Format("2006-01-02T15:04Z"))
	fmt.Fprintf(&b, "Ckpt-Session: %s\nCkpt-Trigger: sparse\nCkpt-Sections: %s\nCkpt-Squashed: %s\n",
		trailerValue(last.Message, "Ckpt-Session"), strings.Join(ids, ","), strconv.Itoa(len(grp)))
	return b.String()
}

// encodeCommitSigs encodes a commit keeping its original author and committer.
func encodeCommitSigs(tree Hash, parents []Hash, author, committer object.Signature, message string) []byte {
	var b bytes.Buffer
	b.WriteString("tree " + tree.String() + "\n")
	for _, p := range parents {
		b.WriteString("parent " + p.String() + "\n")
	}
	b.WriteString("author " + formatSignature(Signature{author.Name, author.Email}, author.When) + "\n")
	b.WriteString("committer " + formatSignature(Signature{committer.Name, committer.Email}, committer.When) + "\n\n")
	b.WriteString(message)
	if !strings.HasSuffix(message, "\n") {
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// repackReachable writes one pack of everything reachable from the refs (main, rejected
// writes) and drops the rest, with the reflogs that point to it, as git gc does.
func (r *Repo) repackReachable() error {
	s := r.reader().storage
	repo, err := git.Open(s, nil)
	if err != nil {
		return err
	}
	if err := repo.RepackObjects(&git.RepackConfig{}); err != nil {
		return fmt.Errorf("repack %s: %w", r.GitDir, err)
	}
	r.Reset()
	loose, err := r.looseObjects()
	if err != nil {
		return err
	}
	for _, h := range loose {
		_ = os.Remove(r.loosePath(h))
	}
	r.Reset()
	// Reflog entries of rewritten history point to objects that are gone: keep only the
	// last update, as `git reflog expire` would.
	for _, name := range []string{"HEAD", MainRef} {
		p := filepath.Join(r.GitDir, "logs", filepath.FromSlash(name))
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		last := lines[len(lines)-1]
		if f := strings.Fields(last); len(f) > 0 {
			last = ZeroHash.String() + last[len(f[0]):]
		}
		_ = WriteFileAtomic(p, []byte(last+"\n"), 0o644, r.store.Opts.Fsync)
	}
	return nil
}
