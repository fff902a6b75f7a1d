package repo

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sort"
	"time"
)

// ErrWorkTreeChanged means a work-tree file changed between the moment a command read it and
// the moment it would have replaced it: someone (the agent, a harness) wrote it meanwhile.
// Nothing was written; the command plans again from what is on disk now.
var ErrWorkTreeChanged = errors.New("work tree changed underneath")

// WorkTreeUpdate is what a commit or checkout does to the work tree. Only the files it
// changes are written; every other file keeps its bytes, committed or not.
type WorkTreeUpdate struct {
	// Files is the new tree: name -> bytes.
	Files map[string][]byte
	// Old is the tree these files replace (name -> blob hash), nil for none.
	Old map[string]Hash
	// Disk is the work tree as the caller read it when it planned the change (a name absent:
	// the file did not exist). When set, a file is replaced or removed only while it still
	// holds those bytes (compare and swap); otherwise ErrWorkTreeChanged and nothing stays
	// written. nil skips the check (a repository being created, say).
	Disk map[string][]byte
	// Touch names files that are brought to their new bytes even though the tree does not
	// change them: a restore repairing a broken or deleted file.
	Touch []string
	// Appendable names files an agent appends to without taking ckpt's lock (notes.md): bytes
	// appended after Disk was read are kept after the new content instead of failing the
	// compare and swap, and appends that reach the replaced file while it is being replaced
	// are carried over to the new one.
	Appendable []string
	// hashes, when set, are the blob ids of Files (a commit computed them already).
	hashes map[string]Hash
}

// workTreeWrite is the outcome of applying a WorkTreeUpdate.
type workTreeWrite struct {
	// Written are the files whose bytes on disk are now exactly the tree's.
	exact map[string]bool
	// Kept are files that hold more than the tree (appends kept after the new content).
	kept    []string
	written []string
	undo    func()
}

// plannedFiles are the names an update writes (in order: appendable files last, so that a
// crash never leaves notes reset while the checkpoint that took their entries is not yet
// written) and the names it removes.
func (u WorkTreeUpdate) plannedFiles() (write, remove []string) {
	for name, data := range u.Files {
		nh, known := u.hashes[name]
		if !known {
			nh = BlobHash(data)
		}
		if h, ok := u.Old[name]; !ok || h != nh || slices.Contains(u.Touch, name) {
			write = append(write, name)
		}
	}
	sort.Slice(write, func(i, j int) bool {
		ai, aj := slices.Contains(u.Appendable, write[i]), slices.Contains(u.Appendable, write[j])
		if ai != aj {
			return aj
		}
		return write[i] < write[j]
	})
	for name := range u.Old {
		if _, keep := u.Files[name]; !keep {
			remove = append(remove, name)
		}
	}
	sort.Strings(remove)
	return write, remove
}

