package sync

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/knowledge"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
	"github.com/ckpt-dev/ckpt/templates"
)

// Subagent progress (seed 000, §4 and round 2). A subagent writes what it did for its task
// into <task dir>/<id>/progress.md: its §4 holds the verbatim commands it ran, its §5 its
// results and findings. A full sync reconciles each progress file that is NEW (its task line
// carries no last-reconciled-written-at mark) or CHANGED (the mark differs from the file's
// written-at): the commands go byte for byte into the current-work section, the findings
// into the knowledge section, the task line gets
// "(progress: tasks/<id>/progress.md, last-reconciled-written-at: <written-at>)", and the
// session's own progress file, ProgressFile, keeps a subsection per task. ckpt never writes
// a task's progress.md.
//
// Which progress files are NEW or CHANGED is the subagent progress block's to say when notes
// hold one (lines "NEW tasks/T7/progress.md written-at: 5", tagged [progress] or not);
// without one, ckpt works it out itself from the files in the task directory.

// ProgressFile is the session-level progress file: task narratives by task id.
const ProgressFile = "checkpoint-progress.md"

// maxProgress bounds a progress.md ckpt reads: the subagent's file may be anything.
const maxProgress = 1 << 20

// progressItem is one task whose progress.md is to be reconciled.
type progressItem struct {
	Task      string
	State     string // NEW or CHANGED
	WrittenAt string
	Line      int // the notes line of the block entry that named it, 0 when found by ckpt
}

