package repo

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// MainRef is the branch every session commits to.
const MainRef = "refs/heads/main"

// RejectedPrefix holds one ref per rejected write: refs/ckpt/rejected/<n>.
const RejectedPrefix = "refs/ckpt/rejected/"

// errMalformedRef: a ref file that holds neither a hash nor a symbolic ref.
var errMalformedRef = errors.New("malformed content")

// readRef returns the hash a ref points to: the loose file, else packed-refs. A missing ref
// is ZeroHash with no error. A symbolic ref is followed.
func readRef(gitDir, name string) (Hash, error) {
	for range 5 {
		b, err := readSmall(filepath.Join(gitDir, filepath.FromSlash(name)))
		if errors.Is(err, fs.ErrNotExist) {
			return readPackedRef(gitDir, name)
		}
		if err != nil {
			return ZeroHash, fmt.Errorf("read ref %s: %w", name, err)
		}
		s := strings.TrimSpace(string(b))
		if target, ok := strings.CutPrefix(s, "ref: "); ok {
			name = target
			continue
		}
		if !plumbing.IsHash(s) {
			return ZeroHash, fmt.Errorf("read ref %s: %w: %q", name, errMalformedRef, s)
		}
		return plumbing.NewHash(s), nil
	}
	return ZeroHash, fmt.Errorf("read ref %s: too many symbolic links", name)
}

func readPackedRef(gitDir, name string) (Hash, error) {
	f, err := os.Open(filepath.Join(gitDir, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return ZeroHash, nil
	}
	if err != nil {
		return ZeroHash, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if h, n, ok := strings.Cut(l, " "); ok && n == name && plumbing.IsHash(h) {
			return plumbing.NewHash(h), nil
		}
	}
	return ZeroHash, sc.Err()
}

// refUpdate describes one compare-and-swap of a ref.
type refUpdate struct {
	name string
	old  Hash // ZeroHash: the ref must not exist
	new  Hash
	msg  string // reflog message
	// logExisting appends to the ref's reflog only when there is one (Repo.mirror).
	logExisting bool
}

// updateRef moves a ref from old to new with git's protocol: create <ref>.lock exclusively,
// check the ref still holds old, write, fsync, rename. Git and ckpt therefore never
// interleave, and a crash leaves the old value or the new one, never a torn file.
func (st *Store) updateRef(gitDir string, u refUpdate, who Signature) error {
	path := filepath.Join(gitDir, filepath.FromSlash(u.name))
	f, err := createLockFile(path+".lock", time.Now().Add(st.Opts.LockTimeout))
	if errors.Is(err, fs.ErrNotExist) { // a ref in a directory not made yet
		if err := os.MkdirAll(filepath.Dir(path), DirPerm); err != nil {
			return fmt.Errorf("update %s: %w", u.name, err)
		}
		f, err = createLockFile(path+".lock", time.Now().Add(st.Opts.LockTimeout))
	}
	if err != nil {
		return fmt.Errorf("update %s: %w", u.name, err)
	}
	cur, err := readRef(gitDir, u.name)
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if cur != u.old {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("update %s: %w (expected %s, found %s)", u.name, ErrMoved, short(u.old), short(cur))
	}
	if err := commitLockFile(f, path, []byte(u.new.String()+"\n"), st.Opts.Fsync); err != nil {
		return fmt.Errorf("update %s: %w", u.name, err)
	}
	st.appendReflog(gitDir, u, who)
	return nil
}

// appendReflog records the update for `git reflog`. It is a convenience: a failure here
// never fails the commit.
func (st *Store) appendReflog(gitDir string, u refUpdate, who Signature) {
	var line bytes.Buffer
	line.WriteString(u.old.String() + " " + u.new.String() + " ")
	sig := signature(who, st.Opts.Now())
	_ = sig.Encode(&line)
	line.WriteString("\t" + firstLine(u.msg) + "\n")
	names := []string{u.name}
	if u.name == MainRef {
		names = append(names, "HEAD")
	}
	for _, n := range names {
		p := filepath.Join(gitDir, "logs", filepath.FromSlash(n))
		err := appendSmall(p, line.Bytes(), FilePerm, !u.logExisting)
		if errors.Is(err, fs.ErrNotExist) && !u.logExisting && os.MkdirAll(filepath.Dir(p), DirPerm) == nil {
			_ = appendSmall(p, line.Bytes(), FilePerm, true)
		}
	}
}

// deleteRef removes a ref that holds old (loose refs only; ckpt never packs its own refs).
func (st *Store) deleteRef(gitDir, name string, old Hash) error {
	path := filepath.Join(gitDir, filepath.FromSlash(name))
	f, err := createLockFile(path+".lock", time.Now().Add(st.Opts.LockTimeout))
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	cur, err := readRef(gitDir, name)
	if err != nil {
		return err
	}
	if cur != old {
		return fmt.Errorf("delete %s: %w", name, ErrMoved)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if packed, _ := readPackedRef(gitDir, name); packed != ZeroHash {
		return fmt.Errorf("delete %s: the ref is also in packed-refs; run git pack-refs or remove it with git update-ref -d", name)
	}
	return nil
}

// listRefs returns refs under prefix (loose and packed), name -> hash.
func listRefs(gitDir, prefix string) (map[string]Hash, error) {
	out := map[string]Hash{}
	if b, err := os.ReadFile(filepath.Join(gitDir, "packed-refs")); err == nil {
		for _, l := range bytes.Split(b, []byte{'\n'}) {
			h, n, ok := strings.Cut(string(l), " ")
			if ok && strings.HasPrefix(n, prefix) && plumbing.IsHash(h) {
				out[n] = plumbing.NewHash(h)
			}
		}
	}
	root := filepath.Join(gitDir, filepath.FromSlash(prefix))
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || strings.HasSuffix(p, ".lock") {
			return nil
		}
		rel, _ := filepath.Rel(filepath.Join(gitDir), p)
		name := filepath.ToSlash(rel)
		h, err := readRef(gitDir, name)
		if err != nil {
			return err
		}
		if h != ZeroHash {
			out[name] = h
		}
		return nil
	})
	return out, err
}

