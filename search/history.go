package search

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/ckpt-dev/ckpt/repo"
)

// indexPath is where the index of a repository lives: under state/, which is never
// versioned, because the index is only a cache of what git holds.
func indexPath(st *repo.Store, t target) string {
	if t.knowledge {
		return filepath.Join(st.StateDir(), "search", "knowledge.idx")
	}
	return filepath.Join(st.StateDir(), "search", "sessions", t.id+".idx")
}

// key sums up what the section ids of an index depend on besides git: the heading levels
// the files were split at. An index built with other levels is rebuilt.
func (l *layout) key() int {
	return l.levels[kindCheckpoint] | l.levels[kindKnowledge]<<8 | l.levels[kindMemory]<<16
}

// updateStats says what bringing one index up to date did.
type updateStats struct {
	rebuilt bool // built from nothing (no index, a damaged one, or history rewritten)
	commits int  // commits indexed now
	lines   int  // lines indexed now
	bytes   int  // size of the index file
}

// freshIndex returns the index of r covering head (its current head), reading the index
// file and, when the head moved, indexing only the commits since. It takes no lock: git
// objects are immutable and the ref is replaced atomically, and the index file is replaced
// atomically, so concurrent searches at worst index the same commits twice. The caller
// closes the index.
func freshIndex(st *repo.Store, t target, r *repo.Repo, l *layout, head repo.Hash, sc *scratch) (*index, updateStats, error) {
	path := indexPath(st, t)
	old, err := openIndex(path, &sc.index, &sc.rest)
	if err != nil {
		old = nil // damaged, unreadable or from another version: rebuilt below
	}
	if old != nil && old.head == head && old.level == l.key() {
		return old, updateStats{bytes: headerSize + old.foldedLen + old.restLen()}, nil
	}
	if old != nil {
		err := old.loadRest()
		old.close()
		if err != nil {
			old = nil
		}
	}
	b, stats, err := update(r, l, old, head)
	if err != nil {
		// A pack rewritten under us can fail a read; the objects are still there.
		r.Reset()
		b, stats, err = update(r, l, old, head)
	}
	if err != nil {
		return nil, stats, fmt.Errorf("index %s: %w", t.id, err)
	}
	data, err := b.bytes(head)
	if err != nil {
		return nil, stats, fmt.Errorf("index %s: %w", t.id, err)
	}
	// No fsync: a torn or empty file after a crash fails its checksum and is rebuilt. A
	// store we cannot write to (a read-only copy) is still searched, from memory.
	if err := os.MkdirAll(filepath.Dir(path), repo.DirPerm); err == nil {
		_ = repo.WriteFileAtomic(path, data, repo.FilePerm, false)
	}
	stats.bytes = len(data)
	ix, err := parseIndex(data)
	return ix, stats, err
}

// update indexes the commits reachable from head that old does not hold. When old's head
// is not among them (history was rewritten) or old is missing, everything is indexed anew.
func update(r *repo.Repo, l *layout, old *index, head repo.Hash) (*builder, updateStats, error) {
	var stats updateStats
	var b *builder
	var commits []repo.CommitInfo
	if old != nil && old.level == l.key() {
		b = builderFrom(old)
		var reached bool
		var err error
		commits, reached, err = newCommits(r, head, b.known, old.head)
		if err != nil {
			return nil, stats, err
		}
		if !reached {
			b = nil
		}
	}
	if b == nil {
		stats.rebuilt = true
		b = newBuilder(l.key())
		var err error
		commits, _, err = newCommits(r, head, b.known, repo.ZeroHash)
		if err != nil {
			return nil, stats, err
		}
	}
	gens := generations(commits, b.known)
	cache := fileCache{r: r}
	for _, ci := range commits {
		files, err := cache.files(ci.Hash)
		if err != nil {
			return nil, stats, err
		}
		var parent map[string][]byte
		if len(ci.Parents) > 0 {
			if parent, err = cache.files(ci.Parents[0]); err != nil {
				return nil, stats, err
			}
		}
		idx := b.addCommit(ci.Hash, ci.When, gens[ci.Hash])
		stats.commits++
		names := make([]string, 0, len(files))
		for name := range files {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			cur := files[name]
			if bytes.Equal(cur, parent[name]) {
				continue
			}
			var secs *sectionMap
			introduced(parent[name], cur, func(line int, text []byte) {
				if secs == nil {
					m := l.sectionsOf(name, cur)
					secs = &m
				}
				b.addLine(idx, name, secs.at(line), line, text)
				stats.lines++
			})
		}
	}
	return b, stats, nil
}

