package sync

import (
	"maps"
	"regexp"
	"strings"
	"sync"
)

// progressSuffix is the `(progress: tasks/<id>/progress.md, last-reconciled-written-at: N)`
// marker a task line may carry; it is kept verbatim while the task exists.
var progressSuffix = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*[-*+] (?:\[[ xX]\] )?(?:🔵|🔄|🟡|✅|❌) (\S+) .*?(\(progress: [^()]*last-reconciled-written-at: [^()]*\))\s*$`)
})

// maxTaskDepth is how deep the task tree is drawn: a task deeper than this is drawn at this
// depth, its line naming its parent. Two spaces per level would otherwise make a deep chain's
// section grow with the square of its length (a 20,000-deep chain: 400 MB).
const maxTaskDepth = 8

// renderTasks renders the task tree from the database (seed 000 §4): one line per task, its
// status icon, its id and its summary; children indented two spaces under their parent, down
// to maxTaskDepth levels. A progress suffix found on an existing line for the same id is kept
// verbatim, unless progress gives the task a new one. With checkboxes (the six template's
// Task Stack), open work is "- [ ]" and finished work "- [x]". Nothing that is not in the
// database appears. The database has no parent cycle (LoadTasks refuses one).
func renderTasks(db *TaskDB, existing []string, checkboxes bool, progress map[string]string) []string {
	suffix := map[string]string{}
	for _, item := range existing {
		for _, l := range strings.Split(item, "\n") {
			if m := progressSuffix().FindStringSubmatch(l); m != nil {
				suffix[m[1]] = m[2]
			}
		}
	}
	maps.Copy(suffix, progress)
	children := map[string][]int{}
	var roots []int
	for i, t := range db.Tasks {
		if t.Parent == "" {
			roots = append(roots, i)
		} else {
			children[t.Parent] = append(children[t.Parent], i)
		}
	}
	line := func(t Task, depth int) string {
		box := ""
		if checkboxes {
			box = "[ ] "
			if t.Status == "done" || t.Status == "abandoned" {
				box = "[x] "
			}
		}
		l := strings.Repeat("  ", min(depth, maxTaskDepth-1)) + "- " + box + taskIcons[t.Status] + " " + t.ID
		if s := strings.TrimSpace(strings.Join(strings.Fields(t.Summary), " ")); s != "" {
			l += " " + s
		}
		if depth >= maxTaskDepth {
			l += " (parent: " + t.Parent + ")"
		}
		if s := suffix[t.ID]; s != "" {
			l += " " + s
		}
		return l
	}
	// Depth first, children in database order, without recursion: a chain may be as deep as
	// the database is long.
	lines := make([]string, 0, len(db.Tasks))
	type frame struct{ task, depth int }
	stack := make([]frame, 0, len(roots))
	for i := len(roots) - 1; i >= 0; i-- {
		stack = append(stack, frame{roots[i], 0})
	}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		t := db.Tasks[f.task]
		lines = append(lines, line(t, f.depth))
		kids := children[t.ID]
		for i := len(kids) - 1; i >= 0; i-- {
			stack = append(stack, frame{kids[i], f.depth + 1})
		}
	}
	return lines
}
