package sync

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sync"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/knowledge"
	"github.com/ckpt-dev/ckpt/sections"
	"github.com/ckpt-dev/ckpt/templates"
)

// mergeFull is the pure heart of a full sync: notes entries routed into the checkpoint (and
// MEMORY.md), §3 tidied, the task tree rendered, notes.md reset to its template, sections
// over budget spilled. It edits ed's document, mem and files in place and returns the
// entries it read.
func mergeFull(t *checkpoint.Template, ed *editor, mem *memoryDoc, files map[string][]byte, notesTmpl []byte, db *TaskDB, routing map[string]string, budgets map[string]int, session string, rep *Report) []note {
	entries := parseNotes(files[checkpoint.NotesFile], notesTmpl)
	rt := &router{t: t, overrides: routing, taskOwned: db != nil}
	for _, e := range entries {
		rep.Entries = append(rep.Entries, applyRouted(t, ed, mem, rt.route(e)))
	}
	if mem != nil {
		rep.Moved = append(rep.Moved, tidyDirectives(t, ed, mem)...)
	}
	if db != nil {
		if id := t.Section(templates.RoleTasks); id != "" {
			ed.setContent(id, renderTasks(db, ed.itemsRaw(id), t.Name == "six", nil))
			rep.Tasks = len(db.Tasks)
		}
	}
	files[checkpoint.NotesFile] = notesTmpl
	rep.Spills = append(rep.Spills, spillBudgets(t, ed, budgets, files, session)...)
	return entries
}

// applyRouted puts one routed entry into its section (or MEMORY.md) unless it is there.
func applyRouted(t *checkpoint.Template, ed *editor, mem *memoryDoc, r routed) EntryReport {
	rep := EntryReport{Line: r.Entry.Line, Tag: r.Tag, Durable: r.Entry.Durable, Text: r.Entry.Text, Dest: r.Dest, Literals: []string{}}
	if r.Dest.Repo == "memory" && mem != nil {
		id := mem.section(r.Role)
		rep.Dest.Section = id
		sec := mem.doc.Section(id)
		if sec == nil {
			// MEMORY.md lacks the section: keep the entry in the checkpoint's catch-all.
			rep.Dest = Destination{Repo: "session", File: checkpoint.File, Section: t.Section(templates.RoleCatchAll), Why: "memory section missing"}
		} else {
			if mem.ed.present(id, r.Entry.Text) {
				rep.Dest.Status = "duplicate"
			} else {
				mem.ed.add(id, "- "+r.Entry.Text, false)
				rep.Dest.Status = "added"
			}
			return rep
		}
	}
	id := rep.Dest.Section
	sec := ed.doc.Section(id)
	if sec == nil {
		id = t.Section(templates.RoleCatchAll)
		if id == "" && len(ed.doc.Sections) > 0 {
			id = ed.doc.Sections[len(ed.doc.Sections)-1].ID
		}
		rep.Dest.Section, rep.Dest.Why = id, "section missing; catch-all"
		sec = ed.doc.Section(id)
	}
	if sec == nil {
		rep.Dest.Status = "dropped"
		return rep
	}
	if ed.present(id, r.Entry.Text) {
		rep.Dest.Status = "duplicate"
		return rep
	}
	role := r.Role
	if roleOf(t, id) != role {
		role = roleOf(t, id)
	}
	ed.add(id, renderEntry(t, role, r.Tag, r.Entry.Text), replaces(role))
	rep.Dest.Status = "added"
	if replaces(role) {
		rep.Dest.Status = "replaced"
	}
	return rep
}

// tidyDirectives applies seed 000's rules to the directives section (§3): a `Dn:` line whose
// rule MEMORY.md's rules already hold is removed (MEMORY.md is the authority), and a line in
// status language (COMPLETE, done, partially complete) moves to the current-work section.
func tidyDirectives(t *checkpoint.Template, ed *editor, mem *memoryDoc) []MovedLine {
	dir := t.Section(templates.RoleDirectives)
	status := t.Section(templates.RoleStatus)
	if dir == "" || ed.doc.Section(dir) == nil {
		return nil
	}
	rules := map[string]bool{}
	if sec := mem.doc.Section(mem.section(templates.RoleRules)); sec != nil {
		for _, it := range items(sec.Body) {
			rules[it] = true
		}
	}
	var keep []string
	var moved []MovedLine
	var toStatus []string
	for _, it := range ed.itemsRaw(dir) {
		n := knowledge.NormText(it)
		switch {
		case dRule().MatchString(n) && rules[n]:
			moved = append(moved, MovedLine{Line: it, From: dir, Reason: "rule already in " + knowledge.MemoryFile})
		case status != "" && isStatusLine(n):
			moved = append(moved, MovedLine{Line: it, From: dir, To: status, Reason: "status language"})
			toStatus = append(toStatus, it)
		default:
			keep = append(keep, it)
		}
	}
	if len(moved) == 0 {
		return nil
	}
	ed.setContent(dir, keep)
	for _, l := range toStatus {
		if !ed.present(status, l) {
			ed.add(status, l, false)
		}
	}
	return moved
}

// dRule is a project rule line, "D3: …"; statusRe is status language, which reports
// progress rather than a way of working.
var (
	dRule    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^D\d+:`) })
	statusRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\bCOMPLETE\b|(?i:\bpartially complete\b)|(?i:\bdone\b)|已完成|部分完成`)
	})
)

func isStatusLine(n string) bool { return statusRe().MatchString(n) }

// memoryDoc is MEMORY.md being edited.
type memoryDoc struct {
	doc    *sections.Document
	ed     *editor
	old    []byte
	specs  []templates.Spec
	exists bool // the knowledge repository already holds it
}

// section finds the MEMORY.md section that plays role, whichever language its headings use.
func (m *memoryDoc) section(role templates.Role) sections.ID {
	for _, sp := range m.specs {
		if id := sections.ID(sp.Section(role)); id != "" && m.doc.Section(id) != nil {
			return id
		}
	}
	return ""
}

// loadMemory reads MEMORY.md from the knowledge work tree (so hand edits are picked up),
// else renders the template's memory template.
func (s *Service) loadMemory(t *checkpoint.Template) (*memoryDoc, error) {
	name := t.Spec.Memory
	if name == "" {
		name = "memory-en"
	}
	mt, err := s.cp.LoadTemplate(name)
	if err != nil {
		return nil, err
	}
	m := &memoryDoc{specs: []templates.Spec{mt.Spec}}
	for _, other := range []string{"memory", "memory-en"} {
		if other != name {
			if ot, err := templates.Load(s.cp.Store.Home, other); err == nil {
				m.specs = append(m.specs, ot.Spec)
			}
		}
	}
	src, err := os.ReadFile(filepath.Join(s.cp.Store.KnowledgeDir(), knowledge.MemoryFile))
	switch {
	case err == nil:
		m.exists = true
		m.old = src
	case errors.Is(err, fs.ErrNotExist):
		src = mt.Source
	default:
		return nil, err
	}
	m.doc = sections.Parse(src, sections.Options{Level: mt.Doc.Level})
	m.ed = newEditor(m.doc, "")
	return m, nil
}
