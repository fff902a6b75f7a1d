package sync

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Task is one entry of the task database (the `task` tool's list, as JSON).
type Task struct {
	ID      string `json:"id"`
	Status  string `json:"status"` // open, in_progress, blocked, done, abandoned
	Summary string `json:"summary"`
	Parent  string `json:"parent,omitempty"`
}

// TaskDB is the task database: {"tasks": [...]}.
type TaskDB struct {
	Tasks []Task `json:"tasks"`
}

// taskIcons maps a status to its icon (seed 000).
var taskIcons = map[string]string{
	"open":        "🔵",
	"in_progress": "🔄",
	"blocked":     "🟡",
	"done":        "✅",
	"abandoned":   "❌",
}

// LoadTasks reads and validates a task database file.
func LoadTasks(path string) (*TaskDB, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read task database: %w", err)
	}
	var db TaskDB
	if err := json.Unmarshal(b, &db); err != nil {
		return nil, fmt.Errorf("%s: not a task database: %w", path, err)
	}
	seen := map[string]bool{}
	for i, t := range db.Tasks {
		switch {
		case t.ID == "":
			return nil, fmt.Errorf("%s: task %d has no id", path, i+1)
		case seen[t.ID]:
			return nil, fmt.Errorf("%s: task %s appears twice", path, t.ID)
		case taskIcons[t.Status] == "":
			return nil, fmt.Errorf("%s: task %s: unknown status %q (want open, in_progress, blocked, done or abandoned)", path, t.ID, t.Status)
		}
		seen[t.ID] = true
	}
	for _, t := range db.Tasks {
		if t.Parent != "" && !seen[t.Parent] {
			return nil, fmt.Errorf("%s: task %s: parent %s is not in the database", path, t.ID, t.Parent)
		}
	}
	if cycle := db.parentCycle(); cycle != nil {
		return nil, fmt.Errorf("%s: tasks %s form a parent cycle", path, strings.Join(append(cycle, cycle[0]), " → "))
	}
	return &db, nil
}

// parentCycle returns the ids of a parent cycle (each task's parent is the next, the last's
// the first), or nil. It walks each task's parents once: linear in the tasks.
func (db *TaskDB) parentCycle() []string {
	parent := make(map[string]string, len(db.Tasks))
	for _, t := range db.Tasks {
		parent[t.ID] = t.Parent
	}
	const (
		onPath = 1
		done   = 2
	)
	state := make(map[string]int, len(db.Tasks))
	var path []string
	for _, t := range db.Tasks {
		path = path[:0]
		id := t.ID
		for id != "" && state[id] == 0 {
			state[id] = onPath
			path = append(path, id)
			id = parent[id]
		}
		if id != "" && state[id] == onPath {
			i := slices.Index(path, id)
			return slices.Clone(path[i:])
		}
		for _, p := range path {
			state[p] = done
		}
	}
	return nil
}

// IDs returns the set of task ids.
func (db *TaskDB) IDs() map[string]bool {
	out := make(map[string]bool, len(db.Tasks))
	for _, t := range db.Tasks {
		out[t.ID] = true
	}
	return out
}