func short(h Hash) string {
	if h == ZeroHash {
		return "nothing"
	}
	return h.String()[:7]
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// ErrMissingParent refuses a commit whose parent the repository does not hold.
var ErrMissingParent = errors.New("missing parent")

// ErrLostRef means main is missing, zero or malformed in a repository that has history: a
// commit now would start a new, parentless history and cut the old one off.
var ErrLostRef = errors.New("branch ref lost")

// LostRefError says how main was lost and which reflog entry it can be restored from.
type LostRefError struct {
	Repo  string // session id, or "knowledge"
	Ref   string
	State string // "is missing", "holds the zero hash", "is malformed"
	// Entry is the newest reflog entry that names a commit the repository holds; nil when
	// no reflog does.
	Entry *ReflogEntry
	// GitDir is set for a repository that is not a session (ckpt doctor does not know it).
	GitDir string
}

func (e *LostRefError) Error() string {
	if e.Entry == nil {
		return fmt.Sprintf("%s: %s %s and no reflog names a commit; nothing committed", e.Repo, e.Ref, e.State)
	}
	return fmt.Sprintf("%s: %s %s; the reflog (%s) last points to %s", e.Repo, e.Ref, e.State, e.Entry.File, e.Entry.New)
}

// Hint names ckpt doctor for a session; the knowledge repository is repaired with git.
func (e *LostRefError) Hint() string {
	switch {
	case e.GitDir != "" && e.Entry == nil:
		return "git -C " + e.GitDir + " fsck --lost-found lists commits to restore it to with git update-ref"
	case e.GitDir != "":
		return "git -C " + e.GitDir + " update-ref " + e.Ref + " " + e.Entry.New.String() + " restores it"
	case e.Entry == nil:
		return "ckpt doctor -s " + e.Repo + " says what is left"
	}
	return "ckpt doctor -s " + e.Repo + " restores it from the reflog"
}

func (e *LostRefError) Unwrap() error { return ErrLostRef }

// readMain reads main. A main that is missing, zero or malformed in a repository that
// already has history (a reflog entry or any object) is a *LostRefError, never ZeroHash:
// ZeroHash means "no commit yet" and would make the next commit a new root.
func (r *Repo) readMain() (Hash, error) {
	h, err := readRef(r.GitDir, MainRef)
	if err == nil && h != ZeroHash {
		return h, nil
	}
	state := "is missing"
	switch {
	case errors.Is(err, errMalformedRef):
		state = "is malformed"
	case err != nil:
		return ZeroHash, err
	default:
		if _, serr := os.Stat(filepath.Join(r.GitDir, filepath.FromSlash(MainRef))); serr == nil {
			state = "holds the zero hash"
		}
	}
	entry := r.reflogCandidate(func(h Hash) bool { return r.isCommit(h) })
	if state == "is missing" && entry == nil && r.reflogCandidate(func(Hash) bool { return true }) == nil && !r.hadHistory() {
		return ZeroHash, nil // before the first commit, or a first commit a crash cut short
	}
	lost := &LostRefError{Repo: r.ID, Ref: MainRef, State: state, Entry: entry}
	if r.LockName != r.ID {
		lost.GitDir = r.GitDir // the knowledge repository
	}
	return ZeroHash, lost
}

// isCommit reports whether the repository holds h as a commit.
func (r *Repo) isCommit(h Hash) bool {
	_, err := r.reader().storage.EncodedObject(plumbing.CommitObject, h)
	return err == nil
}

// ReflogEntry is one line of a reflog.
type ReflogEntry struct {
	Old, New Hash
	File     string // logs/refs/heads/main, relative to the git directory
	Message  string
}

// mainReflogs are the reflogs that record where main was: its own, then HEAD's (which
// `git update-ref -d` leaves in place when it deletes the branch's).
var mainReflogs = []string{"logs/" + MainRef, "logs/HEAD"}

// reflogCandidate returns the newest entry of main's reflogs whose new value ok accepts,
// or nil.
func (r *Repo) reflogCandidate(ok func(Hash) bool) *ReflogEntry {
	for _, f := range mainReflogs {
		es := readReflog(r.GitDir, f)
		for i := len(es) - 1; i >= 0; i-- {
			if es[i].New != ZeroHash && ok(es[i].New) {
				return &es[i]
			}
		}
	}
	return nil
}

// readReflog parses one reflog file (a path relative to the git directory); lines that are
// not "<old> <new> ..." are skipped.
func readReflog(gitDir, file string) []ReflogEntry {
	b, err := os.ReadFile(filepath.Join(gitDir, filepath.FromSlash(file)))
	if err != nil {
		return nil
	}
	var out []ReflogEntry
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.SplitN(l, " ", 3)
		if len(f) < 2 || !plumbing.IsHash(f[0]) || !plumbing.IsHash(f[1]) {
			continue
		}
		e := ReflogEntry{Old: plumbing.NewHash(f[0]), New: plumbing.NewHash(f[1]), File: file}
		if len(f) == 3 {
			_, e.Message, _ = strings.Cut(f[2], "\t")
		}
		out = append(out, e)
	}
	return out
}

