package history

import (
	"os"
	"path/filepath"
	"time"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/repo"
	ckptsync "github.com/ckpt-dev/ckpt/sync"
)

// source is every call history makes into repo, in one place: when repo's API changes,
// this file adapts and the rest of the package does not.
type source struct {
	store *repo.Store
	r     *repo.Repo
	// packs is the modification time of objects/pack when the readers were made: a pack
	// written or removed since (an automatic pack, gc) makes them stale.
	packs time.Time
	// commits and trees remember what was read: commits are immutable, and decoding one
	// through go-git costs tens of microseconds, which a walk of 10,000 would pay on every
	// call otherwise. trees maps a commit to its files' blobs.
	commits map[repo.Hash]*repo.CommitInfo
	trees   map[repo.Hash]map[string]repo.Hash
}

// maxCached bounds the commits a source remembers (about 300 bytes each).
const maxCached = 100000

func openSource(st *repo.Store, id repo.SessionID) (*source, error) {
	r, err := st.Open(id)
	if err != nil {
		return nil, err
	}
	s := &source{store: st, r: r, commits: map[repo.Hash]*repo.CommitInfo{}, trees: map[repo.Hash]map[string]repo.Hash{}}
	s.packs = s.packStamp()
	return s, nil
}

func openKnowledgeSource(st *repo.Store) (*source, error) {
	r, err := st.OpenKnowledge()
	if err != nil {
		return nil, err
	}
	s := &source{store: st, r: r, commits: map[repo.Hash]*repo.CommitInfo{}, trees: map[repo.Hash]map[string]repo.Hash{}}
	s.packs = s.packStamp()
	return s, nil
}

func (s *source) packStamp() time.Time {
	fi, err := os.Stat(filepath.Join(s.r.GitDir, "objects", "pack"))
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// refresh drops cached readers when the packs changed.
func (s *source) refresh() {
	if p := s.packStamp(); !p.Equal(s.packs) {
		s.r.Reset()
		s.packs = p
	}
}

// lock takes the repository's shared lock.
func (s *source) lock() (repo.Unlock, error) { return s.store.Lock(s.r.LockName, false) }

func (s *source) id() string       { return s.r.ID }
func (s *source) template() string { return s.r.Template() }
func (s *source) dir() string      { return s.r.Dir }
func (s *source) workDir() string  { return s.r.WorkDir }

func (s *source) head() (repo.Hash, error)              { return s.r.Head() }
func (s *source) resolve(rev string) (repo.Hash, error) { return s.r.Resolve(rev) }

// files maps each file of commit h to its blob (the map is shared: do not change it).
func (s *source) files(h repo.Hash) (map[string]repo.Hash, error) {
	if f, ok := s.trees[h]; ok {
		return f, nil
	}
	f, err := s.r.FileHashes(h)
	if err != nil {
		return nil, err
	}
	if len(s.trees) >= maxCached {
		clear(s.trees)
	}
	s.trees[h] = f
	return f, nil
}
func (s *source) blob(h repo.Hash) ([]byte, error) { return s.r.Blob(h) }
func (s *source) readFile(h repo.Hash, name string) ([]byte, error) {
	if err := repo.ValidFileName(name); err != nil {
		return nil, err
	}
	return s.r.ReadFile(h, name)
}

// commit reads one commit.
func (s *source) commit(h repo.Hash) (repo.CommitInfo, error) {
	if c := s.commits[h]; c != nil {
		return *c, nil
	}
	c, err := s.r.CommitInfo(h)
	if err != nil {
		return c, err
	}
	if len(s.commits) >= maxCached {
		clear(s.commits)
	}
	s.commits[h] = &c
	return c, nil
}

// walk visits first parents from start, newest first, until fn returns false.
func (s *source) walk(start repo.Hash, fn func(repo.CommitInfo) bool) error {
	for h := start; h != repo.ZeroHash; {
		c, err := s.commit(h)
		if err != nil {
			return err
		}
		if !fn(c) || len(c.Parents) == 0 {
			return nil
		}
		h = c.Parents[0]
	}
	return nil
}

// fileBlob is the blob of one file of a commit (ZeroHash when the commit lacks it).
func (s *source) fileBlob(h repo.Hash, name string) (repo.Hash, error) {
	files, err := s.files(h)
	if err != nil {
		return repo.ZeroHash, err
	}
	return files[name], nil
}

// pendingNotes counts the entries waiting in notes.md.
func (s *source) pendingNotes(svc *checkpoint.Service) (int, error) {
	return ckptsync.New(svc).PendingNotes(s.r)
}

// rejected lists the rejected writes, newest first: ref name (rejected/N) and commit.
func (s *source) rejected() ([]repo.RefInfo, error) { return s.r.Rejected() }
