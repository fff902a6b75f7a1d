package sync

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/templates"
)

// KnowledgeGraph reads the knowledge graph as it is in the knowledge work tree; before the
// first promotion it is the empty template.
func (s *Service) KnowledgeGraph() (*KnowledgeGraph, error) {
	p := filepath.Join(s.Store.KnowledgeDir(), KnowledgeFile)
	src, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		t, err := templates.Load(s.Store.Home, "knowledge")
		if err != nil {
			return nil, err
		}
		src = t.Source
	} else if err != nil {
		return nil, err
	}
	kg, err := ParseKnowledgeGraph(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return kg, nil
}

// Review moves a knowledge graph entry to state (accepted or rejected; pending puts it back
// under review) and commits the change in the knowledge repository. A rejected decision is
// never promoted again.
func (s *Service) Review(id, state string) (*KGEntry, repo.Hash, bool, error) {
	unlock, err := s.Store.Lock(repo.KnowledgeLock, true)
	if err != nil {
		return nil, repo.ZeroHash, false, err
	}
	defer unlock()
	kr, err := s.Store.OpenKnowledge()
	if errors.Is(err, repo.ErrNotFound) {
		return nil, repo.ZeroHash, false, fmt.Errorf("%s: %w (nothing was promoted yet)", id, ErrNoEntry)
	}
	if err != nil {
		return nil, repo.ZeroHash, false, err
	}
	files, err := kr.WorkFiles()
	if err != nil {
		return nil, repo.ZeroHash, false, err
	}
	disk := copyFiles(files)
	kg, err := s.KnowledgeGraph()
	if err != nil {
		return nil, repo.ZeroHash, false, err
	}
	e, err := kg.Find(id)
	if err != nil {
		return nil, repo.ZeroHash, false, err
	}
	if e.State == state {
		h, err := kr.Head()
		return e, h, false, err
	}
	from := e.State
	e.State = state
	files[KnowledgeFile] = kg.Render()
	verb := map[string]string{StateAccepted: "accept", StateRejected: "reject", StatePending: "reopen"}[state]
	msg := fmt.Sprintf("knowledge(%s): %s\n\n%s moves from %s to %s.\n\nCkpt-Trigger: manual\n", verb, e.ID, e.ID, from, state)
	// The graph is replaced only while it holds the bytes read (a sync may write it too).
	h, changed, err := kr.Commit(repo.CommitRequest{Files: files, Message: msg, Disk: disk})
	return e, h, changed, err
}