// hadHistory reports whether the repository shows that main once had history beyond a
// first commit: a pack (only many commits or a copied history make one), or a loose
// commit with a parent. A first commit that a crash cut short before its ref (objects, no
// ref, no reflog) does not count, so it can be made again.
func (r *Repo) hadHistory() bool {
	es, _ := os.ReadDir(filepath.Join(r.GitDir, "objects", "pack"))
	for _, e := range es {
		if strings.HasSuffix(e.Name(), ".pack") {
			return true
		}
	}
	loose, _ := r.looseObjects()
	s := r.reader().storage
	for _, h := range loose {
		o, err := s.EncodedObject(plumbing.CommitObject, h)
		if err != nil {
			continue
		}
		c := &object.Commit{}
		if c.Decode(o) == nil && len(c.ParentHashes) > 0 {
			return true
		}
	}
	return false
}

// replaceRef points name at h when the ref file still holds exactly old (nil: the file
// does not exist), under `<ref>.lock` like updateRef. It is how a broken ref, which
// updateRef cannot compare, is repaired.
func (st *Store) replaceRef(gitDir, name string, old []byte, h Hash, msg string) error {
	path := filepath.Join(gitDir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), DirPerm); err != nil {
		return fmt.Errorf("update %s: %w", name, err)
	}
	f, err := createLockFile(path+".lock", time.Now().Add(st.Opts.LockTimeout))
	if err != nil {
		return fmt.Errorf("update %s: %w", name, err)
	}
	cur, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		cur, err = nil, nil
	}
	if err != nil || (cur == nil) != (old == nil) || !bytes.Equal(cur, old) {
		f.Close()
		os.Remove(f.Name())
		if err == nil {
			err = ErrMoved
		}
		return fmt.Errorf("update %s: %w", name, err)
	}
	if err := commitLockFile(f, path, []byte(h.String()+"\n"), st.Opts.Fsync); err != nil {
		return fmt.Errorf("update %s: %w", name, err)
	}
	st.appendReflog(gitDir, refUpdate{name: name, old: ZeroHash, new: h, msg: msg}, st.Opts.Author)
	return nil
}

