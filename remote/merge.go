package remote

import (
	"bytes"
	"fmt"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/knowledge"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
)

// mergeFiles merges three versions of a repository's files: a file changed on one side
// takes that side; changed on both, it is merged section by section (the knowledge graph by
// entry id). A file deleted on one side and changed on the other is kept, changed.
func (s *Service) mergeFiles(r *repo.Repo, base, ours, theirs map[string][]byte, label string) (map[string][]byte, map[string][]sections.Conflict, error) {
	out := map[string][]byte{}
	conflicts := map[string][]sections.Conflict{}
	names := map[string]bool{}
	for _, m := range []map[string][]byte{base, ours, theirs} {
		for n := range m {
			names[n] = true
		}
	}
	for name := range names {
		b, bok := base[name]
		o, ook := ours[name]
		t, tok := theirs[name]
		switch {
		case ook == tok && bytes.Equal(o, t):
			if ook {
				out[name] = o
			}
		case bok == ook && bytes.Equal(b, o):
			if tok {
				out[name] = t
			}
		case bok == tok && bytes.Equal(b, t):
			if ook {
				out[name] = o
			}
		case !ook:
			out[name] = t // deleted here, changed there: keep the change
		case !tok:
			out[name] = o
		default:
			tmpl, err := s.mergeTemplate(r, name)
			if err != nil {
				return nil, nil, err
			}
			merged, cs, err := MergeFile(name, b, o, t, tmpl, label)
			if err != nil {
				return nil, nil, err
			}
			out[name] = merged
			if len(cs) > 0 {
				conflicts[name] = cs
			}
		}
	}
	return out, conflicts, nil
}

// newestWins are the metadata lines ckpt maintains: in a merge the newest value wins, so
// they never conflict.
var newestWins = []string{"last_updated", "session_id", "delta_since_last"}

// MergeFile merges three versions of a file that both sides changed: knowledge-graph.md by
// entry id (it never conflicts), any other file section by section, at t's heading level and
// in its section order (t nil: the level is inferred), ckpt's metadata lines taking the
// newest value. Conflicts stay in the result between markers labelled ours and
// theirsLabel. It is the merge of a pull and of the git merge driver.
func MergeFile(name string, base, ours, theirs []byte, t *checkpoint.Template, theirsLabel string) ([]byte, []sections.Conflict, error) {
	if name == knowledge.File {
		out, err := knowledge.Merge(base, ours, theirs)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		return out, nil, nil
	}
	o := sections.MergeOptions{NewestWins: newestWins, OursLabel: "ours", TheirsLabel: theirsLabel}
	if t != nil {
		o.Level, o.Order = t.Doc.Level, t.Order()
	}
	res := sections.Merge3(base, ours, theirs, o)
	return res.Content, res.Conflicts, nil
}

// mergeTemplate is the template a session's file merges with: the session's for the
// checkpoint, memory for MEMORY.md, none for the others.
func (s *Service) mergeTemplate(r *repo.Repo, name string) (*checkpoint.Template, error) {
	switch name {
	case checkpoint.File:
		return s.cp.LoadTemplate(r.Template())
	case knowledge.MemoryFile:
		return s.cp.LoadTemplate("memory")
	}
	return nil, nil
}