// applyWorkTree writes the files an update changes. On error, what it wrote is put back.
func (r *Repo) applyWorkTree(u WorkTreeUpdate) (*workTreeWrite, error) {
	type saved struct {
		old, wrote []byte
		existed    bool
		appendable bool
	}
	var undo []func()
	out := &workTreeWrite{exact: map[string]bool{}}
	out.undo = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	fail := func(err error) (*workTreeWrite, error) {
		out.undo()
		return nil, err
	}
	perm := r.store.filePerm()
	put := func(name string, s saved) func() {
		return func() {
			p := r.WorkPath(name)
			cur, err := os.ReadFile(p)
			switch {
			case err != nil:
				// Gone or unreadable: put back what was there.
			case s.appendable && bytes.HasPrefix(cur, s.wrote):
				// Appended to since: keep the appends after the old bytes.
				s.old = append(append([]byte{}, s.old...), cur[len(s.wrote):]...)
			case !bytes.Equal(cur, s.wrote):
				return // someone wrote it after us: their bytes stay
			}
			if s.existed {
				_ = WriteFileAtomic(p, s.old, perm, r.store.Opts.Fsync)
			} else {
				_ = os.Remove(p)
			}
		}
	}
	write, remove := u.plannedFiles()
	for _, name := range write {
		data := u.Files[name]
		appendable := slices.Contains(u.Appendable, name)
		p := r.WorkPath(name)
		f, fi, cur, exists, err := openCurrent(p)
		if err != nil {
			return fail(err)
		}
		if u.Disk != nil {
			exp, had := u.Disk[name]
			if exists != had || !bytes.Equal(cur, exp) {
				if !(appendable && exists && had && bytes.HasPrefix(cur, exp)) {
					closeFile(f)
					return fail(fmt.Errorf("%s: %w", p, ErrWorkTreeChanged))
				}
				data = append(append([]byte{}, data...), cur[len(exp):]...)
				out.kept = append(out.kept, name)
			}
		}
		if exists && bytes.Equal(cur, data) {
			closeFile(f)
			out.exact[name] = bytes.Equal(data, u.Files[name])
			continue
		}
		var guard *lateGuard
		if appendable {
			if guard, err = r.store.guardLate(r.LockName, p, f, int64(len(cur))); err != nil {
				closeFile(f)
				return fail(err)
			}
		}
		if err := replaceFile(p, fi, data, perm, r.store.Opts.Fsync); err != nil {
			closeFile(f)
			guard.drop()
			return fail(fmt.Errorf("write %s: %w", p, err))
		}
		if afterReplace != nil {
			afterReplace(p)
		}
		if appendable && f != nil {
			// An agent that opened the file before the rename may append to the old one
			// after it was read: carry those bytes over, watching the old file a little
			// while, since a writer descheduled between its open and its write comes late.
			seen := int64(len(cur))
			for _, wait := range lateAppendWaits {
				time.Sleep(wait)
				extra := lateAppends(f, seen)
				if len(extra) == 0 {
					continue
				}
				if err := appendFile(p, extra, r.store.Opts.Fsync); err != nil {
					// Put the old notes.md back with the rest; the guard stays, so the
					// bytes past seen are appended again by the next command.
					closeFile(f)
					undo = append(undo, put(name, saved{old: cur, wrote: data, existed: exists, appendable: appendable}))
					return fail(fmt.Errorf("write %s: %w", p, err))
				}
				seen += int64(len(extra))
				_ = guard.advance(seen)
				data = append(data, extra...)
				if !slices.Contains(out.kept, name) {
					out.kept = append(out.kept, name)
				}
			}
		}
		// Watched to the end: the guard was for a kill in the middle. It goes now, so that
		// the replaced bytes (which a redaction may have been removing) do not linger.
		guard.drop()
		closeFile(f)
		undo = append(undo, put(name, saved{old: cur, wrote: data, existed: exists, appendable: appendable}))
		out.written = append(out.written, name)
		out.exact[name] = bytes.Equal(data, u.Files[name])
	}
	for _, name := range remove {
		p := r.WorkPath(name)
		cur, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fail(fmt.Errorf("read %s: %w", p, err))
		}
		if u.Disk != nil {
			if exp, had := u.Disk[name]; !had || !bytes.Equal(cur, exp) {
				return fail(fmt.Errorf("%s: %w", p, ErrWorkTreeChanged))
			}
		}
		if err := os.Remove(p); err != nil {
			return fail(fmt.Errorf("remove %s: %w", p, err))
		}
		undo = append(undo, func() { _ = WriteFileAtomic(p, cur, perm, r.store.Opts.Fsync) })
		out.written = append(out.written, name)
	}
	return out, nil
}

// afterReplace, set only by tests, runs right after a work-tree file is replaced: the moment
// an agent's append to the old file would otherwise be lost.
var afterReplace func(path string)

// openCurrent opens a work-tree file and reads it through the same descriptor, so that
// appends made to that very file later can be found after it is replaced.
func openCurrent(p string) (*os.File, fs.FileInfo, []byte, bool, error) {
	f, err := openFile(p, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, nil, false, fmt.Errorf("read %s: %w", p, err)
	}
	fi, err := f.Stat()
	var b []byte
	if err == nil {
		b, err = readAllSized(f, fi)
	}
	if err != nil {
		f.Close()
		return nil, nil, nil, false, fmt.Errorf("read %s: %w", p, err)
	}
	return f, fi, b, true, nil
}

func closeFile(f *os.File) {
	if f != nil {
		_ = f.Close()
	}
}

// lateAppendWaits is how long after replacing notes.md ckpt looks again at the file it
// replaced for appends that reached it late: at once, then twice more, 12 ms in all.
// Appends that reach it while a kill -9 cuts the watch short are put back by the next
// command that takes the lock (lateappend.go); a writer that holds notes.md open across a
// replacement for longer than the watch is not covered.
var lateAppendWaits = []time.Duration{0, 2 * time.Millisecond, 10 * time.Millisecond}

// lateAppends returns the bytes past size in an open file that has just been replaced.
func lateAppends(f *os.File, size int64) []byte {
	var out []byte
	for {
		fi, err := f.Stat()
		if err != nil || fi.Size() <= size+int64(len(out)) {
			return out
		}
		b, err := io.ReadAll(io.NewSectionReader(f, size+int64(len(out)), fi.Size()-size-int64(len(out))))
		if err != nil || len(b) == 0 {
			return out
		}
		out = append(out, b...)
	}
}

// appendFile appends data to path, as an agent appending a note would.
func appendFile(p string, data []byte, sync bool) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// filePerm is the mode of the files ckpt writes into work trees.
func (st *Store) filePerm() fs.FileMode { return FilePerm }
