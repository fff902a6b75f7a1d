package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTasksDoc holds docs/tasks.md to what ckpt does: its example task database is valid,
// and ckpt sync renders it into §4 as the page shows.
func TestTasksDoc(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "tasks.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```(json|markdown)\n(.*?)```").FindAllSubmatch(doc, -1)
	if len(blocks) != 2 {
		t.Fatalf("docs/tasks.md: want a json and a markdown block, found %d blocks", len(blocks))
	}
	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.json")
	if err := os.WriteFile(tasks, blocks[0][2], 0o644); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "store")
	run := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
			Getenv: func(k string) string {
				return map[string]string{"CKPT_AUTHOR_NAME": "t", "CKPT_AUTHOR_EMAIL": "t@example.com"}[k]
			},
			Getwd:    func() (string, error) { return dir, nil },
			LookPath: func(string) (string, error) { return "", os.ErrNotExist },
		}
		if code := Main(append([]string{"--home", home}, args...), env); code != 0 {
			t.Fatalf("ckpt %v: exit %d\n%s", args, code, errb.String())
		}
		return out.String()
	}
	run("init", "-s", "doc", "--template", "eleven-en")
	run("sync", "-s", "doc", "--full", "--tasks", tasks)
	got := run("show", "-s", "doc", "--section", "§4")
	for _, line := range strings.Split(strings.TrimSpace(string(blocks[1][2])), "\n") {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("§4 lacks the documented line %q:\n%s", line, got)
		}
	}
}
