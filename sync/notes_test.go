package sync

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/sections"
	"github.com/ckpt-dev/ckpt/templates"
)

func TestParseNotes(t *testing.T) {
	tmpl := "# Notes\n\n_header_\n"
	for _, tc := range []struct {
		name string
		src  string
		want []note
	}{
		{"template only", tmpl, nil},
		{"tags and durable", tmpl + "\n- [decision] a\n- [rule!] b\n- plain c\n", []note{
			{Line: 5, Tag: "decision", Text: "a", Raw: "- [decision] a"},
			{Line: 6, Tag: "rule", Durable: true, Text: "b", Raw: "- [rule!] b"},
			{Line: 7, Text: "plain c", Raw: "- plain c"},
		}},
		{"continuation lines belong to the entry", tmpl + "- [bug] x crashes\n  because y\n\n  fixed by z\n- next\n", []note{
			{Line: 4, Tag: "bug", Text: "x crashes\n  because y\n\n  fixed by z", Raw: "- [bug] x crashes\n  because y\n\n  fixed by z"},
			{Line: 8, Text: "next", Raw: "- next"},
		}},
		{"a changed header is skipped, stray text kept", "# My notes\n_edited_\n\nloose line\n* [note] star bullet\n", []note{
			{Line: 4, Text: "loose line", Raw: "loose line"},
			{Line: 5, Tag: "note", Text: "star bullet", Raw: "* [note] star bullet"},
		}},
		{"crlf", "# Notes\r\n\r\n- [task] t\r\n", []note{{Line: 3, Tag: "task", Text: "t", Raw: "- [task] t"}}},
		{"checkbox is not a tag", tmpl + "- [ ] (P1) do it\n", []note{{Line: 4, Text: "[ ] (P1) do it", Raw: "- [ ] (P1) do it"}}},
		{"a ticked checkbox is not a tag", tmpl + "- [x] the parser\n", []note{{Line: 4, Text: "[x] the parser", Raw: "- [x] the parser"}}},
		{"links are not tags", tmpl + "- [link](https://e.com/a) b\n- [see][ref] c\n- [ref]: https://e.com\n", []note{
			{Line: 4, Text: "[link](https://e.com/a) b", Raw: "- [link](https://e.com/a) b"},
			{Line: 5, Text: "[see][ref] c", Raw: "- [see][ref] c"},
			{Line: 6, Text: "[ref]: https://e.com", Raw: "- [ref]: https://e.com"},
		}},
		{"an unknown tag is a tag", tmpl + "- [idea!]  try it\n", []note{{Line: 4, Tag: "idea", Durable: true, Text: "try it", Raw: "- [idea!]  try it"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := parseNotes([]byte(tc.src), []byte(tmpl))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParseNotes =\n%#v\nwant\n%#v", got, tc.want)
			}
		})
	}
}

