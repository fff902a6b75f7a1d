package knowledge

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/internal/trailer"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/templates"
)

// Load reads the knowledge graph as it is in the knowledge work tree; before the first
// promotion it is the empty template.
func Load(st *repo.Store) (*Graph, error) {
	p := filepath.Join(st.KnowledgeDir(), File)
	src, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		t, err := templates.Load(st.Home, "knowledge")
		if err != nil {
			return nil, err
		}
		src = t.Source
	} else if err != nil {
		return nil, err
	}
	kg, err := Parse(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return kg, nil
}

// Review moves a knowledge graph entry to state (accepted or rejected; pending puts it back
// under review) and commits the change in the knowledge repository. A rejected decision is
// never promoted again. It returns the entry, the knowledge repository's head, and whether
// anything changed.
func Review(st *repo.Store, id, state string) (*Entry, repo.Hash, bool, error) {
	unlock, err := st.Lock(repo.KnowledgeLock, true)
	if err != nil {
		return nil, repo.ZeroHash, false, err
	}
	defer unlock()
	kr, err := st.OpenKnowledge()
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
	disk := maps.Clone(files)
	kg, err := Load(st)
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
	files[File] = kg.Render()
	verb := map[string]string{StateAccepted: "accept", StateRejected: "reject", StatePending: "reopen"}[state]
	msg := checkpoint.Message{
		Subject:  fmt.Sprintf("knowledge(%s): %s", verb, e.ID),
		Body:     fmt.Sprintf("%s moves from %s to %s.", e.ID, from, state),
		Trailers: []trailer.Trailer{{Key: checkpoint.KeyTrigger, Value: string(checkpoint.TriggerManual)}},
	}
	// The graph is replaced only while it holds the bytes read (a sync may write it too).
	h, changed, err := commitFinishing(kr, repo.CommitRequest{Files: files, Message: msg.String(), Disk: disk})
	return e, h, changed, err
}
