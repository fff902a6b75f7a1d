package sync

import (
	"regexp"
	"strings"
	"sync"
)

// progressSuffix is the `(progress: tasks/<id>/progress.md, last-reconciled-written-at: N)`
// marker a task line may carry; it is kept verbatim while the task exists.
var progressSuffix = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*[-*+] (?:\[[ xX]\] )?(?:🔵|🔄|🟡|✅|❌) (\S+) .*?(\(progress: [^()]*last-reconciled-written-at: [^()]*\))\s*$`)
})

// renderTasks renders the task tree from the database (seed 000 §4): one line per task, its
// status icon, its id and its summary; children indented two spaces under their parent.
// A progress suffix found on an existing line for the same id is kept verbatim. With
// checkboxes (the six template's Task Stack), open work is "- [ ]" and finished work "- [x]".
// Nothing that is not in the database appears.
func renderTasks(db *TaskDB, existing []string, checkboxes bool) []string {
	suffix := map[string]string{}
	for _, item := range existing {
		for _, l := range strings.Split(item, "\n") {
			if m := progressSuffix().FindStringSubmatch(l); m != nil {
				suffix[m[1]] = m[2]
			}
		}
	}
	children := map[string][]Task{}
	var roots []Task
	for _, t := range db.Tasks {
		if t.Parent == "" {
			roots = append(roots, t)
		} else {
			children[t.Parent] = append(children[t.Parent], t)
		}
	}
	var lines []string
	var walk func(t Task, depth int, seen map[string]bool)
	walk = func(t Task, depth int, seen map[string]bool) {
		if seen[t.ID] {
			return // a parent cycle: each task once
		}
		seen[t.ID] = true
		box := ""
		if checkboxes {
			box = "[ ] "
			if t.Status == "done" || t.Status == "abandoned" {
				box = "[x] "
			}
		}
		l := strings.Repeat("  ", depth) + "- " + box + taskIcons[t.Status] + " " + t.ID
		if s := strings.TrimSpace(strings.Join(strings.Fields(t.Summary), " ")); s != "" {
			l += " " + s
		}
		if s := suffix[t.ID]; s != "" {
			l += " " + s
		}
		lines = append(lines, l)
		for _, c := range children[t.ID] {
			walk(c, depth+1, seen)
		}
	}
	seen := map[string]bool{}
	for _, t := range roots {
		walk(t, 0, seen)
	}
	// Tasks whose parents form a cycle have no root; render them at the top level.
	for _, t := range db.Tasks {
		if !seen[t.ID] {
			walk(t, 0, seen)
		}
	}
	return lines
}
