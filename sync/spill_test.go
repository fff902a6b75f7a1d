package sync

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/internal/config"
	"github.com/ckpt-dev/ckpt/sections"
)

func TestSpillOverBudget(t *testing.T) {
	cfg := &config.Config{Budgets: map[string]map[string]int{"six": {"🔑": 400}}}
	ts := newTestService(t, cfg)
	r := ts.session(t, "s", "six", corpusFile(t, "six/checkpoint.md"), nil)
	notes := func(from, to int) []byte {
		var b strings.Builder
		b.WriteString("# Notes\n\n")
		for i := from; i < to; i++ {
			fmt.Fprintf(&b, "- [decision] decision number %02d keeps `flag-%02d`\n", i, i)
		}
		return []byte(b.String())
	}
	os.WriteFile(r.WorkPath(checkpoint.NotesFile), notes(0, 10), 0o644)
	rep, err := ts.Sync(r, Options{Mode: Full})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Spills) != 1 || rep.Spills[0].File != "checkpoint-decisions.md" {
		t.Fatalf("spills = %+v", rep.Spills)
	}
	first := rep.Spills[0]
	cp, _ := os.ReadFile(r.WorkPath(checkpoint.File))
	doc := mustTemplate(t, ts, "six").Parse(cp)
	if n := doc.Section("🔑").Len(); n > 400 {
		t.Errorf("🔑 is %d bytes after the spill, budget 400", n)
	}
	idx := fmt.Sprintf("- See checkpoint-decisions.md (%d items) - Use xxhash instead of md5 for file hashing: 10-20x faster", first.Count)
	if !strings.Contains(string(cp), idx+"\n") {
		t.Errorf("index line %q missing:\n%s", idx, cp)
	}
	spill, _ := os.ReadFile(r.WorkPath("checkpoint-decisions.md"))
	if !strings.Contains(string(spill), "- Use xxhash instead of md5") || !strings.HasPrefix(string(spill), "# 🔑 Key Decisions (spilled)") {
		t.Errorf("spill file:\n%s", spill)
	}
	// more decisions: the same index line grows, the spill file is appended to, never spilled
	os.WriteFile(r.WorkPath(checkpoint.NotesFile), notes(10, 30), 0o644)
	rep, err = ts.Sync(r, Options{Mode: Full})
	if err != nil {
		t.Fatal(err)
	}
	cp, _ = os.ReadFile(r.WorkPath(checkpoint.File))
	if strings.Count(string(cp), "- See checkpoint-decisions.md") != 1 {
		t.Errorf("want exactly one index line:\n%s", cp)
	}
	total := rep.Spills[0].Total
	if total != first.Count+rep.Spills[0].Count || !strings.Contains(string(cp), fmt.Sprintf("(%d items) - Use xxhash", total)) {
		t.Errorf("index count: total %d, spills %+v\n%s", total, rep.Spills, cp)
	}
	files, _ := r.WorkFiles()
	for name := range files {
		if strings.HasPrefix(name, "checkpoint-checkpoint") {
			t.Errorf("a spill file spilled: %s", name)
		}
	}
	spill, _ = os.ReadFile(r.WorkPath("checkpoint-decisions.md"))
	for i := range 30 {
		lit := fmt.Sprintf("`flag-%02d`", i)
		if !strings.Contains(string(cp), lit) && !strings.Contains(string(spill), lit) {
			t.Errorf("literal %s lost", lit)
		}
	}
	// eleven writes its index lines in Chinese
	ts2 := newTestService(t, &config.Config{Budgets: map[string]map[string]int{"eleven": {"§7": 150}}})
	e := ts2.session(t, "e", "eleven", corpusFile(t, "eleven/checkpoint.md"), []byte("# notes\n\n- [fact] 第一个事实\n- [fact] 第二个事实\n"))
	if _, err := ts2.Sync(e, Options{Mode: Full}); err != nil {
		t.Fatal(err)
	}
	cp, _ = os.ReadFile(e.WorkPath(checkpoint.File))
	if !strings.Contains(string(cp), "- 参见 checkpoint-knowledge.md（") {
		t.Errorf("eleven index line:\n%s", cp)
	}
}

// TestSpillAgainAfterACrash runs a spill a second time on the checkpoint it started from,
// with the spill file it wrote: a sync killed after writing checkpoint-decisions.md and
// before its commit, then run again. Nothing is written twice and the index line counts
// the entries the file holds.
func TestSpillAgainAfterACrash(t *testing.T) {
	six := &checkpoint.Template{Template: mustLoad(t, "six")}
	six.Doc = sections.Parse(six.Source, sections.Options{})
	var keys strings.Builder
	for i := range 12 {
		fmt.Fprintf(&keys, "- decision %02d: keep the budget honest, run %02d\n", i, i)
	}
	src := strings.Replace(string(six.Source), "### 🔑 Key Decisions\n", "### 🔑 Key Decisions\n"+keys.String(), 1)
	budgets := map[string]int{"🔑": 300}
	spill := func(files map[string][]byte, extra string) (string, []Spill) {
		doc := six.Parse([]byte(strings.Replace(src, "### 📡", extra+"### 📡", 1)))
		ed := newEditor(doc, six.Spec.Empty)
		sp := spillBudgets(six, ed, budgets, files, "s")
		return string(doc.Render()), sp
	}
	for _, tc := range []struct {
		name  string
		extra string // entries the rerun has that the killed run had not
	}{
		{"same input", ""},
		{"more entries meanwhile", "- decision 12: added after the crash\n- decision 13: and another one\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := map[string][]byte{}
			_, sp1 := spill(first, "")
			if len(sp1) != 1 {
				t.Fatalf("first spill: %+v", sp1)
			}
			again := map[string][]byte{"checkpoint-decisions.md": first["checkpoint-decisions.md"]}
			cp, sp2 := spill(again, tc.extra)
			out := string(again["checkpoint-decisions.md"])
			items := spilledItems([]byte(out))
			seen := map[string]bool{}
			for _, it := range items {
				if seen[it] {
					t.Errorf("%q is twice in the spill file:\n%s", it, out)
				}
				seen[it] = true
			}
			if tc.extra == "" && out != string(first["checkpoint-decisions.md"]) {
				t.Errorf("the rerun changed the spill file:\n%s\nwant\n%s", out, first["checkpoint-decisions.md"])
			}
			if len(sp2) != 1 || sp2[0].Total != len(items) {
				t.Errorf("spill %+v, file holds %d entries", sp2, len(items))
			}
			if want := fmt.Sprintf("- See checkpoint-decisions.md (%d items) - ", len(items)); !strings.Contains(cp, want) {
				t.Errorf("index line %q missing:\n%s", want, cp)
			}
			for i := range 12 {
				d := fmt.Sprintf("decision %02d:", i)
				if !strings.Contains(cp, d) && !strings.Contains(out, d) {
					t.Errorf("%s lost", d)
				}
			}
		})
	}
}
