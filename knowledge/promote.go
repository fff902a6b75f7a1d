package knowledge

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/internal/trailer"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/templates"
)

// Update is what a full sync brings to the knowledge repository.
type Update struct {
	// Decisions are the session's decisions, oldest first, From its checkpoint.
	Decisions []string
	// Rules are the session's project rules (§3 `Dn:` lines) that MEMORY.md lacks: proposed
	// like decisions, and written to MEMORY.md's rules once accepted.
	Rules []string
	From  Provenance
	// Memory is MEMORY.md as the sync leaves it; OldMemory as it read it (nil: none yet).
	// MemoryTemplate starts a MEMORY.md that does not exist yet.
	Memory, OldMemory, MemoryTemplate []byte
	// MemoryPath is where MEMORY.md lives (MemoryPath); "" is the knowledge repository's.
	MemoryPath string
	// Review sends new decisions to Pending review rather than Accepted. Without review,
	// a new decision is accepted at once, and goes to MEMORY.md at once.
	Review bool
}

// FileChange is one file of the knowledge repository a sync changes.
type FileChange struct {
	Name     string
	Old, New []byte
}

// Change is a prepared commit of the knowledge repository. It holds the knowledge lock
// until Unlock.
type Change struct {
	Promotions []Promotion
	// Remembered are the ids of accepted entries written to MEMORY.md.
	Remembered []string
	// Files are the files that change, by name; none when nothing does.
	Files []FileChange

	// memoryPath is a MEMORY.md outside the knowledge repository, replaced by Apply.
	memoryPath           string
	oldMemory, newMemory []byte
	fsync                bool

	repo     *repo.Repo
	prepared *repo.Prepared
	// mergeHead is the pending merge this commit finishes (MERGE_HEAD), or ZeroHash.
	mergeHead repo.Hash
	// mergeMsg and mergeFinished let Rollback record the merge as pending again.
	mergeMsg      string
	mergeFinished bool
	created       bool // the repository was created for this change
	adopted       bool // ... in a directory that already held the user's files
	unlock        func()
}

// Prepare promotes u's decisions into the knowledge graph and prepares the commit of the
// graph and MEMORY.md (objects written, nothing moved; none for a dry run or when nothing
// changes). It takes the knowledge lock, which Unlock releases: a sync applies this
// commit, then its own, and takes this one back (Rollback) if its own fails.
func Prepare(st *repo.Store, u Update, dry bool) (*Change, error) {
	unlock, err := st.Lock(repo.KnowledgeLock, true)
	if err != nil {
		return nil, err
	}
	kc := &Change{unlock: unlock}
	fail := func(err error) (*Change, error) {
		unlock()
		return nil, err
	}
	kgTmpl, err := templates.Load(st.Home, "knowledge")
	if err != nil {
		return fail(err)
	}
	dir := st.KnowledgeDir()
	kgSrc, err := os.ReadFile(filepath.Join(dir, File))
	oldKG := kgSrc // nil when there is none yet
	if errors.Is(err, fs.ErrNotExist) {
		kgSrc, err = kgTmpl.Source, nil
	}
	if err != nil {
		return fail(err)
	}
	kg, err := Parse(kgSrc)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", filepath.Join(dir, File), err))
	}
	kc.Promotions = append(kg.Promote(u.Decisions, u.From, u.Review), kg.ProposeRules(u.Rules, u.From, u.Review)...)
	memory := u.Memory
	if !u.Review {
		// Accepted at once: to MEMORY.md now, as ckpt kg accept would.
		var accepted []*Entry
		for _, p := range kc.Promotions {
			if p.Outcome == "new" {
				if e, err := kg.Find(p.ID); err == nil {
					accepted = append(accepted, e)
				}
			}
		}
		if len(accepted) > 0 {
			memory, kc.Remembered, _ = AddAccepted(st.Home, memory, u.MemoryTemplate, accepted)
		}
	}
	files := map[string][]byte{File: kg.Render(), MemoryFile: memory}
	old := map[string][]byte{File: oldKG, MemoryFile: u.OldMemory}
	if own := filepath.Join(dir, MemoryFile); u.MemoryPath != "" && filepath.Clean(u.MemoryPath) != own {
		// MEMORY.md lives elsewhere: Apply replaces it there, and the repository's copy
		// follows it, whatever the copy held.
		kc.memoryPath, kc.oldMemory, kc.newMemory, kc.fsync = u.MemoryPath, u.OldMemory, memory, st.Opts.Fsync
		if old[MemoryFile], err = ReadMemory(own); err != nil {
			return fail(err)
		}
	}
	for _, name := range []string{File, MemoryFile} {
		if !bytes.Equal(old[name], files[name]) {
			kc.Files = append(kc.Files, FileChange{Name: name, Old: old[name], New: files[name]})
		}
	}
	// A merge a pull left pending is finished by the next commit, even one that changes
	// nothing else.
	pending := false
	if kr, err := st.OpenKnowledge(); err == nil {
		mh, err := kr.MergeHead()
		pending = err == nil && mh != repo.ZeroHash
	}
	if (len(kc.Files) == 0 && !pending) || dry {
		if len(kc.Files) == 0 {
			kc.Unlock()
		}
		return kc, nil
	}
	kr, err := st.OpenKnowledge()
	if errors.Is(err, repo.ErrNotFound) {
		_, statErr := os.Stat(dir)
		kr, _, err = st.InitKnowledge(map[string][]byte{File: kgTmpl.Source, MemoryFile: u.OldMemory})
		kc.created, kc.adopted = true, statErr == nil
	}
	if err != nil {
		return fail(err)
	}
	kc.repo = kr
	disk, err := kr.WorkFiles()
	if err != nil {
		return fail(err)
	}
	// Replace MEMORY.md and the graph only while they hold the bytes this sync read.
	seen := maps.Clone(disk)
	for name, b := range old {
		if kc.created {
			break // its files are the ones this sync just wrote
		}
		if b == nil {
			delete(seen, name)
		} else {
			seen[name] = b
		}
	}
	maps.Copy(disk, files)
	var news []string
	for _, p := range kc.Promotions {
		if p.Outcome == "new" || p.Outcome == "provenance" {
			news = append(news, p.ID)
		}
	}
	sort.Strings(news)
	subject := "knowledge(promote): " + strings.Join(news, ", ")
	if len(news) == 0 {
		subject = "knowledge(memory): update " + MemoryFile
	}
	msg := checkpoint.Message{Subject: subject, Trailers: []trailer.Trailer{
		{Key: checkpoint.KeySession, Value: u.From.Session},
		{Key: checkpoint.KeyCheckpoint, Value: u.From.Commit},
		{Key: checkpoint.KeyTrigger, Value: string(checkpoint.TriggerFull)},
	}}
	// A merge a pull left pending is finished by this commit, once its markers are gone.
	parents, mh, err := pendingMerge(kr, disk)
	if err != nil {
		kc.discard()
		return fail(err)
	}
	p, err := kr.Prepare(repo.CommitRequest{Files: disk, Message: msg.String(), Disk: seen, Parents: parents, Force: parents != nil})
	if err != nil {
		kc.discard()
		return fail(err)
	}
	kc.prepared, kc.mergeHead = p, mh
	return kc, nil
}

