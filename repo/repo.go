// Package repo keeps one git repository per session (and one for the knowledge graph) in a
// store directory, on go-git: go-git encodes every object and its filesystem storage writes
// it (objects.go) through a file system that fsyncs (fsyncfs.go); packs come from go-git's
// encoder and index writer (pack.go), new repositories from its init and config types
// (session.go). What go-git cannot do is a small layer of ckpt's own: refs moved by git's
// `<ref>.lock` compare-and-swap with fsync and a reflog (refs.go), the session lock
// (lock.go), compare-and-swap writes of the work tree (worktree.go). So a kill -9 at any
// moment leaves an ordinary, valid repository in which every commit it reported is present.
//
// Callers take the narrowest interface they need (iface.go); Memory implements them in
// memory for tests. go-git errors stop at this package's boundary: callers compare with the
// sentinels below.
package repo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// Sentinel errors, compared with errors.Is.
var (
	ErrInvalidSession = errors.New("invalid session id")
	ErrNotFound       = errors.New("no such session")
	ErrExists         = errors.New("session already exists")
	ErrBusy           = errors.New("session is busy")
	ErrBadRevision    = errors.New("unknown revision")
	ErrNoFile         = errors.New("no such file")
	ErrInvalidName    = errors.New("not a checkpoint file name")
	// ErrMoved means a ref changed between reading it and updating it: someone else (the
	// git CLI, say) committed meanwhile. Nothing was written.
	ErrMoved = errors.New("ref moved underneath")
)

// Hash is a git object id.
type Hash = plumbing.Hash

// ZeroHash is the hash of nothing: no commit yet.
var ZeroHash = plumbing.ZeroHash

// SessionID is a validated session id.
type SessionID string

