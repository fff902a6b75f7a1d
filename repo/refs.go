package repo

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// MainRef is the branch every session commits to.
const MainRef = "refs/heads/main"

// RejectedPrefix holds one ref per rejected write: refs/ckpt/rejected/<n>.
const RejectedPrefix = "refs/ckpt/rejected/"

// readRef returns the hash a ref points to: the loose file, else packed-refs. A missing ref
// is ZeroHash with no error. A symbolic ref is followed.
func readRef(gitDir, name string) (Hash, error) {
	for range 5 {
		b, err := os.ReadFile(filepath.Join(gitDir, filepath.FromSlash(name)))
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
			return ZeroHash, fmt.Errorf("read ref %s: malformed content %q", name, s)
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
}

// updateRef moves a ref from old to new with git's protocol: create <ref>.lock exclusively,
// check the ref still holds old, write, fsync, rename. Git and ckpt therefore never
// interleave, and a crash leaves the old value or the new one, never a torn file.
func (st *Store) updateRef(gitDir string, u refUpdate, who Signature) error {
	path := filepath.Join(gitDir, filepath.FromSlash(u.name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("update %s: %w", u.name, err)
	}
	f, err := createLockFile(path+".lock", time.Now().Add(st.Opts.LockTimeout))
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
	line := fmt.Sprintf("%s %s %s\t%s\n", u.old, u.new, formatSignature(who, st.Opts.Now()), firstLine(u.msg))
	names := []string{u.name}
	if u.name == MainRef {
		names = append(names, "HEAD")
	}
	for _, n := range names {
		p := filepath.Join(gitDir, "logs", filepath.FromSlash(n))
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if errors.Is(err, fs.ErrNotExist) {
			if os.MkdirAll(filepath.Dir(p), 0o755) != nil {
				return
			}
			f, err = os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		}
		if err != nil {
			return
		}
		f.WriteString(line)
		f.Close()
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