// SetRefs points each ref of refs at its hash (ZeroHash deletes it), whatever it held, as
// SetRef does, but writes every ref that has no loose file in one update of packed-refs:
// packed-refs.lock taken once, the file rewritten with the new values (sorted, as git
// writes it) and renamed into place, then one reflog entry per ref changed, appended to
// its reflog as SetRef's are (in a mirror such as the transport, only to a reflog that
// exists, as git does in a bare repository). A ref with a loose file is moved by SetRef (its own lock
// file), since the loose file would hide the packed value. A push or pull of a thousand
// sessions thus writes one file for their refs, not a thousand lock files. The caller holds
// the repository's exclusive lock.
func (r *Repo) SetRefs(refs map[string]Hash, msg string) error {
	names := make([]string, 0, len(refs))
	for name := range refs {
		names = append(names, name)
	}
	sort.Strings(names)
	var packed []string
	for _, name := range names {
		if !strings.HasPrefix(name, "refs/") || strings.Contains(name, "..") {
			return fmt.Errorf("update %s: not a ref name", name)
		}
		if _, err := os.Lstat(filepath.Join(r.GitDir, filepath.FromSlash(name))); err == nil {
			if err := r.SetRef(name, refs[name]); err != nil {
				return err
			}
			continue
		}
		packed = append(packed, name)
	}
	if len(packed) == 0 {
		return nil
	}
	st := r.store
	path := filepath.Join(r.GitDir, "packed-refs")
	f, err := createLockFile(path+".lock", time.Now().Add(st.Opts.LockTimeout))
	if err != nil {
		return fmt.Errorf("update packed-refs: %w", err)
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	// Each ref's line and the peeled line (^hash) that may follow it.
	cur := map[string]string{}
	was := map[string]Hash{}
	var last string
	header := "# pack-refs with: peeled fully-peeled sorted \n"
	for _, l := range strings.SplitAfter(string(old), "\n") {
		switch {
		case strings.HasPrefix(l, "# pack-refs with:"):
			// Its traits stay true (refs are only added pointing at what they point at
			// now, no peeled line needed for a commit); "sorted" becomes true.
			if header = strings.TrimSuffix(l, "\n"); !strings.Contains(header+" ", " sorted ") {
				header += " sorted "
			}
			header += "\n"
		case l == "" || strings.HasPrefix(l, "#"):
		case strings.HasPrefix(l, "^"):
			if last != "" {
				cur[last] += l
			}
		default:
			h, n, ok := strings.Cut(strings.TrimSuffix(l, "\n"), " ")
			if !ok || !plumbing.IsHash(h) {
				last = ""
				continue
			}
			last = n
			cur[n], was[n] = h+" "+n+"\n", plumbing.NewHash(h)
		}
	}
	var changed []refUpdate
	for _, name := range packed {
		h := refs[name]
		if was[name] == h {
			continue
		}
		changed = append(changed, refUpdate{name: name, old: was[name], new: h, msg: msg, logExisting: r.mirror})
		if h == ZeroHash {
			delete(cur, name)
		} else {
			cur[name] = h.String() + " " + name + "\n"
		}
	}
	if len(changed) == 0 {
		f.Close()
		os.Remove(f.Name())
		return nil
	}
	all := make([]string, 0, len(cur))
	for name := range cur {
		all = append(all, name)
	}
	sort.Strings(all)
	var b bytes.Buffer
	b.WriteString(header)
	for _, name := range all {
		b.WriteString(cur[name])
	}
	if err := commitLockFile(f, path, b.Bytes(), st.Opts.Fsync); err != nil {
		return fmt.Errorf("update packed-refs: %w", err)
	}
	for _, u := range changed {
		if u.new != ZeroHash {
			st.appendReflog(r.GitDir, u, st.Opts.Author)
		}
	}
	return nil
}