// Changed reports whether applying the change makes a commit.
func (k *Change) Changed() bool { return k != nil && k.prepared != nil && k.prepared.Changed() }

// Apply moves the knowledge repository to the prepared commit and returns it. A failure
// takes back a repository this change created.
func (k *Change) Apply() (repo.Hash, error) {
	if !k.Changed() {
		return repo.ZeroHash, nil
	}
	if err := k.prepared.Apply(); err != nil {
		k.discard()
		return repo.ZeroHash, err
	}
	if err := k.writeMemory(); err != nil {
		return repo.ZeroHash, k.Rollback(err)
	}
	k.mergeMsg = k.repo.MergeMessage()
	if err := finishMerge(k.repo, k.mergeHead, k.prepared); err != nil {
		return k.prepared.Commit(), err
	}
	k.mergeFinished = k.mergeHead != repo.ZeroHash
	return k.prepared.Commit(), nil
}

// writeMemory replaces a MEMORY.md outside the knowledge repository, only while it holds the
// bytes the change was made from.
func (k *Change) writeMemory() error {
	if k.memoryPath == "" || bytes.Equal(k.oldMemory, k.newMemory) {
		return nil
	}
	return writeMemory(k.memoryPath, k.oldMemory, k.newMemory, k.fsync)
}

// Rollback undoes an applied change after the session's commit failed, and returns err.
func (k *Change) Rollback(err error) error {
	if k == nil || k.prepared == nil {
		return err
	}
	if k.mergeFinished {
		// The commit that finished the pending merge is about to be undone: the merge is
		// pending again. Recorded first, so that a kill in between cannot forget it (a
		// MERGE_HEAD already in main's history is what doctor clears).
		if merr := k.repo.SetMergeHead(k.mergeHead, k.mergeMsg); merr != nil {
			return fmt.Errorf("%w; and recording the pending merge again failed: %v", err, merr)
		}
		k.mergeFinished = false
	}
	if uerr := k.prepared.Undo(); uerr != nil {
		return fmt.Errorf("%w; and undoing the knowledge commit failed: %v", err, uerr)
	}
	k.discard()
	return err
}

// MaybePack packs the knowledge repository when it has many loose objects.
func (k *Change) MaybePack() {
	if k != nil && k.repo != nil {
		k.repo.MaybePack()
	}
}

// Unlock releases the knowledge lock (once).
func (k *Change) Unlock() {
	if k != nil && k.unlock != nil {
		k.unlock()
		k.unlock = nil
	}
}

// discard removes a knowledge repository this change created and did not keep: the whole
// directory when it made it, only its .git when it held the user's files before.
func (k *Change) discard() {
	switch {
	case k == nil || !k.created || k.repo == nil:
	case k.adopted:
		_ = os.RemoveAll(k.repo.GitDir)
	default:
		_ = os.RemoveAll(k.repo.Dir)
	}
}
