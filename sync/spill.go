package sync

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/knowledge"
	"github.com/ckpt-dev/ckpt/sections"
	"github.com/ckpt-dev/ckpt/templates"
)

// Spill is a group of entries moved out of a section over budget.
type Spill struct {
	Section sections.ID `json:"section"`
	File    string      `json:"file"`
	Count   int         `json:"count"`
	Total   int         `json:"total"` // entries in the spill file after this spill
	Summary string      `json:"summary"`
}

// noSpill are the roles whose sections never spill: they hold one value, or are rebuilt
// from another source (the task database, the transcript).
var noSpill = map[templates.Role]bool{
	templates.RoleIntent: true, templates.RoleNext: true, templates.RoleTasks: true, templates.RoleDelta: true,
}

// spillIndexLine matches the index line a spill leaves ("- See checkpoint-x.md (3 items) -
// …", "- 参见 checkpoint-x.md（3 项）- …").
var spillIndexLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^- (?:See|参见) (checkpoint-[A-Za-z0-9][A-Za-z0-9._-]*\.md) ?[(（](\d+) (?:items?|项)[)）] ?- ?`)
})

// spillBudgets moves the oldest entries of every section over its budget into
// checkpoint-<topic>.md (files holds the session's files, updated in place), leaving one
// index line that later syncs keep and update. An entry is never split, index lines never
// move, and spill files are never budgeted, so they never spill again.
func spillBudgets(t *checkpoint.Template, ed *editor, budgets map[string]int, files map[string][]byte, session string) []Spill {
	var out []Spill
	for i := range t.Doc.Sections {
		id := t.Doc.Sections[i].ID
		budget := budgets[string(id)]
		if budget <= 0 || noSpill[roleOf(t, id)] {
			continue
		}
		sec := ed.doc.Section(id)
		if sec == nil || sec.Len() <= budget {
			continue
		}
		items := ed.itemsRaw(id)
		var index []string
		var entries []string
		for _, it := range items {
			if spillIndexLine().MatchString(it) {
				index = append(index, it)
			} else {
				entries = append(entries, it)
			}
		}
		file := "checkpoint-" + spillTopic(t, id) + ".md"
		sum := ""
		keepIndex := index[:0:0]
		for _, l := range index {
			if m := spillIndexLine().FindStringSubmatch(l); m != nil && m[1] == file {
				sum = l[len(m[0]):]
				continue
			}
			keepIndex = append(keepIndex, l)
		}
		// The spill file may already hold some of the entries to move: a sync killed after
		// it wrote the spill file but before its commit is run again on the old checkpoint.
		// Those are not written twice, and the index line counts what the file holds.
		spilled := map[string]bool{}
		for _, it := range spilledItems(files[file]) {
			spilled[it] = true
		}
		prev := len(spilled)
		total := func(n int) int {
			t := prev
			for _, e := range entries[:n] {
				if !spilled[e] {
					t++
				}
			}
			return t
		}
		// Move the oldest entries until the section fits. Sizes are computed, not rendered,
		// so a section of thousands of entries spills in one pass.
		_, tail := splitBody(sec.Body)
		size := len(sec.Heading) + len(sec.Directive) + len(tail)
		lineLen := func(s string) int { return len(s) + strings.Count(s, "\n")*(len(ed.eol)-1) + len(ed.eol) }
		for _, l := range keepIndex {
			size += lineLen(l)
		}
		rest := 0
		for _, e := range entries {
			rest += lineLen(e)
		}
		n := 0
		for n < len(entries) {
			rest -= lineLen(entries[n])
			n++
			if sum == "" {
				sum = summary(entries[0])
			}
			if size+lineLen(indexLine(t, file, prev+n, sum))+rest <= budget {
				break
			}
		}
		if n == 0 {
			continue
		}
		moved := entries[:n]
		all := total(n)
		ed.setContent(id, append(append(append([]string{}, keepIndex...), indexLine(t, file, all, sum)), entries[n:]...))
		files[file] = appendSpill(files[file], sec.HeadingLine(), session, moved, spilled)
		out = append(out, Spill{Section: id, File: file, Count: len(moved), Total: all, Summary: sum})
	}
	return out
}

func roleOf(t *checkpoint.Template, id sections.ID) templates.Role {
	for role, sid := range t.Spec.Roles {
		if sections.ID(sid) == id {
			return role
		}
	}
	return ""
}

// spillTopic names a section's spill file: its role ("decisions"), else the ASCII words of
// its title, else its id's digits ("s7").
func spillTopic(t *checkpoint.Template, id sections.ID) string {
	if r := roleOf(t, id); r != "" && r != templates.RoleCatchAll {
		return string(r)
	}
	if r := roleOf(t, id); r == templates.RoleCatchAll {
		return "notes"
	}
	words := strings.FieldsFunc(strings.ToLower(sections.HeadingTitle(t.Doc.Section(id).HeadingLine())), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	if len(words) > 0 {
		return strings.Join(words, "-")
	}
	return "s" + strings.TrimPrefix(string(id), "§")
}

func indexLine(t *checkpoint.Template, file string, n int, sum string) string {
	format := t.Spec.SpillIndex
	if format == "" {
		format = "- See %s (%d items) - %s"
	}
	return fmt.Sprintf(format, file, n, sum)
}

// summary is the first entry's text, cut to 60 characters, as the index line's reminder of
// what the spill file holds.
func summary(item string) string {
	s := []rune(knowledge.NormText(item))
	if len(s) > 60 {
		s = append(s[:59], '…')
	}
	return string(s)
}

// appendSpill appends items to a spill file (old, nil when there is none yet), except those
// already in it (have): spilling the same entries twice writes them once.
func appendSpill(old []byte, heading, session string, items []string, have map[string]bool) []byte {
	var b strings.Builder
	if len(old) == 0 {
		title := sections.HeadingTitle(heading)
		fmt.Fprintf(&b, "# %s (spilled)\n\n_Older entries that `ckpt sync` moved out of %q in session %s, oldest first. The checkpoint keeps one index line for them._\n\n", title, heading, session)
	} else {
		b.Write(old)
		if !strings.HasSuffix(string(old), "\n") {
			b.WriteString("\n")
		}
	}
	for _, it := range items {
		if !have[it] {
			b.WriteString(it + "\n")
		}
	}
	return []byte(b.String())
}

// sessionDecisions are the decisions a full sync promotes, oldest first: those spilled to
// the decisions section's spill file (in files, the session's new files), then those still
// in the checkpoint. A decision that spilled in the same sync that added it is promoted
// like any other.
func sessionDecisions(t *checkpoint.Template, doc *sections.Document, files map[string][]byte) []string {
	id := t.Section(templates.RoleDecisions)
	if id == "" || t.Doc.Section(id) == nil {
		return nil
	}
	var out []string
	add := func(it string) {
		if d := knowledge.ItemText(it); d != "" && !spillIndexLine().MatchString(it) {
			out = append(out, d)
		}
	}
	for _, it := range spilledItems(files["checkpoint-"+spillTopic(t, id)+".md"]) {
		add(it)
	}
	for _, it := range newEditor(doc, t.Spec.Empty).itemsRaw(id) {
		add(it)
	}
	return out
}

// spilledItems returns the entries of a spill file as written (a bullet with its
// continuation lines), without its heading and italic note.
func spilledItems(src []byte) []string {
	var out []string
	open := false // the last item may take continuation lines
	for _, l := range strings.Split(strings.ReplaceAll(string(src), "\r\n", "\n"), "\n") {
		switch {
		case strings.TrimSpace(l) == "":
			if open {
				out[len(out)-1] += "\n"
			}
		case open && (l[0] == ' ' || l[0] == '\t'):
			out[len(out)-1] += "\n" + l
		case isHeaderLine(l):
			open = false
		default:
			out = append(out, l)
			open = true
		}
	}
	for i := range out {
		out[i] = strings.TrimRight(out[i], "\n")
	}
	return out
}
