package checkpoint

import (
	"strings"

	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/secrets"
	"github.com/ckpt-dev/ckpt/sections"
	"github.com/ckpt-dev/ckpt/templates"
)

// Template is a loaded template with its parsed text.
type Template struct {
	*templates.Template
	Doc *sections.Document
}

// LoadTemplate loads a template (user override first) and parses it.
func (s *Service) LoadTemplate(name string) (*Template, error) {
	t, err := templates.Load(s.Store.Home, name)
	if err != nil {
		return nil, err
	}
	return &Template{Template: t, Doc: sections.Parse(t.Source, sections.Options{})}, nil
}

// Parse parses content at the template's section level.
func (t *Template) Parse(content []byte) *sections.Document {
	return sections.Parse(content, sections.Options{Level: t.Doc.Level})
}

// Order is the template's section ids in order.
func (t *Template) Order() []sections.ID { return t.Doc.IDs() }

// rules turns the template's spec into check rules.
func (t *Template) rules() sections.Rules {
	r := sections.Rules{Blockquote: sections.ID(t.Spec.Blockquote)}
	if len(t.Spec.MaxOpen) > 0 {
		r.MaxOpen = map[sections.ID]int{}
		for id, n := range t.Spec.MaxOpen {
			r.MaxOpen[sections.ID(id)] = n
		}
	}
	r.TaskSection = sections.ID(t.Spec.Section(templates.RoleTasks))
	return r
}

// Section returns the id of the section playing role in this template.
func (t *Template) Section(role templates.Role) sections.ID {
	return sections.ID(t.Spec.Section(role))
}

// GuessTemplate picks the checkpoint template whose section ids best match content's, for a
// bare file checked without --template.
func (s *Service) GuessTemplate(content []byte) string {
	ts, err := templates.List(s.Store.Home)
	if err != nil {
		return templates.Default
	}
	best, bestScore := templates.Default, -1
	for _, tt := range ts {
		if tt.Kind != templates.KindCheckpoint && tt.Kind != templates.KindMemory {
			continue
		}
		td := sections.Parse(tt.Source, sections.Options{})
		doc := sections.Parse(content, sections.Options{Level: td.Level})
		score := 0
		for _, ts := range td.Sections {
			if ds := doc.Section(ts.ID); ds != nil {
				score++
				if ds.HeadingLine() == ts.HeadingLine() {
					score++
				}
			}
		}
		if score > bestScore {
			best, bestScore = tt.Name, score
		}
	}
	return best
}

// CheckOptions add checks beyond the template's own.
type CheckOptions struct {
	// TaskIDs, when not nil, are the ids of the task database: a task line with another id
	// is an error.
	TaskIDs map[string]bool
	// Previous, when not nil, is the last committed checkpoint: the shrink guard compares
	// with it. Elsewhere are the spill files, where removed entries may have moved.
	Previous  []byte
	Elsewhere [][]byte
}

// Check parses content with template t and checks it.
func (s *Service) Check(t *Template, content []byte, o CheckOptions) (*sections.Document, []sections.Finding) {
	doc := t.Parse(content)
	rules := t.rules()
	rules.TaskIDs = o.TaskIDs
	rules.Extra = append(rules.Extra, secrets.Check(s.Config.Secrets.Allow))
	fs := sections.Check(doc, t.Doc, rules)
	// The shrink guard compares sections one by one, which only means something once the
	// structure is right.
	if o.Previous != nil && !sections.HasErrors(fs) {
		fs = append(fs, sections.Shrink(t.Parse(o.Previous), doc, s.shrinkRules(t, o.Elsewhere))...)
	}
	return doc, fs
}

// shrinkRules are the shrink guard's rules for template t: Key Decisions lose nothing, the
// template's rolling sections are exempt, any other section may lose at most the configured
// share of its entries (default one half).
func (s *Service) shrinkRules(t *Template, elsewhere [][]byte) sections.ShrinkRules {
	r := sections.ShrinkRules{Strict: map[sections.ID]bool{}, Exempt: map[sections.ID]bool{}, MaxShare: s.Config.Shrink.MaxShare, Elsewhere: elsewhere}
	if id := t.Section(templates.RoleDecisions); id != "" {
		r.Strict[id] = true
	}
	if id := t.Section(templates.RoleDelta); id != "" {
		r.Exempt[id] = true
	}
	for _, id := range t.Spec.Rolling {
		r.Exempt[sections.ID(id)] = true
	}
	for _, id := range s.Config.Shrink.Exempt {
		r.Exempt[sections.ID(id)] = true
	}
	return r
}

// spillFiles returns the contents of the spill files (checkpoint-<topic>.md) among files.
func spillFiles(files map[string][]byte) [][]byte {
	var out [][]byte
	for _, name := range sortedNames(files) {
		if strings.HasPrefix(name, "checkpoint-") {
			out = append(out, files[name])
		}
	}
	return out
}

// ShrinkBase is what the shrink guard compares a session's checkpoint on disk with: the last
// committed checkpoint, and the spill files on disk.
func (s *Service) ShrinkBase(r *repo.Repo) ([]byte, [][]byte, error) {
	_, old, err := HeadFiles(r)
	if err != nil {
		return nil, nil, err
	}
	disk, err := r.WorkFiles()
	if err != nil {
		return nil, nil, err
	}
	return old[File], spillFiles(disk), nil
}
