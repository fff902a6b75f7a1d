package sync

import (
	"bytes"
	"testing"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/sections"
)

// FuzzMergeFull runs the pure part of a full sync on arbitrary checkpoints and notes: it
// must not panic, must never change a heading or directive line of a template section, and
// must keep every notes entry's literals, superseded ones included.
func FuzzMergeFull(f *testing.F) {
	for _, tmpl := range []string{"six", "eleven"} {
		f.Add(tmpl == "six", corpusFile(f, tmpl+"/checkpoint.md"), corpusFile(f, tmpl+"/notes.md"))
	}
	f.Add(true, []byte("### 🔑 Key Decisions\r\n- a\r\n---"), []byte("- [decision] `x`\n  more\n- [intent] y"))
	f.Add(false, []byte("## §3 指令（本次会话）\n_仅限本次会话特定的工作风格_\n- D1: x\n- T1 done\n"), []byte("- [rule] D1: x"))
	templates := map[bool]*checkpoint.Template{}
	for _, six := range []bool{true, false} {
		name := "eleven"
		if six {
			name = "six"
		}
		tt := mustLoad(f, name)
		templates[six] = &checkpoint.Template{Template: tt, Doc: sections.Parse(tt.Source, sections.Options{})}
		// two entries for each one-value section: the first is superseded, its literal kept
		f.Add(six, tt.Source, []byte("- [intent] deploy with `--region=eu-west-1`\n- [intent] deploy later\n- [next] run `make ship`\n- [next] rest\n"))
	}
	f.Fuzz(func(t *testing.T, six bool, cpb, notes []byte) {
		tmpl := templates[six]
		doc := tmpl.Parse(cpb)
		before := map[sections.ID]string{}
		for _, s := range doc.Sections {
			if tmpl.Doc.Section(s.ID) != nil {
				before[s.ID] = string(s.Heading) + string(s.Directive)
			}
		}
		ed := newEditor(doc, tmpl.Spec.Empty)
		mem := &memoryDoc{doc: sections.Parse([]byte("# MEMORY\n\n## Rules\n- D1: x\n\n## Discovered Durable Knowledge\n"), sections.Options{Level: 2})}
		mem.ed = newEditor(mem.doc, "")
		mt := mustLoad(t, "memory-en")
		mem.specs = append(mem.specs, mt.Spec)
		files := map[string][]byte{checkpoint.NotesFile: notes}
		rep := &Report{}
		entries := mergeFull(tmpl, ed, mem, files, []byte("# Notes\n"), nil, "", nil, map[string]int{"🔑": 200, "§7": 200, "⚠️": 300}, "fuzz", rep)
		out := doc.Render()
		after := tmpl.Parse(out)
		for id, hd := range before {
			s := after.Section(id)
			if s == nil {
				t.Fatalf("section %s disappeared", id)
			}
			// the directive may be re-read as body when content was added under a heading
			// that had none; the heading line itself never changes
			if !bytes.HasPrefix([]byte(string(s.Heading)+string(s.Directive)+string(s.Body)), []byte(hd)) {
				t.Fatalf("heading/directive of %s changed: %q", id, hd)
			}
		}
		files[checkpoint.File] = out
		// No entry loses a literal: one superseded in a one-value section, or that no
		// section takes, is kept in the catch-all or its spill file.
		for i, e := range entries {
			for _, lit := range e.literals() {
				if !containsLiteral(tmpl, doc, files, mem, rep.Entries[i].Dest, lit) {
					t.Fatalf("literal %q of entry %q lost (%+v)", lit, e.Raw, rep.Entries[i].Dest)
				}
			}
		}
	})
}