// idName reports whether s is 1 to max of A-Z a-z 0-9 . _ - starting with a letter or
// digit: a session id (max 128), a spill file's topic. Checked by hand: the regular
// expression it replaces took longer to compile than a commit takes to hash its files.
func idName(s string, max int) bool {
	if len(s) == 0 || len(s) > max || !isAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// ParseSessionID validates s: [A-Za-z0-9][A-Za-z0-9._-]{0,127}, and a valid git ref
// component (git check-ref-format), because a session travels as the branch
// sessions/<id>: no "..", no trailing ".", no ".lock" suffix in any case (on a
// case-insensitive file system x.LOCK would be the lock file of ref x).
func ParseSessionID(s string) (SessionID, error) {
	if !idName(s, 128) {
		return "", fmt.Errorf("%w %s: want 1 to 128 of A-Z a-z 0-9 . _ - starting with a letter or digit", ErrInvalidSession, shownID(s))
	}
	switch {
	case strings.Contains(s, ".."):
		return "", fmt.Errorf("%w %s: \"..\" cannot be part of a git branch name", ErrInvalidSession, shownID(s))
	case strings.HasSuffix(s, "."):
		return "", fmt.Errorf("%w %s: a git branch name cannot end with \".\"", ErrInvalidSession, shownID(s))
	case strings.HasSuffix(strings.ToLower(s), ".lock"):
		return "", fmt.Errorf("%w %s: a git branch name cannot end with \".lock\"", ErrInvalidSession, shownID(s))
	}
	return SessionID(s), nil
}

// shownID quotes a session id for a message, cut short.
func shownID(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// Signature is an author or committer.
type Signature struct {
	Name  string
	Email string
}

// Options tune a Store. The zero value is not useful; use DefaultOptions.
type Options struct {
	// Fsync makes every object, ref, index and work tree write durable before it is reported.
	Fsync bool
	// LockTimeout bounds the wait for a session lock; past it, ErrBusy.
	LockTimeout time.Duration
	// PackThreshold is the number of loose objects past which a commit packs them.
	PackThreshold int
	// Now is the clock (injected in tests).
	Now func() time.Time
	// Author signs commits.
	Author Signature
}

// DefaultOptions are safe defaults: fsync on, 10 s lock timeout, pack past 1,000 loose
// objects, the wall clock, and the user's name.
func DefaultOptions() Options {
	return Options{
		Fsync:         true,
		LockTimeout:   10 * time.Second,
		PackThreshold: 1000,
		Now:           time.Now,
		Author:        defaultAuthor(),
	}
}

func defaultAuthor() Signature {
	name := loginName()
	if name == "" {
		name = "ckpt"
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return Signature{Name: name, Email: name + "@" + host}
}

// Store is the directory that holds every session repository, the knowledge repository and
// the unversioned state.
type Store struct {
	Home string
	Opts Options
}

// NewStore returns the store rooted at home. Nothing is created until a session is.
func NewStore(home string, opts Options) *Store {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.LockTimeout == 0 {
		opts.LockTimeout = 10 * time.Second
	}
	if opts.Author.Name == "" {
		opts.Author = defaultAuthor()
	}
	return &Store{Home: home, Opts: opts}
}

// SessionsDir is <home>/sessions.
func (st *Store) SessionsDir() string { return filepath.Join(st.Home, "sessions") }

// SessionDir is the directory of one session's repository.
func (st *Store) SessionDir(id SessionID) string { return filepath.Join(st.SessionsDir(), string(id)) }

// StateDir is <home>/state: breaker and trigger state, receipts, locks; never versioned.
func (st *Store) StateDir() string { return filepath.Join(st.Home, "state") }

// KnowledgeDir is the knowledge repository (knowledge-graph.md, MEMORY.md).
func (st *Store) KnowledgeDir() string { return filepath.Join(st.Home, "knowledge") }

// trackedName says which work-tree files a repository versions: any Markdown file at the
// top of its work tree (checkpoint.md, notes.md, checkpoint-<topic>.md, MEMORY.md, an
// agent's memory files such as session-checkpoint.md): ^[A-Za-z0-9_][A-Za-z0-9._+-]{0,124}\.md$.
// Plain ASCII, starting with a letter, digit or "_", so that no name is hidden, an alias of
// .git or a path. Checked by hand, as idName is.
func trackedName(name string) bool {
	stem, ok := strings.CutSuffix(name, ".md")
	if !ok || len(stem) == 0 || len(stem) > 125 || !isAlnum(stem[0]) && stem[0] != '_' {
		return false
	}
	for i := 1; i < len(stem); i++ {
		if c := stem[i]; !isAlnum(c) && !strings.ContainsRune("._+-", rune(c)) {
			return false
		}
	}
	return true
}

// deviceName reports whether name is one Windows keeps for devices, whatever the extension:
// (?i)^(con|prn|aux|nul|com[0-9]|lpt[0-9])\.
func deviceName(name string) bool {
	dev, _, ok := strings.Cut(name, ".")
	if !ok {
		return false
	}
	switch strings.ToLower(dev) {
	case "con", "prn", "aux", "nul":
		return true
	}
	if len(dev) == 4 && dev[3] >= '0' && dev[3] <= '9' {
		switch strings.ToLower(dev[:3]) {
		case "com", "lpt":
			return true
		}
	}
	return false
}

// ownNames are the files ckpt itself writes: another spelling of one (CHECKPOINT.md) would
// be the same file on a case-insensitive file system, so it is refused.
var ownNames = []string{"checkpoint.md", "notes.md", "MEMORY.md", "knowledge-graph.md"}

// ValidFileName reports whether name is a file a session or knowledge repository versions.
func ValidFileName(name string) error {
	for _, own := range ownNames {
		if strings.EqualFold(name, own) && name != own {
			return fmt.Errorf("%w: %q (another spelling of %s)", ErrInvalidName, name, own)
		}
	}
	if !trackedName(name) || deviceName(name) {
		return fmt.Errorf("%w: %q (want a Markdown file name such as checkpoint.md: letters, digits, . _ + -, ending in .md)", ErrInvalidName, name)
	}
	return nil
}

// excludeRules keep `git status` clean in a work tree that holds other files (a harness's
// directory bound with --worktree): only the versioned names are seen.
const excludeRules = `# written by ckpt: only Markdown files are versioned here
/*
!/*.md
`
