package templates

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuiltinTemplates(t *testing.T) {
	for _, tc := range []struct {
		name     string
		kind     Kind
		contains []string
	}{
		{"six", KindCheckpoint, []string{"### 🎯 Current Task\n", "### ⚠️ Notes & Blockers\n", "_last_updated: "}},
		{"eleven", KindCheckpoint, []string{"## §1 当前意图\n_逐字的用户请求，块引用_\n", "## §3 指令（本次会话）\n", "## §11 开放笔记\n_编写者整理的杂项收容_\n"}},
		{"eleven-en", KindCheckpoint, []string{"## §1 Current Intent\n", "## §7 Discovered Knowledge (cross-task)\n"}},
		{"memory", KindMemory, []string{"## 项目上下文", "## 规则", "## 架构决策", "## 已发现的持久知识"}},
		{"memory-en", KindMemory, []string{"## Rules"}},
		{"notes", KindNotes, []string{"# Notes"}},
		{"notes-zh", KindNotes, []string{"# notes"}},
		{"knowledge", KindKnowledge, []string{"## Accepted", "## Pending review", "## Rejected"}},
		{"free", KindFree, []string{"every Markdown file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tt, err := Load("", tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if tt.Kind != tc.kind || tt.Origin != "builtin" {
				t.Errorf("kind %s origin %s", tt.Kind, tt.Origin)
			}
			for _, c := range tc.contains {
				if !strings.Contains(string(tt.Source), c) {
					t.Errorf("%s lacks %q", tc.name, c)
				}
			}
		})
	}
	// every role of a checkpoint template names one of its sections
	for _, name := range []string{"six", "eleven", "eleven-en"} {
		tt, _ := Load("", name)
		for role, id := range tt.Spec.Roles {
			if !strings.Contains(string(tt.Source), " "+id) {
				t.Errorf("%s: role %s names section %q, which the template lacks", name, role, id)
			}
		}
		for tag, role := range tt.Spec.Routes {
			if tt.Spec.Roles[role] == "" {
				t.Errorf("%s: tag %s routes to role %s, which no section plays", name, tag, role)
			}
		}
	}
}

func TestUserTemplates(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "templates"), 0o755)
	os.WriteFile(filepath.Join(home, "templates", "mine.md"), []byte("## A\n"), 0o644)
	os.WriteFile(filepath.Join(home, "templates", "six.md"), []byte("### 🎯 Goal\n"), 0o644)
	os.WriteFile(filepath.Join(home, "templates", "bad name.md"), []byte("x"), 0o644)
	mine, err := Load(home, "mine")
	if err != nil || mine.Kind != KindCheckpoint || !strings.HasSuffix(mine.Origin, "mine.md") {
		t.Fatalf("mine = %+v, %v", mine, err)
	}
	six, _ := Load(home, "six")
	if string(six.Source) != "### 🎯 Goal\n" || six.Spec.Roles[RoleIntent] != "🎯" {
		t.Errorf("an override keeps the built-in rules with the user's text: %+v", six)
	}
	all, err := List(home)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tt := range all {
		names = append(names, tt.Name)
	}
	if got := strings.Join(names, ","); got != "eleven,eleven-en,free,knowledge,memory,memory-en,mine,notes,notes-zh,six" {
		t.Errorf("List = %s", got)
	}
	for _, bad := range []string{"nope", "../six", "", ".hidden", "a/b"} {
		if _, err := Load(home, bad); !errors.Is(err, ErrUnknown) {
			t.Errorf("Load(%q) = %v, want ErrUnknown", bad, err)
		}
	}
}
