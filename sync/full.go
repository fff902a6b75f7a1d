package sync

import (
	"slices"
	"strings"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/knowledge"
	"github.com/ckpt-dev/ckpt/sections"
	"github.com/ckpt-dev/ckpt/templates"
)

// mergeFull is the pure heart of a full sync: notes entries routed into the checkpoint (and
// MEMORY.md), §3 tidied, the task tree rendered, notes.md reset to its template, sections
// over budget spilled. It edits ed's document, mem and files in place and returns the
// entries it read.
func mergeFull(t *checkpoint.Template, ed *editor, mem *memoryDoc, files map[string][]byte, notesTmpl []byte, db *TaskDB, taskDir string, routing map[string]string, budgets map[string]int, session string, rep *Report) []note {
	entries := parseNotes(files[checkpoint.NotesFile], notesTmpl)
	rt := &router{t: t, overrides: routing, taskOwned: db != nil}
	tasks := t.Section(templates.RoleTasks)
	rs := make([]routed, len(entries))
	var block []progressItem
	for i, e := range entries {
		if p, ok := progressEntry(e); ok {
			// A line of the subagent progress block: it says what to reconcile.
			block = append(block, p)
			rs[i] = routed{Entry: e, Tag: "progress", Dest: Destination{Repo: "session", File: checkpoint.File, Section: tasks, Status: "reconciled", Why: "subagent progress block"}}
			continue
		}
		rs[i] = rt.route(e)
	}
	settleReplacing(t, rs)
	for _, r := range rs {
		if r.Tag == "progress" && r.Dest.Status == "reconciled" {
			rep.Entries = append(rep.Entries, EntryReport{Line: r.Entry.Line, Tag: r.Tag, Text: r.Entry.Text, Dest: r.Dest, Literals: []string{}})
			continue
		}
		rep.Entries = append(rep.Entries, applyRouted(t, ed, mem, files, r))
	}
	if mem != nil {
		rep.Moved = append(rep.Moved, tidyDirectives(t, ed, mem)...)
	}
	// Subagent progress: what the block names, else what the task directory holds anew.
	items, warns := findProgress(taskDir, block, db, reconciledMarks(ed.itemsRaw(tasks)))
	rep.Warnings = append(rep.Warnings, warns...)
	marks, progress, warns := reconcileProgress(t, ed, files, taskDir, items, db)
	rep.Warnings = append(rep.Warnings, warns...)
	rep.Progress = append(rep.Progress, progress...)
	if db != nil {
		if tasks != "" {
			ed.setContent(tasks, renderTasks(db, ed.itemsRaw(tasks), t.Name == "six", marks))
			rep.Tasks = len(db.Tasks)
		}
	} else if tasks != "" {
		markTaskLines(ed, tasks, marks)
	}
	files[checkpoint.NotesFile] = notesTmpl
	rep.Spills = append(rep.Spills, spillBudgets(t, ed, budgets, files, session)...)
	return entries
}

// applyRouted puts one routed entry into its section (or MEMORY.md) unless it is there. An
// entry no section can take goes to the catch-all's spill file, its text intact.
func applyRouted(t *checkpoint.Template, ed *editor, mem *memoryDoc, files map[string][]byte, r routed) EntryReport {
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
		// No section can take it: the spill file of the catch-all keeps it, as a spill would.
		file := "checkpoint-notes.md"
		if ca := t.Section(templates.RoleCatchAll); ca != "" {
			file = "checkpoint-" + spillTopic(t, ca) + ".md"
		}
		item := "- " + r.Entry.Text
		if have := spilledItems(files[file]); !slices.Contains(have, item) {
			files[file] = appendSpill(files[file], "notes.md", "", []string{item}, nil)
		}
		rep.Dest = Destination{Repo: "session", File: file, Status: "added", Why: "no section takes it; kept in a spill file"}
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
	text := renderEntry(t, role, r.Tag, r.Entry.Text)
	if role == templates.RoleIntent {
		text = renderIntent(t, r.Entry.Text)
	}
	ed.add(id, text, replaces(role))
	rep.Dest.Status = "added"
	if replaces(role) {
		rep.Dest.Status = "replaced"
	}
	return rep
}

