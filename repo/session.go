package repo

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-billy/v5/util"
	"github.com/go-git/go-git/v5/config"
	format "github.com/go-git/go-git/v5/plumbing/format/config"
)

// errRepositoryExists refuses to initialise over an existing git directory.
var errRepositoryExists = errors.New("repository already exists")

// KnowledgeLock is the lock name of the knowledge repository. Session ids cannot start with
// a dot, so it never collides with a session's.
const KnowledgeLock = ".knowledge"

// Repo is one ckpt-managed git repository: a session's, or the knowledge repository. Its git
// directory is GitDir; its work tree is WorkDir (the session directory itself, or the
// directory bound with --worktree).
type Repo struct {
	ID      string // session id, or "knowledge"
	Dir     string // <home>/sessions/<id> or <home>/knowledge
	GitDir  string
	WorkDir string
	// Bound is the directory this session was bound to with --worktree, or "".
	Bound string
	// LockName is what Store.Lock takes for this repository.
	LockName string

	store *Store
	cfg   *format.Config
	git   *gitReader
	known knownHead
	// keepPacksOpen keeps pack files open between reads (the transport, read object by
	// object for a thousand sessions); go-git otherwise opens and closes one per object.
	keepPacksOpen bool
	// mirror is a bare repository (the transport) whose reflogs are appended to only where
	// one exists, as git does in a bare repository (core.logAllRefUpdates unset): a push
	// of a thousand sessions would otherwise create two thousand reflog files that nobody
	// reads (PruneMirror drops them).
	mirror bool
}

// Config returns a ckpt.<key> value from the repository's git config.
func (r *Repo) Config(key string) string {
	return r.cfg.Section("ckpt").Option(key)
}

// Template is the checkpoint template the session was created with.
func (r *Repo) Template() string { return r.Config("template") }

// InitOptions say how to create a repository.
type InitOptions struct {
	// Files are written to the work tree, except that a file that already exists in a bound
	// work tree is kept as it is (and committed).
	Files map[string][]byte
	// Worktree binds the session to this existing directory; "" keeps the work tree in the store.
	Worktree string
	// Config is written as ckpt.<key> = value in the repository's git config.
	Config map[string]string
	// Message of the first commit.
	Message string
}

// Init creates session id and makes its first commit. An existing session is ErrExists and
// is left alone. The repository is built in a temporary directory and renamed into place,
// so a crash never leaves a half-made session under its real name.
func (st *Store) Init(id SessionID, o InitOptions) (*Repo, Hash, error) {
	unlock, err := st.Lock(string(id), true)
	if err != nil {
		return nil, ZeroHash, err
	}
	defer unlock()
	dir := st.SessionDir(id)
	if _, err := os.Stat(dir); err == nil {
		return nil, ZeroHash, fmt.Errorf("%s: %w", dir, ErrExists)
	}
	if o.Worktree != "" {
		if err := st.checkWorktree(o.Worktree); err != nil {
			return nil, ZeroHash, err
		}
	}
	r, h, err := st.create(dir, string(id), string(id), o)
	if err != nil {
		return nil, ZeroHash, err
	}
	return r, h, nil
}

// InitKnowledge creates the knowledge repository if it does not exist and returns it. files
// are written where missing: a knowledge directory the user filled by hand (a MEMORY.md put
// there before any sync) becomes the repository's work tree, its files committed as they
// are. The caller holds KnowledgeLock.
func (st *Store) InitKnowledge(files map[string][]byte) (*Repo, Hash, error) {
	dir := st.KnowledgeDir()
	if r, err := st.openDir(dir, "knowledge"); err == nil {
		return r, ZeroHash, nil
	}
	o := InitOptions{Files: files, Message: "knowledge: start the knowledge graph\n"}
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		o.Worktree = dir // adopt: build the repository in place
	}
	return st.create(dir, "knowledge", KnowledgeLock, o)
}

