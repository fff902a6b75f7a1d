package knowledge

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/internal/hint"
	"github.com/ckpt-dev/ckpt/internal/trailer"
	"github.com/ckpt-dev/ckpt/repo"
)

// ErrConflictMarkers refuses to finish a merge whose files still hold conflict markers.
var ErrConflictMarkers = errors.New("unresolved conflict markers")

// pendingMerge returns the parents a knowledge commit takes: nil (HEAD) normally, HEAD and
// MERGE_HEAD when a pull left a merge of the knowledge repository pending, which this
// commit then finishes. A file that still holds a conflict marker refuses it.
func pendingMerge(kr *repo.Repo, files map[string][]byte) ([]repo.Hash, repo.Hash, error) {
	mh, err := kr.MergeHead()
	if err != nil || mh == repo.ZeroHash {
		return nil, repo.ZeroHash, err
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if line := conflictMarkerLine(files[name]); line > 0 {
			return nil, mh, hint.New(fmt.Errorf("%s:%d: %w from the pending merge of %s", kr.WorkPath(name), line, ErrConflictMarkers, repo.ShortHash(mh)),
				"keep what each side should keep, delete the marker lines, then ckpt commit --knowledge")
		}
	}
	head, err := kr.Head()
	if err != nil {
		return nil, mh, err
	}
	return []repo.Hash{head, mh}, mh, nil
}

// conflictMarkerLine returns the 1-based line of the first conflict marker in b, or 0.
func conflictMarkerLine(b []byte) int {
	for i, l := range bytes.Split(b, []byte("\n")) {
		t := string(bytes.TrimRight(l, "\r"))
		for _, m := range []string{"<<<<<<<", ">>>>>>>"} {
			if t == m || (len(t) > len(m) && t[:len(m)+1] == m+" ") {
				return i + 1
			}
		}
	}
	return 0
}

// CommitDisk commits the knowledge repository's work tree as it is: MEMORY.md and
// knowledge-graph.md edited by hand, or the files of a pull's conflict once resolved, which
// finishes that merge (both parents, MERGE_HEAD cleared). It returns the head and whether a
// commit was made.
func CommitDisk(st *repo.Store, message string) (repo.Hash, bool, error) {
	unlock, err := st.Lock(repo.KnowledgeLock, true)
	if err != nil {
		return repo.ZeroHash, false, err
	}
	defer unlock()
	kr, err := st.OpenKnowledge()
	if err != nil {
		return repo.ZeroHash, false, err
	}
	files, err := kr.WorkFiles()
	if err != nil {
		return repo.ZeroHash, false, err
	}
	if kg, ok := files[File]; ok {
		if _, err := Parse(kg); err != nil {
			return repo.ZeroHash, false, fmt.Errorf("%s: %w", kr.WorkPath(File), err)
		}
	}
	mh, err := kr.MergeHead()
	if err != nil {
		return repo.ZeroHash, false, err
	}
	subject := "knowledge(manual): " + message
	if message == "" {
		subject = "knowledge(manual): commit the work tree"
		if mh != repo.ZeroHash {
			subject = "knowledge(merge): merge " + repo.ShortHash(mh) + " (conflicts resolved)"
		}
	}
	trigger := checkpoint.TriggerManual
	if mh != repo.ZeroHash {
		trigger = checkpoint.TriggerMerge
	}
	msg := checkpoint.Message{Subject: subject, Trailers: []trailer.Trailer{{Key: checkpoint.KeyTrigger, Value: string(trigger)}}}
	return commitFinishing(kr, repo.CommitRequest{Files: files, Message: msg.String(), Disk: maps.Clone(files)})
}

// commitFinishing makes req a commit of the knowledge repository that also finishes a
// merge a pull left pending.
func commitFinishing(kr *repo.Repo, req repo.CommitRequest) (repo.Hash, bool, error) {
	parents, mh, err := pendingMerge(kr, req.Files)
	if err != nil {
		return repo.ZeroHash, false, err
	}
	req.Parents, req.Force = parents, parents != nil
	p, err := kr.Prepare(req)
	if err != nil {
		return repo.ZeroHash, false, err
	}
	if err := p.Apply(); err != nil {
		return repo.ZeroHash, false, err
	}
	return p.Commit(), p.Changed(), finishMerge(kr, mh, p)
}

// finishMerge clears MERGE_HEAD once a commit that finishes the merge is on main.
func finishMerge(kr *repo.Repo, mh repo.Hash, p *repo.Prepared) error {
	if mh == repo.ZeroHash || !p.Changed() {
		return nil
	}
	return kr.SetMergeHead(repo.ZeroHash, "")
}