func TestLiterals(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"The DSN is `MC_DB_DSN=postgres://mc_ro@host:5433/exp_2026` and must stay", []string{"`MC_DB_DSN=postgres://mc_ro@host:5433/exp_2026`"}},
		{"run with --seed 2718281 --shard 1/3 please", []string{"--seed 2718281", "--shard 1/3"}},
		{"write /data/runs/2026-06-09/run-7/output.tsv.", []string{"/data/runs/2026-06-09/run-7/output.tsv"}},
		{"see https://example.com/x?y=1, then", []string{"https://example.com/x?y=1"}},
		{"set HF_TOKEN=hf_xxx and PORT=5433", []string{"HF_TOKEN=hf_xxx", "PORT=5433"}},
		{"--workers=8 and postgres://a@b:1/c", []string{"postgres://a@b:1/c", "--workers=8"}},
		{"no literal here, just words and a/b", nil},
	} {
		got := literals(tc.text)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("literals(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestRouting(t *testing.T) {
	six := &checkpoint.Template{Template: mustLoad(t, "six")}
	six.Doc = sections.Parse(six.Source, sections.Options{})
	eleven := &checkpoint.Template{Template: mustLoad(t, "eleven")}
	eleven.Doc = sections.Parse(eleven.Source, sections.Options{})
	for _, tc := range []struct {
		t         *checkpoint.Template
		entry     string
		section   sections.ID
		repo, why string
		overrides map[string]string
		taskOwned bool
	}{
		{six, "- [decision] use x", "🔑", "session", "tag", nil, false},
		{six, "- [task] do x", "📋", "session", "tag", nil, false},
		{six, "- [done] did x", "✅", "session", "tag", nil, false},
		{six, "- [blocker] waiting", "⚠️", "session", "tag", nil, false},
		{six, "- [intent] build x", "🎯", "session", "tag", nil, false},
		{six, "- we decided to use y instead of z", "🔑", "session", "keyword", nil, false},
		{six, "- blocked on review", "⚠️", "session", "keyword", nil, false},
		{six, "- [ ] (P2) write docs", "📋", "session", "keyword", nil, false},
		{six, "- something else entirely", "⚠️", "session", "catch-all", nil, false},
		{six, "- [unknowntag] x", "⚠️", "session", "catch-all", nil, false},
		{six, "- [decision!] durable", "", "memory", "tag", nil, false},
		{six, "- [task] x", "⚠️", "session", "redirected", nil, true},
		{six, "- [note] x", "🔑", "session", "config", map[string]string{"note": "🔑"}, false},
		{eleven, "- [rule] x", "§3", "session", "tag", nil, false},
		{eleven, "- [literal] `x`", "§3", "session", "tag", nil, false},
		{eleven, "- [fact] x", "§7", "session", "tag", nil, false},
		{eleven, "- [bug] x", "§8", "session", "tag", nil, false},
		{eleven, "- [file] x", "§6", "session", "tag", nil, false},
		{eleven, "- [resource] x", "§9", "session", "tag", nil, false},
		{eleven, "- [status] T3 COMPLETE", "§5", "session", "tag", nil, false},
		{eleven, "- [open] x", "§11", "session", "tag", nil, false},
		{eleven, "- [next] x", "§2", "session", "tag", nil, false},
		{eleven, "- [task] x", "§5", "session", "tag", nil, false},
		{eleven, "- X crashes at line 3, fixed by Z", "§8", "session", "keyword", nil, false},
		{eleven, "- 决定采用 SSA", "§10", "session", "keyword", nil, false},
		{eleven, "- always use snake_case", "§3", "session", "keyword", nil, false},
		{eleven, "- 这让我想起项目 X", "§11", "session", "catch-all", nil, false},
	} {
		rt := &router{t: tc.t, overrides: tc.overrides, taskOwned: tc.taskOwned}
		e := parseNotes([]byte(tc.entry), nil)[0]
		r := rt.route(e)
		if r.Dest.Section != tc.section || r.Dest.Repo != tc.repo || r.Dest.Why != tc.why {
			t.Errorf("%s %q → %s %s (%s), want %s %s (%s)", tc.t.Name, tc.entry, r.Dest.Repo, r.Dest.Section, r.Dest.Why, tc.repo, tc.section, tc.why)
		}
	}
}

// TestOddTagsKeepTheirText routes entries that start with a checkbox, a link or an unknown
// tag: each lands with its text as written (an unknown tag in the catch-all, tag kept).
func TestOddTagsKeepTheirText(t *testing.T) {
	six := &checkpoint.Template{Template: mustLoad(t, "six")}
	six.Doc = sections.Parse(six.Source, sections.Options{})
	eleven := &checkpoint.Template{Template: mustLoad(t, "eleven-en")}
	eleven.Doc = sections.Parse(eleven.Source, sections.Options{})
	for _, tc := range []struct {
		t       *checkpoint.Template
		entry   string
		section sections.ID
		line    string
	}{
		{six, "- [x] the parser", "✅", "- [x] the parser"},
		{six, "- [X] the writer", "✅", "- [X] the writer"},
		{six, "- [ ] write the docs", "📋", "- [ ] write the docs"},
		{six, "- [link](https://example.com/a) explains it", "⚠️", "- [link](https://example.com/a) explains it"},
		{six, "- [see docs][ref] for more", "⚠️", "- [see docs][ref] for more"},
		{six, "- [idea] try a trie", "⚠️", "- [idea] try a trie"},
		{six, "- [idea!] we decided on a trie", "⚠️", "- [idea!] we decided on a trie"},
		{six, "- [idea]\ttabbed\n  and continued", "⚠️", "- [idea]\ttabbed\n  and continued"},
		{six, "- [decision] [x] tagged box", "🔑", "- [x] tagged box"},
		{eleven, "- [x] the parser", "§5", "- [x] the parser"},
		{eleven, "- [ ] write the docs", "§5", "- [ ] write the docs"},
		{eleven, "- [link](https://example.com/a) explains it", "§11", "- [link](https://example.com/a) explains it"},
		{eleven, "- [idea] try a trie", "§11", "- [idea] try a trie"},
	} {
		t.Run(tc.t.Name+" "+tc.entry, func(t *testing.T) {
			rt := &router{t: tc.t}
			r := rt.route(parseNotes([]byte(tc.entry), nil)[0])
			if r.Dest.Section != tc.section {
				t.Errorf("section %s, want %s", r.Dest.Section, tc.section)
			}
			if got := renderEntry(tc.t, roleOf(tc.t, r.Dest.Section), r.Tag, r.Entry.Text); got != tc.line {
				t.Errorf("rendered %q, want %q", got, tc.line)
			}
		})
	}
}

func mustLoad(t testing.TB, name string) *templates.Template {
	t.Helper()
	tt, err := templates.Load("", name)
	if err != nil {
		t.Fatal(err)
	}
	return tt
}

func TestRenderTasks(t *testing.T) {
	db, err := LoadTasks(corpusPath("tasks/tasks.json"))
	if err != nil {
		t.Fatal(err)
	}
	existing := []string{"- 🔄 T1 解析 checkpoint 章节\n  - ✅ T2 识别 §N 标题 (progress: tasks/T2/progress.md, last-reconciled-written-at: 3)", "- 🔵 T9 gone (progress: tasks/T9/progress.md, last-reconciled-written-at: 1)"}
	got := strings.Join(renderTasks(db, existing, false, nil), "\n")
	want := `- 🔄 T1 解析 checkpoint 章节
  - ✅ T2 识别 §N 标题 (progress: tasks/T2/progress.md, last-reconciled-written-at: 3)
  - ✅ T3 保留斜体指令行
- 🔵 T4 notes 合并
  - 🟡 T5 cron 调度测试
- ❌ T6 Signal Trap 方案`
	if got != want {
		t.Errorf("RenderTasks =\n%s\nwant\n%s", got, want)
	}
	six := renderTasks(db, nil, true, nil)
	if six[0] != "- [ ] 🔄 T1 解析 checkpoint 章节" || six[1] != "  - [x] ✅ T2 识别 §N 标题" {
		t.Errorf("six rendering: %q", six[:2])
	}
}

// TestRenderDeepTaskChain: a chain deeper than maxTaskDepth is drawn at that depth, each
// line naming its parent, so the section grows with the chain, not with its square.
func TestRenderDeepTaskChain(t *testing.T) {
	db := taskChain(20000)
	lines := renderTasks(db, nil, false, nil)
	if len(lines) != 20000 {
		t.Fatalf("%d lines, want 20000", len(lines))
	}
	indent := strings.Repeat("  ", maxTaskDepth-1)
	for i, want := range map[int]string{
		0:                "- 🔵 T0 step 0",
		1:                "  - 🔵 T1 step 1",
		maxTaskDepth - 1: indent + "- 🔵 T7 step 7",
		maxTaskDepth:     indent + "- 🔵 T8 step 8 (parent: T7)",
		19999:            indent + "- 🔵 T19999 step 19999 (parent: T19998)",
	} {
		if lines[i] != want {
			t.Errorf("line %d = %q, want %q", i, lines[i], want)
		}
	}
	size := 0
	for _, l := range lines {
		size += len(l) + 1
	}
	if size > 64*len(lines) {
		t.Errorf("the section takes %d bytes for %d tasks", size, len(lines))
	}
}

// taskChain is a database of n tasks, each the parent of the next.
func taskChain(n int) *TaskDB {
	db := &TaskDB{Tasks: make([]Task, n)}
	for i := range db.Tasks {
		db.Tasks[i] = Task{ID: fmt.Sprintf("T%d", i), Status: "open", Summary: fmt.Sprintf("step %d", i)}
		if i > 0 {
			db.Tasks[i].Parent = fmt.Sprintf("T%d", i-1)
		}
	}
	return db
}

func TestLoadTasksErrors(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct{ src, msg string }{
		"not json":       {"{", "not a task database"},
		"no id":          {`{"tasks":[{"status":"open"}]}`, "task 1 has no id"},
		"duplicate":      {`{"tasks":[{"id":"A","status":"open"},{"id":"A","status":"open"}]}`, "task A appears twice"},
		"bad status":     {`{"tasks":[{"id":"A","status":"later"}]}`, `task A: unknown status "later"`},
		"missing parent": {`{"tasks":[{"id":"M1","status":"open"},{"id":"M2","status":"open","parent":"M9"}]}`, "task M2: parent M9 is not in the database"},
		"cycle":          {`{"tasks":[{"id":"R0","status":"open"},{"id":"M1","status":"open","parent":"M3"},{"id":"M2","status":"blocked","parent":"M1"},{"id":"M3","status":"open","parent":"M2"},{"id":"M4","status":"open","parent":"M3"}]}`, "tasks M1 → M3 → M2 → M1 form a parent cycle"},
		"own parent":     {`{"tasks":[{"id":"M1","status":"open","parent":"M1"}]}`, "tasks M1 → M1 form a parent cycle"},
	} {
		p := dir + "/" + strings.ReplaceAll(name, " ", "-") + ".json"
		if err := writeFile(p, tc.src); err != nil {
			t.Fatal(err)
		}
		_, err := LoadTasks(p)
		if err == nil || !strings.HasPrefix(err.Error(), p+": ") || !strings.Contains(err.Error(), tc.msg) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err = %v, want one line naming the file and %q", name, err, tc.msg)
		}
	}
}
