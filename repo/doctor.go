package repo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// DoctorOptions say what Doctor may change.
type DoctorOptions struct {
	// DryRun reports what Doctor would repair and changes nothing.
	DryRun bool
}

// Finding is one problem Doctor found in a repository.
type Finding struct {
	// Check is what was checked: head, main, merge_head, objects, lock, pack.
	Check   string `json:"check"`
	Problem string `json:"problem"`
	// Repaired says whether Doctor fixed it; Action says how, or what is left to do.
	Repaired bool   `json:"repaired"`
	Action   string `json:"action"`
}

// DoctorReport is what Doctor found, repaired or not.
type DoctorReport struct {
	Findings []Finding
}

// Unrepaired counts the problems that remain.
func (d DoctorReport) Unrepaired() int {
	n := 0
	for _, f := range d.Findings {
		if !f.Repaired {
			n++
		}
	}
	return n
}

// doctorDir is where Doctor keeps the bytes it takes out of the way (a garbled ref, a
// MERGE_HEAD naming a commit that is gone): nothing it did not create is deleted.
const doctorDir = "ckpt-doctor"

// Doctor checks a repository and repairs what it can without losing anything:
//   - stale `.lock` files left by a killed process are removed;
//   - a pack without its index (whose objects nothing can read) is indexed;
//   - HEAD must be the symbolic ref to main; a missing or garbled HEAD is rewritten;
//   - main must name a commit whose history is complete; a missing, zero or garbled main
//     is restored from the newest reflog entry (main's, then HEAD's) whose commit is
//     there with its whole history, never to a commit with a hole in its history;
//   - MERGE_HEAD must name a commit with its history; one that does not is set aside
//     (the next pull merges again), one already in main's history is cleared;
//   - every other ref's history must be complete (reported, not repaired).
//
// It takes the repository's exclusive lock.
func (st *Store) Doctor(r *Repo, o DoctorOptions) (DoctorReport, error) {
	var rep DoctorReport
	unlock, err := st.Lock(r.LockName, true)
	if err != nil {
		return rep, err
	}
	defer unlock()
	add := func(f Finding) { rep.Findings = append(rep.Findings, f) }
	act := func(f Finding, do func() (string, error)) error {
		if o.DryRun {
			f.Action = "would " + f.Action
			add(f)
			return nil
		}
		done, err := do()
		if err != nil {
			return err
		}
		f.Repaired, f.Action = true, done
		add(f)
		return nil
	}
	for _, f := range r.doctorLocks() {
		rel := r.rel(f)
		if fi, err := os.Stat(f); err == nil && time.Since(fi.ModTime()) < staleLockAge {
			add(Finding{Check: "lock", Problem: rel + " is held", Action: "a git command is running here; run doctor again when it is done"})
			continue
		}
		err := act(Finding{Check: "lock", Problem: rel + " was left by a killed process", Action: "remove it"}, func() (string, error) {
			if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return "", err
			}
			return "removed", nil
		})
		if err != nil {
			return rep, err
		}
	}
	if err := r.doctorPacks(act); err != nil {
		return rep, err
	}
	if rep.Unrepaired() > 0 && o.DryRun {
		for _, f := range rep.Findings {
			if f.Check == "pack" {
				return rep, nil // nothing else can be read until it is indexed
			}
		}
	}
	r.Reset()
	if err := r.doctorHead(act); err != nil {
		return rep, err
	}
	head, err := r.doctorMain(act, add)
	if err != nil {
		return rep, err
	}
	r.Reset()
	var reach map[Hash]bool
	if head != ZeroHash {
		var missing []Hash
		if reach, missing, err = r.walk([]Hash{head}); err != nil {
			return rep, err
		}
		if len(missing) > 0 {
			add(Finding{Check: "objects", Problem: fmt.Sprintf("%s's history lacks %d object(s), first %s", MainRef, len(missing), missing[0]),
				Action: "copy them back from a clone (ckpt pull) or a backup; git fsck --full lists them"})
		}
	}
	if err := r.doctorMergeHead(reach, act); err != nil {
		return rep, err
	}
	refs, err := listRefs(r.GitDir, "refs/")
	if err != nil {
		return rep, err
	}
	names := make([]string, 0, len(refs))
	for n := range refs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if n == MainRef || reach[refs[n]] {
			continue
		}
		if _, missing, err := r.walk([]Hash{refs[n]}); err != nil {
			return rep, err
		} else if len(missing) > 0 {
			add(Finding{Check: "objects", Problem: fmt.Sprintf("%s names history that lacks %d object(s), first %s", n, len(missing), missing[0]),
				Action: "copy them back from a backup, or delete the ref with git update-ref -d " + n})
		}
	}
	return rep, nil
}