// newCommits walks from head towards the root, stopping at commits already indexed, and
// returns the others, first parents first (so a commit's parent is usually the next one,
// whose files are then already read). reached says whether the walk met stop. Since every
// indexed commit is an ancestor of stop, the walk meets stop exactly when stop is an
// ancestor of head.
func newCommits(r *repo.Repo, head repo.Hash, known map[repo.Hash]commitRef, stop repo.Hash) ([]repo.CommitInfo, bool, error) {
	var out []repo.CommitInfo
	reached := false
	seen := map[repo.Hash]bool{}
	stack := []repo.Hash{head}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if h == repo.ZeroHash || seen[h] {
			continue
		}
		seen[h] = true
		if h == stop {
			reached = true
		}
		if _, ok := known[h]; ok {
			continue
		}
		ci, err := r.CommitInfo(h)
		if err != nil {
			return nil, false, err
		}
		out = append(out, ci)
		for i := len(ci.Parents) - 1; i >= 0; i-- {
			stack = append(stack, ci.Parents[i])
		}
	}
	return out, reached, nil
}

// generations numbers the new commits: 1 + the largest number of their parents.
func generations(commits []repo.CommitInfo, known map[repo.Hash]commitRef) map[repo.Hash]uint32 {
	byHash := make(map[repo.Hash]*repo.CommitInfo, len(commits))
	for i := range commits {
		byHash[commits[i].Hash] = &commits[i]
	}
	gen := make(map[repo.Hash]uint32, len(commits))
	// Iterative post-order: a long history would otherwise recurse once per commit.
	for i := range commits {
		stack := []repo.Hash{commits[i].Hash}
		for len(stack) > 0 {
			h := stack[len(stack)-1]
			if _, ok := gen[h]; ok {
				stack = stack[:len(stack)-1]
				continue
			}
			ci := byHash[h]
			var g uint32
			ready := true
			for _, p := range ci.Parents {
				if ref, ok := known[p]; ok {
					g = max(g, ref.gen)
				} else if pg, ok := gen[p]; ok {
					g = max(g, pg)
				} else if byHash[p] != nil {
					stack = append(stack, p)
					ready = false
				}
			}
			if ready {
				gen[h] = g + 1
				stack = stack[:len(stack)-1]
			}
		}
	}
	return gen
}

// fileCache keeps the files of the last few commits read: indexing a commit needs its own
// files and its parent's, and the parent is usually the next commit indexed.
type fileCache struct {
	r     *repo.Repo
	order []repo.Hash
	m     map[repo.Hash]map[string][]byte
}

func (c *fileCache) files(h repo.Hash) (map[string][]byte, error) {
	if f, ok := c.m[h]; ok {
		return f, nil
	}
	f, err := c.r.Files(h)
	if err != nil {
		return nil, err
	}
	if c.m == nil {
		c.m = map[repo.Hash]map[string][]byte{}
	}
	if len(c.order) == 4 {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
	c.order = append(c.order, h)
	c.m[h] = f
	return f, nil
}

// introduced calls fn for every non-blank line of cur that old lacks, counting lines as a
// multiset: a line old holds twice is new in cur the third time it appears. Line numbers
// are 1-based; "\r" line endings are dropped.
func introduced(old, cur []byte, fn func(line int, text []byte)) {
	have := map[string]int{}
	eachLine(old, func(_ int, l []byte) { have[string(l)]++ })
	eachLine(cur, func(n int, l []byte) {
		if len(bytes.TrimSpace(l)) == 0 {
			return
		}
		if have[string(l)] > 0 {
			have[string(l)]--
			return
		}
		fn(n, l)
	})
}

func eachLine(b []byte, fn func(n int, line []byte)) {
	for n := 1; len(b) > 0; n++ {
		l := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			l, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		fn(n, bytes.TrimSuffix(l, []byte{'\r'}))
	}
}