// tidyDirectives applies seed 000's rules to the directives section (§3): a `Dn:` line whose
// rule MEMORY.md's rules already hold (knowledge.RuleKey: the same words, whatever their
// case, punctuation, width or number) is removed, MEMORY.md being the authority; a line in
// status language ("X done", "X COMPLETE", "X partially complete", "X 已完成") moves to the
// current-work section. Other lines, directives that merely use those words included, stay.
func tidyDirectives(t *checkpoint.Template, ed *editor, mem *memoryDoc) []MovedLine {
	dir := t.Section(templates.RoleDirectives)
	status := t.Section(templates.RoleStatus)
	if dir == "" || ed.doc.Section(dir) == nil {
		return nil
	}
	rules := mem.ruleItems()
	var keep []string
	var moved []MovedLine
	var toStatus []string
	for _, it := range ed.itemsRaw(dir) {
		n := knowledge.NormText(it)
		switch {
		case knowledge.IsRuleLine(n) && holdsRule(rules[knowledge.RuleKey(n)], n):
			moved = append(moved, MovedLine{Line: it, From: dir, Reason: "rule already in " + knowledge.MemoryFile})
		case status != "" && templates.IsStatusLanguage(n):
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

// ruleItems are MEMORY.md's rules by their RuleKey.
func (m *memoryDoc) ruleItems() map[string][]string {
	out := map[string][]string{}
	if sec := m.doc.Section(m.section(templates.RoleRules)); sec != nil {
		for _, it := range items(sec.Body) {
			k := knowledge.RuleKey(it)
			out[k] = append(out[k], it)
		}
	}
	return out
}

// holdsRule reports whether one of MEMORY.md's rules with the line's RuleKey also holds each
// of its literals byte for byte: a rule written with another exact value is another rule.
func holdsRule(have []string, line string) bool {
	for _, h := range have {
		all := true
		for _, lit := range literals(line) {
			all = all && strings.Contains(h, lit)
		}
		if all {
			return true
		}
	}
	return false
}

// proposedRules are the project rules (`Dn:` lines) of the directives section that MEMORY.md
// lacks: a full sync proposes them to the knowledge graph, and ckpt kg accept writes them
// into MEMORY.md's rules.
func proposedRules(t *checkpoint.Template, doc *sections.Document, mem *memoryDoc) []string {
	id := t.Section(templates.RoleDirectives)
	if id == "" || mem == nil || doc.Section(id) == nil {
		return nil
	}
	have := mem.ruleItems()
	var out []string
	for _, it := range newEditor(doc, t.Spec.Empty).itemsRaw(id) {
		if n := knowledge.NormText(it); knowledge.IsRuleLine(n) && !holdsRule(have[knowledge.RuleKey(n)], n) {
			out = append(out, knowledge.ItemText(it))
		}
	}
	return out
}

// memoryDoc is MEMORY.md being edited.
type memoryDoc struct {
	doc    *sections.Document
	ed     *editor
	old    []byte
	specs  []templates.Spec
	exists bool   // it exists already
	path   string // where it lives (knowledge.MemoryPath)
	tmpl   []byte // the memory template, to start one
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
	m.path = knowledge.MemoryPath(s.cp.Store, s.cp.Config.Memory.Path)
	m.tmpl = mt.Source
	src, err := knowledge.ReadMemory(m.path)
	switch {
	case err != nil:
		return nil, err
	case src != nil:
		m.exists = true
		m.old = src
	default:
		src = mt.Source
	}
	m.doc = sections.Parse(src, sections.Options{Level: mt.Doc.Level})
	m.ed = newEditor(m.doc, "")
	return m, nil
}