// rel is a path inside the git directory as the user sees it: .git/<name>.
func (r *Repo) rel(p string) string {
	if rel, err := filepath.Rel(r.GitDir, p); err == nil {
		return filepath.ToSlash(filepath.Join(".git", rel))
	}
	return p
}

// doctorLocks lists the `.lock` files of the git directory (objects aside).
func (r *Repo) doctorLocks() []string {
	var out []string
	_ = filepath.WalkDir(r.GitDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (d.Name() == "objects" || d.Name() == doctorDir) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".lock") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// setAside moves a file of the git directory into .git/ckpt-doctor/ and returns where.
func (r *Repo) setAside(p string) (string, error) {
	dir := filepath.Join(r.GitDir, doctorDir)
	if err := os.MkdirAll(dir, DirPerm); err != nil {
		return "", err
	}
	name := strings.ReplaceAll(strings.TrimPrefix(r.rel(p), ".git/"), "/", "-") + "." + strconv.FormatInt(time.Now().UnixNano(), 10)
	to := filepath.Join(dir, name)
	if err := os.Rename(p, to); err != nil {
		return "", err
	}
	if r.store.Opts.Fsync {
		_ = syncDir(dir)
		_ = syncDir(filepath.Dir(p))
	}
	return r.rel(to), nil
}

type doctorAct func(Finding, func() (string, error)) error

// doctorPacks indexes a pack that has none, or sets it aside when it cannot be read.
func (r *Repo) doctorPacks(act doctorAct) error {
	dir := filepath.Join(r.GitDir, "objects", "pack")
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		stem, ok := strings.CutSuffix(e.Name(), ".pack")
		if !ok || exists(filepath.Join(dir, stem+".idx")) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		f := Finding{Check: "pack", Problem: r.rel(p) + " has no index: its objects cannot be read", Action: "index it"}
		err := act(f, func() (string, error) {
			pf, err := os.Open(p)
			if err != nil {
				return "", err
			}
			idx, err := indexPack(pf)
			pf.Close()
			if err == nil {
				return "indexed", WriteFileAtomic(filepath.Join(dir, stem+".idx"), idx, 0o444, r.store.Opts.Fsync)
			}
			to, err := r.setAside(p)
			if err != nil {
				return "", err
			}
			return "it cannot be read: moved to " + to, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// doctorHead makes sure HEAD is the symbolic ref to main that git needs to see a
// repository at all.
func (r *Repo) doctorHead(act doctorAct) error {
	p := filepath.Join(r.GitDir, "HEAD")
	b, err := os.ReadFile(p)
	s := strings.TrimSpace(string(b))
	if err == nil && (strings.HasPrefix(s, "ref: refs/") || len(s) == 40) {
		return nil // main, or another ref or commit the user checked out with git
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	problem := ".git/HEAD is missing"
	if err == nil {
		problem = ".git/HEAD is malformed"
	}
	return act(Finding{Check: "head", Problem: problem, Action: "point it at " + MainRef}, func() (string, error) {
		kept := ""
		if err == nil {
			to, err := r.setAside(p)
			if err != nil {
				return "", err
			}
			kept = "; kept the bad one as " + to
		}
		if err := WriteFileAtomic(p, []byte("ref: "+MainRef+"\n"), FilePerm, r.store.Opts.Fsync); err != nil {
			return "", err
		}
		return "pointed it at " + MainRef + kept, nil
	})
}

// doctorMain restores a lost main from the reflog. It returns main afterwards (ZeroHash
// when it is still lost).
func (r *Repo) doctorMain(act doctorAct, add func(Finding)) (Hash, error) {
	head, err := r.readMain()
	var lost *LostRefError
	if err == nil || !errors.As(err, &lost) {
		return head, err
	}
	problem := lost.Ref + " " + lost.State
	var skipped []string
	cand := r.reflogCandidate(func(h Hash) bool {
		if !r.isCommit(h) {
			return false
		}
		_, missing, err := r.walk([]Hash{h})
		if err != nil || len(missing) > 0 {
			skipped = append(skipped, short(h))
			return false
		}
		return true
	})
	if cand == nil {
		add(Finding{Check: "main", Problem: problem, Action: "no reflog entry names a commit whose history is complete; find one with git fsck --lost-found, then git update-ref " + MainRef + " HASH"})
		return ZeroHash, nil
	}
	note := ""
	if len(skipped) > 0 {
		note = "; newer entries skipped, their history is incomplete: " + strings.Join(skipped, ", ")
	}
	path := filepath.Join(r.GitDir, filepath.FromSlash(MainRef))
	old, rerr := os.ReadFile(path)
	if rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		return ZeroHash, rerr
	}
	if rerr != nil {
		old = nil
	}
	f := Finding{Check: "main", Problem: problem, Action: fmt.Sprintf("restore it to %s from the reflog (%s)%s", short(cand.New), cand.File, note)}
	err = act(f, func() (string, error) {
		kept := ""
		if lost.State == "is malformed" && old != nil {
			// The bad bytes stay readable next to the repository.
			dir := filepath.Join(r.GitDir, doctorDir)
			if err := os.MkdirAll(dir, DirPerm); err != nil {
				return "", err
			}
			to := filepath.Join(dir, "refs-heads-main."+strconv.FormatInt(time.Now().UnixNano(), 10))
			if err := WriteFileAtomic(to, old, FilePerm, r.store.Opts.Fsync); err != nil {
				return "", err
			}
			kept = "; kept the bad ref as " + r.rel(to)
		}
		if err := r.store.replaceRef(r.GitDir, MainRef, old, cand.New, "doctor: restore main from "+cand.File); err != nil {
			return "", err
		}
		head = cand.New
		return fmt.Sprintf("restored to %s from the reflog (%s)%s%s", short(cand.New), cand.File, note, kept), nil
	})
	return head, err
}

// doctorMergeHead checks a pending merge. reach is main's history.
func (r *Repo) doctorMergeHead(reach map[Hash]bool, act doctorAct) error {
	p := filepath.Join(r.GitDir, "MERGE_HEAD")
	mh, err := r.MergeHead()
	aside := func() (string, error) {
		to, err := r.setAside(p)
		if err != nil {
			return "", err
		}
		if m := filepath.Join(r.GitDir, "MERGE_MSG"); exists(m) {
			if _, err := r.setAside(m); err != nil {
				return "", err
			}
		}
		return "moved it to " + to + "; the next ckpt pull merges again", nil
	}
	switch {
	case err != nil:
		return act(Finding{Check: "merge_head", Problem: ".git/MERGE_HEAD is malformed", Action: "set it aside; the next ckpt pull merges again"}, aside)
	case mh == ZeroHash:
		return nil
	case reach[mh]:
		return act(Finding{Check: "merge_head", Problem: "MERGE_HEAD " + short(mh) + " is already in main's history (the merge was committed)", Action: "clear it"}, func() (string, error) {
			return "cleared", r.SetMergeHead(ZeroHash, "")
		})
	}
	if _, missing, err := r.walk([]Hash{mh}); err != nil {
		return err
	} else if !r.isCommit(mh) || len(missing) > 0 {
		return act(Finding{Check: "merge_head", Problem: "MERGE_HEAD " + mh.String() + " is not a commit with its whole history here; no commit can finish the merge", Action: "set it aside; the next ckpt pull merges again"}, aside)
	}
	return nil
}