func (st *Store) create(dir, id, lockName string, o InitOptions) (*Repo, Hash, error) {
	spec := repoSpec{head: MainRef, ckpt: o.Config, id: id}
	if o.Worktree != "" {
		abs, err := filepath.Abs(o.Worktree)
		if err != nil {
			return nil, ZeroHash, err
		}
		if filepath.Clean(abs) == filepath.Clean(dir) {
			spec.inPlace = true // adopt: the repository is built in the directory itself
		} else {
			if err := os.MkdirAll(abs, 0o755); err != nil {
				return nil, ZeroHash, fmt.Errorf("worktree %s: %w", abs, err)
			}
			spec.worktree = abs
		}
	}
	var h Hash
	err := st.makeRepo(dir, spec, func(r *Repo) error {
		names := make([]string, 0, len(o.Files))
		for name := range o.Files {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			p := filepath.Join(r.WorkDir, name)
			if o.Files[name] == nil {
				continue
			}
			if spec.worktree != "" || spec.inPlace {
				if _, err := os.Stat(p); err == nil {
					continue // the harness's file is committed as it is
				}
			}
			if err := WriteFileAtomic(p, o.Files[name], FilePerm, st.Opts.Fsync); err != nil {
				return fmt.Errorf("create %s: %w", p, err)
			}
		}
		files, err := r.WorkFiles()
		if err != nil {
			return err
		}
		h, _, err = r.commit(CommitRequest{Files: files, Message: o.Message, Trigger: "init"}, false)
		return err
	})
	if err != nil {
		return nil, ZeroHash, err
	}
	r, err := st.openDir(dir, id)
	if err != nil {
		return nil, ZeroHash, err
	}
	r.LockName = lockName
	return r, h, nil
}

// repoSpec says what makeRepo creates.
type repoSpec struct {
	id string
	// head is the branch HEAD names.
	head string
	// bare makes a repository without work tree (the transport); else the git directory is
	// <dir>/.git and the work tree dir itself, or worktree when set (core.worktree).
	bare     bool
	worktree string
	// ckpt are the ckpt.<key> options of the config ([ckpt] id is the repository's id).
	ckpt map[string]string
	// inPlace builds the repository in dir itself, which exists (the knowledge directory a
	// user filled by hand).
	inPlace bool
	// shared is set for a repository that two processes may create at once (the transport,
	// created before its lock is taken): each builds its own temporary directory, and the
	// one whose rename comes second drops its own.
	shared bool
}

// makeRepo creates the repository dir the way every ckpt repository is made: go-git
// initialises the git directory (layout, HEAD, a config written by go-git's config types)
// in a temporary directory beside dir; fill, when not nil, completes it there (a first
// commit, a copied history) with the repository opened at the temporary place; then the
// directory is made durable and renamed into place. A crash leaves the temporary directory
// (removed by the next attempt), never a half-made repository under its real name.
func (st *Store) makeRepo(dir string, spec repoSpec, fill func(*Repo) error) (err error) {
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, DirPerm); err != nil {
		return fmt.Errorf("create %s: %w", parent, err)
	}
	tmp := filepath.Join(parent, ".init-"+filepath.Base(dir))
	switch {
	case spec.inPlace:
		tmp = dir
	case spec.shared:
		if tmp, err = os.MkdirTemp(parent, ".init-"+filepath.Base(dir)+"-"); err != nil {
			return fmt.Errorf("create %s: %w", dir, err)
		}
	default:
		_ = os.RemoveAll(tmp) // left by a crash during an earlier attempt
	}
	if !spec.inPlace {
		// Refused history (Copy checks it) leaves nothing behind, not even tmp.
		defer func() {
			if err != nil {
				_ = os.RemoveAll(tmp)
			}
		}()
	}
	gitDir := tmp
	if !spec.bare {
		gitDir = filepath.Join(tmp, ".git")
	}
	if err := st.initGitDir(gitDir, spec); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if fill != nil {
		r, err := st.openDir(tmp, spec.id) // fill is for repositories with a work tree
		if err != nil {
			return err
		}
		if err := fill(r); err != nil {
			return err
		}
	}
	if st.Opts.Fsync {
		for _, d := range []string{filepath.Join(gitDir, "refs"), gitDir, tmp} {
			if err := syncDir(d); err != nil {
				return err
			}
		}
	}
	if spec.inPlace {
		return nil
	}
	if err := os.Rename(tmp, dir); err != nil {
		if spec.shared && exists(filepath.Join(dir, "HEAD")) {
			_ = os.RemoveAll(tmp) // made meanwhile by another process: theirs stays
			return nil
		}
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if st.Opts.Fsync {
		return syncDir(parent)
	}
	return nil
}

