package repo

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// maxPacks is how many packs may pile up before they are merged into one.
const maxPacks = 8

// MaybePack packs the loose objects when there are too many (see maybePack). A failure to
// pack never fails the commit that triggered it; the next commit tries again.
func (r *Repo) MaybePack() { _ = r.maybePack() }

// maybePack packs the loose objects when there are more than PackThreshold of them. Like
// `git gc --auto`, it estimates the count from a few fan-out directories instead of listing
// them all, so the check costs four directory reads per commit.
func (r *Repo) maybePack() error {
	t := r.store.Opts.PackThreshold
	if t <= 0 {
		return nil
	}
	// Looking costs four directory reads; once every 16 commits is often enough for a
	// threshold of hundreds of objects.
	if h, err := r.Head(); err == nil && h[0]%16 != 0 && t >= 64 {
		return nil
	}
	n := 0
	for _, d := range []string{"00", "01", "02", "03"} {
		es, _ := os.ReadDir(filepath.Join(r.GitDir, "objects", d))
		n += len(es)
	}
	if n*64 <= t {
		return nil
	}
	return r.Pack()
}

// Pack moves every loose object into a new pack (with deltas), and merges the packs into one
// when more than maxPacks exist. Pack and index are fsynced before any loose object is
// removed; nothing unreachable is dropped. The caller holds the exclusive lock.
func (r *Repo) Pack() error {
	loose, err := r.looseObjects()
	if err != nil {
		return err
	}
	if len(loose) > 0 {
		if _, err := r.writePack(loose); err != nil {
			return err
		}
		for _, p := range loose {
			_ = os.Remove(r.loosePath(p))
		}
		r.Reset()
	}
	packs, err := r.packs()
	if err != nil || len(packs) <= maxPacks {
		return err
	}
	return r.mergePacks(packs)
}

func (r *Repo) loosePath(h Hash) string {
	s := h.String()
	return filepath.Join(r.GitDir, "objects", s[:2], s[2:])
}

func (r *Repo) looseObjects() ([]Hash, error) {
	var out []Hash
	for i := range 256 {
		d := fmt.Sprintf("%02x", i)
		es, err := os.ReadDir(filepath.Join(r.GitDir, "objects", d))
		if err != nil {
			continue
		}
		for _, e := range es {
			if len(e.Name()) != 38 {
				continue // tmp_obj_ files of a crashed writer
			}
			if _, err := hex.DecodeString(e.Name()); err == nil {
				out = append(out, plumbing.NewHash(d+e.Name()))
			}
		}
	}
	return out, nil
}

func (r *Repo) packs() ([]string, error) {
	es, err := os.ReadDir(filepath.Join(r.GitDir, "objects", "pack"))
	if err != nil {
		return nil, nil
	}
	var out []string
	for _, e := range es {
		if n, ok := strings.CutSuffix(e.Name(), ".pack"); ok {
			if _, err := os.Stat(filepath.Join(r.GitDir, "objects", "pack", n+".idx")); err == nil {
				out = append(out, n)
			}
		}
	}
	return out, nil
}

// writePack encodes objs into one pack through go-git, then fsyncs it.
func (r *Repo) writePack(objs []Hash) (string, error) {
	s := r.reader().storage
	w, err := s.PackfileWriter()
	if err != nil {
		return "", fmt.Errorf("pack %s: %w", r.GitDir, err)
	}
	h, err := packfile.NewEncoder(w, s, false).Encode(objs, 10)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("pack %s: %w", r.GitDir, err)
	}
	name := "pack-" + h.String()
	if r.store.Opts.Fsync {
		base := filepath.Join(r.GitDir, "objects", "pack", name)
		for _, p := range []string{base + ".pack", base + ".idx"} {
			f, err := os.Open(p)
			if err != nil {
				return "", err
			}
			err = f.Sync()
			f.Close()
			if err != nil {
				return "", err
			}
		}
		return name, syncDir(filepath.Dir(base))
	}
	return name, nil
}

// mergePacks writes every packed object into one new pack and removes the old packs.
func (r *Repo) mergePacks(old []string) error {
	s := r.reader().storage
	iter, err := s.IterEncodedObjects(plumbing.AnyObject)
	if err != nil {
		return err
	}
	// An object can be in two packs (a restore writes an old version again, loose, and
	// a later pack takes it): each goes into the merged pack once, or git would find the
	// pack claiming more objects than its index.
	var all []Hash
	seen := map[Hash]bool{}
	err = iter.ForEach(func(o plumbing.EncodedObject) error {
		if h := o.Hash(); !seen[h] {
			seen[h] = true
			all = append(all, h)
		}
		return nil
	})
	if err != nil {
		return err
	}
	merged, err := r.writePack(all)
	if err != nil {
		return err
	}
	for _, p := range old {
		if p == merged {
			continue
		}
		for _, ext := range []string{".pack", ".idx", ".rev"} {
			_ = os.Remove(filepath.Join(r.GitDir, "objects", "pack", p+ext))
		}
	}
	r.Reset()
	return nil
}
