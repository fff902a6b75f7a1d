package checkpoint

import (
	"fmt"

	"github.com/ckpt-dev/ckpt/internal/trailer"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/templates"
)

// initFiles renders a new session's files from its template: metadata filled in.
func (s *Service) initFiles(t *Template, id string) (map[string][]byte, error) {
	if t.Kind == templates.KindFree {
		return map[string][]byte{}, nil // the directory's own files are the first commit
	}
	doc := t.Parse(t.Source)
	now := FormatTime(s.now())
	doc.SetMeta("last_updated", now)
	doc.SetMeta("session_id", id)
	doc.SetMeta("delta_since_last", now+" → "+now)
	files := map[string][]byte{File: doc.Render()}
	if t.Spec.Notes != "" {
		n, err := s.LoadTemplate(t.Spec.Notes)
		if err != nil {
			return nil, err
		}
		files[NotesFile] = n.Source
	}
	return files, nil
}

// InitSession creates a session from a template and makes its first commit. extra is
// recorded in the session's configuration with the template's name.
func (s *Service) InitSession(id repo.SessionID, tmpl, worktree string, extra map[string]string) (*repo.Repo, repo.Hash, error) {
	t, err := s.LoadTemplate(tmpl)
	if err != nil {
		return nil, repo.ZeroHash, err
	}
	files, err := s.initFiles(t, string(id))
	if err != nil {
		return nil, repo.ZeroHash, err
	}
	cfg := map[string]string{"template": tmpl}
	for k, v := range extra {
		cfg[k] = v
	}
	msg := Message{
		Subject: Subject(TriggerManual, fmt.Sprintf("start session %s from template %s", id, tmpl)),
		Trailers: []trailer.Trailer{
			{Key: KeySession, Value: string(id)}, {Key: KeyTrigger, Value: string(TriggerManual)}, {Key: KeySections, Value: joinIDs(t.Doc.IDs())},
		},
	}
	return s.Store.Init(id, repo.InitOptions{Files: files, Worktree: worktree, Config: cfg, Message: msg.String()})
}
