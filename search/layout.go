package search

import (
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/ckpt-dev/ckpt/sections"
	"github.com/ckpt-dev/ckpt/templates"
)

// kind is what a file is, which decides how its lines get their section ids.
type kind int

const (
	kindOther      kind = iota
	kindCheckpoint      // checkpoint.md: the session template's sections
	kindSpill           // checkpoint-<topic>.md: one "# <heading> (spilled)" section
	kindNotes           // notes.md: scratch entries, in no section
	kindKnowledge       // knowledge-graph.md
	kindMemory          // MEMORY.md
)

func kindOf(name string) kind {
	switch {
	case name == "checkpoint.md":
		return kindCheckpoint
	case strings.HasPrefix(name, "checkpoint-") && strings.HasSuffix(name, ".md"):
		return kindSpill
	case name == "notes.md":
		return kindNotes
	case name == "knowledge-graph.md":
		return kindKnowledge
	case name == "MEMORY.md":
		return kindMemory
	}
	return kindOther
}

// spilledSuffix ends the heading of a spill file; without it the heading is the section's.
const spilledSuffix = " (spilled)"

// layout says how one repository's files split into sections: the heading level of each
// kind of file, and the template documents a --section argument is resolved against.
type layout struct {
	levels map[kind]int
	refs   map[kind][]*tmpl
}

// tmpl is a loaded template, parsed.
type tmpl struct {
	name string
	doc  *sections.Document
}

// templateCache loads each template once per search; workers share it.
type templateCache struct {
	home string
	mu   sync.Mutex
	m    map[string]*tmpl
}

// get returns the named template, or nil when it cannot be loaded (a user template deleted
// since the session was made): its files' sections are then inferred.
func (c *templateCache) get(name string) *tmpl {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.m[name]; ok {
		return t
	}
	var out *tmpl
	if t, err := templates.Load(c.home, name); err == nil {
		out = &tmpl{name: name, doc: sections.Parse(t.Source, sections.Options{})}
	}
	if c.m == nil {
		c.m = map[string]*tmpl{}
	}
	c.m[name] = out
	return out
}

func levelOf(t *tmpl) int {
	if t == nil {
		return 0
	}
	return t.doc.Level
}

// sessionLayout is the layout of a session made from template name.
func (c *templateCache) sessionLayout(name string) *layout {
	t := c.get(name)
	l := &layout{levels: map[kind]int{kindCheckpoint: levelOf(t)}, refs: map[kind][]*tmpl{}}
	if t != nil {
		l.refs[kindCheckpoint] = []*tmpl{t}
		l.refs[kindSpill] = []*tmpl{t}
	}
	return l
}

// knowledgeLayout is the layout of the knowledge repository. MEMORY.md may follow either
// memory template, so a section is looked up in both.
func (c *templateCache) knowledgeLayout() *layout {
	l := &layout{levels: map[kind]int{}, refs: map[kind][]*tmpl{}}
	if t := c.get("knowledge"); t != nil {
		l.levels[kindKnowledge] = t.doc.Level
		l.refs[kindKnowledge] = []*tmpl{t}
	}
	for _, name := range []string{"memory", "memory-en"} {
		if t := c.get(name); t != nil {
			l.levels[kindMemory] = t.doc.Level
			l.refs[kindMemory] = append(l.refs[kindMemory], t)
		}
	}
	return l
}

// resolve turns a --section argument into the section id it names in each kind of file.
// ok is false when no template of this repository has such a section.
func (l *layout) resolve(query string) (ids map[kind]sections.ID, ok bool) {
	ids = map[kind]sections.ID{}
	for k, ts := range l.refs {
		for _, t := range ts {
			if s := t.doc.Find(query); s != nil {
				ids[k] = s.ID
				break
			}
		}
	}
	return ids, len(ids) > 0
}

// templates lists the templates a section is looked up in, checkpoint templates first.
func (l *layout) templates() []*tmpl {
	var out []*tmpl
	for _, k := range []kind{kindCheckpoint, kindKnowledge, kindMemory} {
		for _, t := range l.refs[k] {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// sectionMap gives the section id of each line of one version of a file.
type sectionMap struct {
	starts []int // 1-based first line of each section, increasing
	ids    []sections.ID
}

// sectionsOf splits src into sections the way its kind of file is split.
func (l *layout) sectionsOf(name string, src []byte) sectionMap {
	var m sectionMap
	k := kindOf(name)
	if k == kindNotes {
		return m
	}
	level := l.levels[k]
	if k == kindSpill {
		level = 1
	}
	doc := sections.Parse(src, sections.Options{Level: level})
	for i := range doc.Sections {
		s := &doc.Sections[i]
		id := s.ID
		if k == kindSpill {
			id = sections.IDOf(strings.TrimSuffix(s.Title(), spilledSuffix))
		}
		m.starts = append(m.starts, s.Line)
		m.ids = append(m.ids, id)
	}
	return m
}

// at returns the section of a 1-based line; "" in the preamble.
func (m sectionMap) at(line int) sections.ID {
	i := sort.SearchInts(m.starts, line+1) - 1
	if i < 0 {
		return ""
	}
	return m.ids[i]
}
