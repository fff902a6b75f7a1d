package repo

// The narrow views of a repository that callers ask for, the narrowest they need (as
// git-bug's repository package offers them). *Repo implements every one; Memory, a
// repository held in memory, implements them for the unit tests of the layers above.

// HistoryReader reads a repository's history.
type HistoryReader interface {
	Head() (Hash, error)
	Resolve(rev string) (Hash, error)
	Log(start Hash, fn func(CommitInfo) bool) error
	CommitInfo(h Hash) (CommitInfo, error)
	Files(h Hash) (map[string][]byte, error)
	ReadFile(h Hash, name string) ([]byte, error)
	FileHashes(h Hash) (map[string]Hash, error)
	Blob(h Hash) ([]byte, error)
	IsAncestor(a, b Hash) (bool, error)
	MergeBase(a, b Hash) (Hash, error)
}

// Committer makes commits on main (Prepare, then Apply or Undo, when two repositories move
// together; Commit for one) and keeps rejected writes beside it.
type Committer interface {
	Prepare(req CommitRequest) (*Prepared, error)
	Commit(req CommitRequest) (Hash, bool, error)
	Reject(files map[string][]byte, message string) (string, Hash, error)
	Rejected() ([]RefInfo, error)
}

// RefStore reads and moves refs.
type RefStore interface {
	Ref(name string) (Hash, error)
	Refs(prefix string) (map[string]Hash, error)
	SetRef(name string, h Hash) error
}

// Locker runs fn while holding the repository's lock: exclusive for writers, shared for
// readers. A lock another process holds past the store's LockTimeout is ErrBusy, and fn
// does not run.
type Locker interface {
	WithWriteLock(fn func() error) error
	WithReadLock(fn func() error) error
}

// Repository is every view at once.
type Repository interface {
	HistoryReader
	Committer
	RefStore
	Locker
}

var (
	_ Repository = (*Repo)(nil)
	_ Repository = (*Memory)(nil)
)

// WithWriteLock runs fn holding the repository's exclusive lock (Store.Lock).
func (r *Repo) WithWriteLock(fn func() error) error { return r.store.WithLock(r.LockName, true, fn) }

// WithReadLock runs fn holding the repository's shared lock.
func (r *Repo) WithReadLock(fn func() error) error { return r.store.WithLock(r.LockName, false, fn) }

// WithLock runs fn holding the lock name (a session id, or KnowledgeLock), as Lock takes it.
func (st *Store) WithLock(name string, exclusive bool, fn func() error) error {
	unlock, err := st.Lock(name, exclusive)
	if err != nil {
		return err
	}
	defer unlock()
	return fn()
}