// initGitDir creates a git directory: objects/, objects/pack/, refs/heads/, HEAD naming
// spec.head and a config with core and ckpt options, written through go-git's config
// types; then info/exclude and description for a work tree's. It makes the layout itself
// rather than through go-git's storage Init, which also makes objects/info and refs/tags
// (neither git nor go-git needs them) and stats each directory first: a clone makes a
// thousand repositories, and directories are what costs most to create.
func (st *Store) initGitDir(gitDir string, spec repoSpec) error {
	fsys := newGitFS(gitDir, st.Opts.Fsync)
	if err := os.MkdirAll(gitDir, DirPerm); err != nil {
		return err
	}
	dirs := []string{"objects", "objects/pack", "refs", "refs/heads"}
	if !spec.bare {
		dirs = append(dirs, "info")
	}
	for _, d := range dirs {
		if err := os.Mkdir(filepath.Join(gitDir, filepath.FromSlash(d)), DirPerm); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	if _, err := os.Lstat(filepath.Join(gitDir, "HEAD")); err == nil && !spec.inPlace {
		return errRepositoryExists
	}
	// (A HEAD left by an adoption a crash cut short is pointed where it belongs.)
	if err := util.WriteFile(fsys, "HEAD", []byte("ref: "+spec.head+"\n"), FilePerm); err != nil {
		return err
	}
	cfg := config.NewConfig()
	if b, err := os.ReadFile(filepath.Join(gitDir, "config")); err == nil {
		if err := cfg.Unmarshal(b); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// Without repositoryformatversion git ignores the rest of [core] (core.worktree too).
	cfg.Core.RepositoryFormatVersion = format.Version_0
	cfg.Core.IsBare = spec.bare
	cfg.Core.Worktree = spec.worktree
	core := cfg.Raw.Section("core")
	core.SetOption("filemode", "true")
	if !spec.bare {
		core.SetOption("logallrefupdates", "true")
	}
	if !spec.bare {
		ck := cfg.Raw.Section("ckpt")
		ck.SetOption("id", spec.id)
		keys := make([]string, 0, len(spec.ckpt))
		for k := range spec.ckpt {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ck.SetOption(k, spec.ckpt[k])
		}
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	b, err := cfg.Marshal()
	if err != nil {
		return err
	}
	if err := util.WriteFile(fsys, "config", b, FilePerm); err != nil {
		return err
	}
	if spec.bare {
		return fsys.syncDirs()
	}
	for name, data := range map[string]string{"description": "ckpt " + spec.id + "\n", "info/exclude": excludeRules} {
		if err := util.WriteFile(fsys, name, []byte(data), FilePerm); err != nil {
			return err
		}
	}
	return fsys.syncDirs()
}

// Open returns an existing session, or ErrNotFound.
func (st *Store) Open(id SessionID) (*Repo, error) {
	r, err := st.openDir(st.SessionDir(id), string(id))
	if err != nil {
		return nil, err
	}
	return r, nil
}

// OpenKnowledge returns the knowledge repository, or ErrNotFound if none was created yet.
func (st *Store) OpenKnowledge() (*Repo, error) {
	return st.openDir(st.KnowledgeDir(), "knowledge")
}

func (st *Store) openDir(dir, id string) (*Repo, error) {
	gitDir := filepath.Join(dir, ".git")
	b, err := os.ReadFile(filepath.Join(gitDir, "config"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	cfg := format.New()
	if err := format.NewDecoder(bytes.NewReader(b)).Decode(cfg); err != nil {
		return nil, fmt.Errorf("%s: bad git config: %w", filepath.Join(gitDir, "config"), err)
	}
	r := &Repo{ID: id, Dir: dir, GitDir: gitDir, WorkDir: dir, LockName: id, store: st, cfg: cfg}
	if id == "knowledge" && dir == st.KnowledgeDir() {
		r.LockName = KnowledgeLock
	}
	if wt := cfg.Section("core").Option("worktree"); wt != "" {
		r.WorkDir, r.Bound = wt, wt
	}
	return r, nil
}

// SetConfig sets ckpt.<key> in the repository's git config (atomically, under config.lock).
func (r *Repo) SetConfig(key, value string) error {
	b, err := os.ReadFile(filepath.Join(r.GitDir, "config"))
	if err != nil {
		return err
	}
	cfg := format.New()
	if err := format.NewDecoder(bytes.NewReader(b)).Decode(cfg); err != nil {
		return err
	}
	if value == "" {
		cfg.Section("ckpt").RemoveOption(key)
	} else {
		cfg.Section("ckpt").SetOption(key, value)
	}
	var buf bytes.Buffer
	if err := format.NewEncoder(&buf).Encode(cfg); err != nil {
		return err
	}
	path := filepath.Join(r.GitDir, "config")
	f, err := createLockFile(path+".lock", r.store.Opts.Now().Add(r.store.Opts.LockTimeout))
	if err != nil {
		return err
	}
	if err := commitLockFile(f, path, buf.Bytes(), r.store.Opts.Fsync); err != nil {
		return err
	}
	r.cfg = cfg
	return nil
}

// HeadOf reads the commit a session's main points to, without opening the repository: one
// ref read, for hooks that must stay fast with a thousand sessions.
func (st *Store) HeadOf(id SessionID) (Hash, error) {
	return readRef(filepath.Join(st.SessionDir(id), ".git"), MainRef)
}

// SessionIDs lists the sessions in the store, sorted. Directories that are not session
// repositories (a crashed init's temporary directory, say) are skipped.
func (st *Store) SessionIDs() ([]SessionID, error) {
	entries, err := os.ReadDir(st.SessionsDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var out []SessionID
	for _, e := range entries {
		id, err := ParseSessionID(e.Name())
		if err != nil || !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(st.SessionsDir(), e.Name(), ".git", "HEAD")); err != nil {
			continue
		}
		out = append(out, id)
	}
	return out, nil
}

// ErrBadWorktree refuses a --worktree that would mix a session's files with another's or
// with the store's own: inside the store (its sessions' repositories, knowledge/, state/,
// templates/, the store itself) or inside a directory another session is bound to.
var ErrBadWorktree = errors.New("not a place for a session's work tree")

// checkWorktree refuses a work tree dir that Init must not bind (ErrBadWorktree). Paths are
// compared after symbolic links are resolved, so a link into the store is refused too.
func (st *Store) checkWorktree(dir string) error {
	wt := realPath(dir)
	home := realPath(st.Home)
	if within(wt, home) {
		sessions := realPath(st.SessionsDir())
		if rel, err := filepath.Rel(sessions, wt); err == nil && within(wt, sessions) && rel != "." {
			id, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
			return fmt.Errorf("%s: %w: inside the repository of session %s", dir, ErrBadWorktree, id)
		}
		return fmt.Errorf("%s: %w: inside the store %s", dir, ErrBadWorktree, st.Home)
	}
	ids, err := st.SessionIDs()
	if err != nil {
		return err
	}
	for _, id := range ids {
		r, err := st.Open(id)
		if err != nil || r.Bound == "" {
			continue
		}
		bound := realPath(r.Bound)
		if wt == bound {
			return fmt.Errorf("%s: %w: already bound to session %s", dir, ErrBadWorktree, id)
		}
		if within(wt, bound) {
			return fmt.Errorf("%s: %w: inside %s, the work tree of session %s", dir, ErrBadWorktree, r.Bound, id)
		}
	}
	return nil
}

// realPath is p made absolute with every symbolic link resolved, as far as p exists.
func realPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	parent := filepath.Dir(abs)
	if parent == abs {
		return abs
	}
	return filepath.Join(realPath(parent), filepath.Base(abs))
}

// within reports whether path p is dir or lies under it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel))
}

// WorkFiles reads the versioned files present in the work tree.
func (r *Repo) WorkFiles() (map[string][]byte, error) {
	entries, err := os.ReadDir(r.WorkDir)
	if err != nil {
		return nil, fmt.Errorf("read work tree %s: %w", r.WorkDir, err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		if !e.Type().IsRegular() || ValidFileName(e.Name()) != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(r.WorkDir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", filepath.Join(r.WorkDir, e.Name()), err)
		}
		out[e.Name()] = b
	}
	return out, nil
}

// ReadWorkFile reads one file of the work tree.
func (r *Repo) ReadWorkFile(name string) ([]byte, error) {
	if err := ValidFileName(name); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(r.WorkDir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", filepath.Join(r.WorkDir, name), ErrNoFile)
	}
	return b, err
}

// WorkPath is the path of a work-tree file.
func (r *Repo) WorkPath(name string) string { return filepath.Join(r.WorkDir, name) }

// Store returns the store the repository belongs to.
func (r *Repo) Store() *Store { return r.store }
