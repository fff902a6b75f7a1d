package knowledge

import (
	"bytes"
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

// ReviewOptions say where a review writes MEMORY.md.
type ReviewOptions struct {
	// MemoryPath is where MEMORY.md lives (MemoryPath); "" is the knowledge repository's.
	MemoryPath string
}

// Review is ReviewWith the knowledge repository's own MEMORY.md.
func Review(st *repo.Store, id, state string) (*Entry, repo.Hash, bool, error) {
	return ReviewWith(st, id, state, ReviewOptions{})
}

// ReviewWith moves a knowledge graph entry to state (accepted or rejected; pending puts it
// back under review) and commits the change in the knowledge repository. A rejected decision
// is never promoted again. An accepted one is written into MEMORY.md once, with its
// provenance: a decision under Architecture Decisions, a rule under Rules (seed 000: a
// decision that proved durable across sessions is promoted there). It returns the entry,
// the knowledge repository's head, and whether anything changed.
func ReviewWith(st *repo.Store, id, state string, o ReviewOptions) (*Entry, repo.Hash, bool, error) {
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
	for attempt := 0; ; attempt++ {
		e, h, changed, err := review(st, kr, id, state, o)
		if errors.Is(err, repo.ErrWorkTreeChanged) && attempt < 20 {
			continue // MEMORY.md or the graph changed while this review read them
		}
		return e, h, changed, err
	}
}

func review(st *repo.Store, kr *repo.Repo, id, state string, o ReviewOptions) (*Entry, repo.Hash, bool, error) {
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
	body := fmt.Sprintf("%s moves from %s to %s.", e.ID, from, state)

	// Accepted: into MEMORY.md, where it lives, once.
	own := filepath.Join(st.KnowledgeDir(), MemoryFile)
	memPath := own
	if o.MemoryPath != "" {
		memPath = filepath.Clean(o.MemoryPath)
	}
	var oldMem, newMem []byte
	if state == StateAccepted {
		if oldMem, err = ReadMemory(memPath); err != nil {
			return nil, repo.ZeroHash, false, err
		}
		tmpl, err := memoryTemplate(st, e)
		if err != nil {
			return nil, repo.ZeroHash, false, err
		}
		var added, missing []string
		newMem, added, missing = AddAccepted(st.Home, oldMem, tmpl, []*Entry{e})
		switch {
		case len(added) > 0:
			files[MemoryFile] = newMem
			body += fmt.Sprintf(" It is written into %s (%s).", MemoryFile, memoryHeading(e.Kind))
		case len(missing) > 0:
			body += fmt.Sprintf(" %s has no %s section to take it.", MemoryFile, memoryHeading(e.Kind))
		}
		if memPath != own {
			// The repository's copy follows MEMORY.md where it lives.
			files[MemoryFile] = newMem
		}
	}
	msg := checkpoint.Message{
		Subject:  fmt.Sprintf("knowledge(%s): %s", verb, e.ID),
		Body:     body,
		Trailers: []trailer.Trailer{{Key: checkpoint.KeyTrigger, Value: string(checkpoint.TriggerManual)}},
	}
	// The graph (and MEMORY.md) are replaced only while they hold the bytes read (a sync may
	// write them too).
	// A merge a pull left pending is finished by this commit.
	p, mh, err := prepareFinishing(kr, repo.CommitRequest{Files: files, Message: msg.String(), Disk: disk})
	if err != nil {
		return nil, repo.ZeroHash, false, err
	}
	if err := p.Apply(); err != nil {
		return nil, repo.ZeroHash, false, err
	}
	if memPath != own && newMem != nil && !bytes.Equal(oldMem, newMem) {
		if err := writeMemory(memPath, oldMem, newMem, st.Opts.Fsync); err != nil {
			if uerr := p.Undo(); uerr != nil {
				return nil, repo.ZeroHash, false, fmt.Errorf("%w; and undoing the knowledge commit failed: %v", err, uerr)
			}
			return nil, repo.ZeroHash, false, err
		}
	}
	return e, p.Commit(), p.Changed(), finishMerge(kr, mh, p)
}

// memoryHeading names the MEMORY.md section an entry goes to, for messages.
func memoryHeading(kind string) string {
	if kind == KindRule {
		return "Rules"
	}
	return "Architecture Decisions"
}

// memoryTemplate is the MEMORY.md to start from when there is none: the memory template of
// the session the entry first came from (eleven's is Chinese), else the English one.
func memoryTemplate(st *repo.Store, e *Entry) ([]byte, error) {
	name := "memory-en"
	if len(e.Provenance) > 0 {
		if sid, err := repo.ParseSessionID(e.Provenance[0].Session); err == nil {
			if r, err := st.Open(sid); err == nil {
				if t, err := templates.Load(st.Home, r.Template()); err == nil && t.Spec.Memory != "" {
					name = t.Spec.Memory
				}
			}
		}
	}
	t, err := templates.Load(st.Home, name)
	if err != nil {
		return nil, err
	}
	return t.Source, nil
}