var (
	// progressBlockLine is a line of the subagent progress block.
	progressBlockLine = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(NEW|CHANGED)\s*[:：]?\s+(?:tasks/)?([A-Za-z0-9][A-Za-z0-9._-]*?)(?:/progress\.md)?[\s,;(]+.*?written-at\s*[:=]?\s*([^\s,;()]+)`)
	})
	// writtenAtLine is a progress file's own written-at: "written-at: 5", "_written_at: 5_".
	writtenAtLine = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?im)^\s*_?written[-_ ]at\s*[:=]\s*([^\s_]+)_?\s*$`)
	})
	// taskIDValue is a task id that can name a directory.
	taskIDValue = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`) })
)

// progressEntry reads a notes entry as a line of the subagent progress block.
func progressEntry(e note) (progressItem, bool) {
	if e.Tag != "" && e.Tag != "progress" {
		return progressItem{}, false
	}
	m := progressBlockLine().FindStringSubmatch(strings.TrimSpace(firstLine(e.Text)))
	if m == nil || strings.Contains(m[2], "..") {
		return progressItem{}, false
	}
	return progressItem{Task: m[2], State: m[1], WrittenAt: m[3], Line: e.Line}, true
}

func progressMark(id, writtenAt string) string {
	return fmt.Sprintf("(progress: tasks/%s/progress.md, last-reconciled-written-at: %s)", id, writtenAt)
}

// reconciledMarks are the last-reconciled-written-at marks of the task lines in items: id →
// written-at.
var markValue = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`last-reconciled-written-at:\s*([^\s()]+)`)
})

func reconciledMarks(items []string) map[string]string {
	out := map[string]string{}
	for _, item := range items {
		for _, l := range strings.Split(item, "\n") {
			if m := progressSuffix().FindStringSubmatch(l); m != nil {
				if v := markValue().FindStringSubmatch(m[2]); v != nil {
					out[m[1]] = v[1]
				}
			}
		}
	}
	return out
}

// taskProgress is one reconciled progress.md.
type taskProgress struct {
	progressItem
	Commands []byte   // §4, as written
	Findings []string // §5's items
}

// ProgressReport says what a sync reconciled from one task's progress.md.
type ProgressReport struct {
	Task      string `json:"task"`
	State     string `json:"state"` // NEW or CHANGED
	WrittenAt string `json:"written_at"`
	File      string `json:"file"`
	Commands  bool   `json:"commands"` // its verbatim commands were copied
	Findings  int    `json:"findings"`
}

// findProgress decides which progress files to reconcile: those the block names, else those
// in dir (a task directory) whose written-at differs from their task line's mark. Only the
// tasks of db are looked at when there is one, else those with a task line.
func findProgress(dir string, block []progressItem, db *TaskDB, marks map[string]string) (items []progressItem, warnings []string) {
	if len(block) > 0 {
		return block, nil
	}
	if dir == "" {
		return nil, nil
	}
	var ids []string
	if db != nil {
		for _, t := range db.Tasks {
			ids = append(ids, t.ID)
		}
	} else {
		for id := range marks {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		if !taskIDValue().MatchString(id) || strings.Contains(id, "..") {
			continue
		}
		src, err := readProgress(filepath.Join(dir, id, "progress.md"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			warnings = append(warnings, err.Error())
			continue
		}
		w := writtenAt(src, filepath.Join(dir, id, "progress.md"))
		switch old, ok := marks[id]; {
		case !ok:
			items = append(items, progressItem{Task: id, State: "NEW", WrittenAt: w})
		case old != w:
			items = append(items, progressItem{Task: id, State: "CHANGED", WrittenAt: w})
		}
	}
	return items, warnings
}

// writtenAt is a progress file's written-at: the value it states, else its modification
// time.
func writtenAt(src []byte, path string) string {
	if m := writtenAtLine().FindSubmatch(src); m != nil {
		return string(m[1])
	}
	if fi, err := os.Stat(path); err == nil {
		return checkpoint.FormatTime(fi.ModTime())
	}
	return "0"
}

// readProgress reads a subagent's progress.md: a regular file of at most 1 MiB.
func readProgress(path string) ([]byte, error) {
	return repo.ReadRegularFile(path, maxProgress)
}

// parseProgress reads a progress.md's §4 (verbatim commands) and §5 (results and findings).
// A section is found by its §N id, else by its title ("commands", "逐字"; "result",
// "finding", "结果", "发现").
func parseProgress(src []byte) (commands []byte, findings []string) {
	doc := sections.Parse(src, sections.Options{})
	find := func(id sections.ID, words ...string) *sections.Section {
		if s := doc.Section(id); s != nil {
			return s
		}
		for i := range doc.Sections {
			title := strings.ToLower(doc.Sections[i].Title())
			for _, w := range words {
				if strings.Contains(title, w) {
					return &doc.Sections[i]
				}
			}
		}
		return nil
	}
	if s := find("§4", "command", "逐字", "命令"); s != nil {
		commands = trimBlankLines(s.Body)
		if p := strings.TrimSpace(string(commands)); p == "(none)" || p == "(无)" {
			commands = nil
		}
	}
	if s := find("§5", "result", "finding", "结果", "发现"); s != nil {
		for _, it := range newEditor(doc, "").itemsRaw(s.ID) {
			if t := knowledge.ItemText(it); t != "" && t != "(none)" && t != "(无)" {
				findings = append(findings, t)
			}
		}
	}
	return commands, findings
}

// trimBlankLines drops the blank lines that start and end b, and the line ending of its
// last line; the lines between are kept byte for byte.
func trimBlankLines(b []byte) []byte {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 || len(bytes.TrimSpace(b[:i])) != 0 {
			break
		}
		b = b[i+1:]
	}
	for len(b) > 0 {
		i := bytes.LastIndexByte(bytes.TrimRight(b, "\r\n"), '\n')
		if len(bytes.TrimSpace(b[i+1:])) != 0 {
			break
		}
		b = b[:max(i, 0)]
	}
	return bytes.TrimRight(b, "\r\n")
}

// reconcileProgress reads each item's progress.md from dir and brings it into the
// checkpoint (commands to the current-work section, findings to the knowledge section) and
// into the session's progress file (in files). It returns the marks for the task lines (id
// → mark) and what it did.
func reconcileProgress(t *checkpoint.Template, ed *editor, files map[string][]byte, dir string, items []progressItem, db *TaskDB) (marks map[string]string, reps []ProgressReport, warnings []string) {
	marks = map[string]string{}
	work := t.Section(templates.RoleStatus)
	if work == "" {
		work = t.Section(templates.RoleCatchAll)
	}
	know := t.Section("knowledge")
	if know == "" {
		know = t.Section(templates.RoleCatchAll)
	}
	var done []taskProgress
	for _, it := range items {
		rel := "tasks/" + it.Task + "/progress.md"
		if dir == "" {
			warnings = append(warnings, fmt.Sprintf("%s: listed as %s, but no task directory is known (--task-dir); not reconciled", rel, it.State))
			continue
		}
		path := filepath.Join(dir, it.Task, "progress.md")
		src, err := readProgress(path)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%s: listed as %s, not reconciled: %v", rel, it.State, err))
			continue
		}
		tp := taskProgress{progressItem: it}
		tp.Commands, tp.Findings = parseProgress(src)
		rep := ProgressReport{Task: it.Task, State: it.State, WrittenAt: it.WrittenAt, File: rel}
		if len(tp.Commands) > 0 && ed.doc.Section(work) != nil && !bytes.Contains(ed.doc.Section(work).Body, tp.Commands) {
			intro := fmt.Sprintf("- %s verbatim commands (%s, written-at %s):", it.Task, rel, it.WrittenAt)
			if t.Spec.Lang == "zh" {
				intro = fmt.Sprintf("- %s 逐字命令（%s，written-at %s）：", it.Task, rel, it.WrittenAt)
			}
			ed.add(work, intro+"\n"+string(bytes.ReplaceAll(tp.Commands, []byte("\r\n"), []byte("\n"))), false)
			rep.Commands = true
		}
		for _, f := range tp.Findings {
			line := it.Task + ": " + f
			if ed.doc.Section(know) != nil && !ed.present(know, line) {
				ed.add(know, "- "+line, false)
				rep.Findings++
			}
		}
		marks[it.Task] = progressMark(it.Task, it.WrittenAt)
		reps = append(reps, rep)
		done = append(done, tp)
	}
	if len(done) > 0 {
		files[ProgressFile] = updateProgressFile(t, files[ProgressFile], done, db)
	}
	return marks, reps, warnings
}

// updateProgressFile keeps the session's progress file (seed 000: "the session-level
// progress.md", task narratives under "### T1: <summary>"): a subsection for each reconciled
// task, created where missing, then what was reconciled, each line once. What the agent
// wrote there is kept as it is.
func updateProgressFile(t *checkpoint.Template, src []byte, done []taskProgress, db *TaskDB) []byte {
	zh := t.Spec.Lang == "zh"
	if len(src) == 0 {
		if zh {
			src = []byte("# 会话进度\n\n_按任务 ID 组织的任务叙述。`ckpt sync` 追加它从子代理的 tasks/<id>/progress.md 整合的内容；其余由你编写。_\n")
		} else {
			src = []byte("# Session progress\n\n_Task narratives by task id. `ckpt sync` adds what it reconciles from subagents' tasks/<id>/progress.md; the rest is yours._\n")
		}
	}
	summaries := map[string]string{}
	if db != nil {
		for _, tk := range db.Tasks {
			summaries[tk.ID] = strings.Join(strings.Fields(tk.Summary), " ")
		}
	}
	doc := sections.Parse(src, sections.Options{Level: 3})
	ed := newEditor(doc, "")
	for _, tp := range done {
		sec := progressSection(doc, tp.Task)
		if sec == nil {
			heading := "### " + tp.Task
			if s := summaries[tp.Task]; s != "" {
				sep := ": "
				if zh {
					sep = "："
				}
				heading += sep + s
			}
			out := doc.Render()
			if len(out) > 0 && out[len(out)-1] != '\n' {
				out = append(out, '\n')
			}
			out = append(out, "\n"+heading+"\n"...)
			doc = sections.Parse(out, sections.Options{Level: 3})
			ed = newEditor(doc, "")
			sec = progressSection(doc, tp.Task)
			if sec == nil {
				continue
			}
		}
		id := sec.ID
		line := fmt.Sprintf("- written-at %s: reconciled tasks/%s/progress.md (%s)", tp.WrittenAt, tp.Task, strings.ToLower(tp.State))
		if zh {
			line = fmt.Sprintf("- written-at %s：已整合 tasks/%s/progress.md（%s）", tp.WrittenAt, tp.Task, tp.State)
		}
		if !ed.present(id, line) {
			ed.add(id, line, false)
		}
		for _, f := range tp.Findings {
			if !ed.present(id, f) {
				ed.add(id, "- "+f, false)
			}
		}
	}
	return doc.Render()
}

// progressSection is the subsection of the progress file for task id: "### T7", "### T7:
// …", "### T7：…".
func progressSection(doc *sections.Document, task string) *sections.Section {
	for i := range doc.Sections {
		title := doc.Sections[i].Title()
		if title == task || strings.HasPrefix(title, task+":") || strings.HasPrefix(title, task+"：") || strings.HasPrefix(title, task+" ") {
			return &doc.Sections[i]
		}
	}
	return nil
}

// markTaskLines sets the progress marks on the task lines of the task section when it is not
// rendered from a task database: each line whose id has a new mark gets it in place of its
// old one.
func markTaskLines(ed *editor, id sections.ID, marks map[string]string) {
	if len(marks) == 0 || ed.doc.Section(id) == nil {
		return
	}
	items := ed.itemsRaw(id)
	changed := false
	for i, item := range items {
		lines := strings.Split(item, "\n")
		for j, l := range lines {
			m := taskLineID().FindStringSubmatch(l)
			if m == nil || marks[m[1]] == "" {
				continue
			}
			if s := progressSuffix().FindStringSubmatch(l); s != nil {
				l = strings.TrimRight(strings.TrimSuffix(strings.TrimRight(l, " \t"), s[2]), " \t")
			}
			lines[j] = l + " " + marks[m[1]]
			changed = true
		}
		items[i] = strings.Join(lines, "\n")
	}
	if changed {
		ed.setContent(id, items)
	}
}

var taskLineID = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*[-*+] (?:\[[ xX]\] )?(?:🔵|🔄|🟡|✅|❌) (\S+)`)
})
