// Package templates holds the embedded templates (six, eleven, eleven-en, memory, notes,
// knowledge, free) and the rules that come with each: which sections it has, where notes entries
// are routed, section budgets and the checks that apply. A file <home>/templates/NAME.md adds a
// template or overrides the text of a built-in one (the built-in rules are kept).
package templates

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
)

//go:embed builtin/*.md
var builtinFS embed.FS

// Kind says what a template is for.
type Kind string

// The kinds of template.
const (
	KindCheckpoint Kind = "checkpoint"
	KindNotes      Kind = "notes"
	KindMemory     Kind = "memory"
	KindKnowledge  Kind = "knowledge"
	// KindFree is a directory of Markdown files an agent already writes (ckpt track): every
	// *.md file versioned as it is, sections parsed for log, diff and merge, none required.
	KindFree Kind = "free"
)

// Role names a section by what it holds, so sync can find "the decisions section" in any
// template without knowing its id.
type Role string

// Section roles used by sync.
const (
	RoleIntent     Role = "intent"     // six 🎯, eleven §1
	RoleNext       Role = "next"       // eleven §2
	RoleDirectives Role = "directives" // eleven §3
	RoleTasks      Role = "tasks"      // six 📋, eleven §4
	RoleStatus     Role = "status"     // eleven §5: current work
	RoleCompleted  Role = "completed"  // six ✅
	RoleDecisions  Role = "decisions"  // six 🔑, eleven §10
	RoleDelta      Role = "delta"      // six 📡
	RoleCatchAll   Role = "catchall"   // six ⚠️, eleven §11
	RoleRules      Role = "rules"      // memory: rules
	RoleFacts      Role = "facts"      // memory: durable knowledge
	RoleContext    Role = "context"    // memory: project context
)

// Keyword routes an untagged notes entry: the first rule whose pattern matches wins.
type Keyword struct {
	Pattern func() *regexp.Regexp // compiled on first use
	Tag     string                // the tag the entry is treated as having
	// Match, when set, decides instead of Pattern (status language is told by its shape).
	Match func(string) bool
}

// Matches reports whether the rule routes an entry whose first line is text.
func (k Keyword) Matches(text string) bool {
	if k.Match != nil {
		return k.Match(text)
	}
	return k.Pattern().MatchString(text)
}

// Spec is the set of rules that comes with a template.
type Spec struct {
	Notes  string // companion notes template (checkpoint kinds)
	Memory string // companion memory template (checkpoint kinds)
	// Meta lists the metadata lines (`_key: value_`) that ckpt maintains.
	Meta []string
	// Blockquote is the section that must hold at least one blockquote (an error otherwise).
	Blockquote string
	// MaxOpen caps the open `- [ ]` items of a section (a warning beyond).
	MaxOpen map[string]int
	// Roles maps a role to the section id that plays it.
	Roles map[Role]string
	// Routes maps a notes tag (without brackets or `!`) to a role.
	Routes map[string]Role
	// Durable maps a tag marked with `!` to the memory role it is copied to.
	Durable map[string]Role
	// Keywords route untagged entries; unmatched ones go to RoleCatchAll.
	Keywords []Keyword
	// Budgets caps each section's body, in bytes. 0 means no budget.
	Budgets map[string]int
	// Empty is the placeholder body line of an empty section ("(无)"), if the template uses one.
	Empty string
	// SpillIndex formats the index line left behind by a spill: file, count, summary.
	SpillIndex string
	// Lang is the language of the lines ckpt writes into the template's files ("zh" for
	// Chinese, "" for English): a paraphrase line, the session's progress file.
	Lang string
	// Rolling sections are rewritten as a matter of course (the current task, the recovered
	// delta): the shrink guard lets a write remove their entries.
	Rolling []string
}

// Template is one template: its text and its rules.
type Template struct {
	Name    string
	Kind    Kind
	Summary string
	Source  []byte
	// Origin is "builtin" or the path of the user file that provides the text.
	Origin string
	Spec   Spec
}

// ErrUnknown is returned for a template name that is neither built in nor in the user's
// templates directory.
var ErrUnknown = errors.New("unknown template")

// validName keeps template names to plain file names.
var validName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`) })

type builtin struct {
	kind    Kind
	summary string
	spec    Spec
}

// builtins are the embedded templates by name; built on first use, not by every process
// at start.
var builtins = sync.OnceValue(func() map[string]builtin {
	return map[string]builtin{
		"six": {KindCheckpoint, "6-section session checkpoint (seed 002), sections identified by emoji", sixSpec()},
		"eleven": {KindCheckpoint, "11-section checkpoint (seed 000), Chinese headings, sections identified by §N",
			elevenSpec("notes-zh", "memory", "(无)", "- 参见 %s（%d 项）- %s", "zh")},
		"eleven-en": {KindCheckpoint, "the eleven template with English headings",
			elevenSpec("notes", "memory-en", "(none)", "- See %s (%d items) - %s", "")},
		"memory":    {KindMemory, "4-section project MEMORY.md (seed 000), Chinese headings", memorySpec("规则", "已发现的持久知识", "架构决策", "项目上下文")},
		"memory-en": {KindMemory, "4-section project MEMORY.md, English headings", memorySpec("rules", "discovered durable knowledge", "architecture decisions", "project context")},
		"notes":     {KindNotes, "scratch notes.md that sync merges and resets", Spec{}},
		"notes-zh":  {KindNotes, "scratch notes.md with a Chinese header (used by eleven)", Spec{}},
		"knowledge": {KindKnowledge, "knowledge-graph.md (L1): promoted Key Decisions", Spec{}},
		"free":      {KindFree, "an agent's own memory directory (ckpt track): every *.md file, no required sections", Spec{}},
	}
})

// Names of the built-in checkpoint template used when none is given.
const Default = "six"

// Free is the template of a tracked memory directory (KindFree).
const Free = "free"

// Load returns the named template: the user's file <home>/templates/NAME.md if it exists
// (keeping a built-in template's rules), else the built-in one.
func Load(home, name string) (*Template, error) {
	if !validName().MatchString(name) {
		return nil, fmt.Errorf("template %q: %w", name, ErrUnknown)
	}
	b, isBuiltin := builtins()[name]
	if home != "" {
		path := filepath.Join(home, "templates", name+".md")
		src, err := os.ReadFile(path)
		switch {
		case err == nil:
			t := &Template{Name: name, Source: src, Origin: path}
			if isBuiltin {
				t.Kind, t.Summary, t.Spec = b.kind, b.summary, b.spec
			} else {
				t.Kind, t.Summary = KindCheckpoint, "user template"
				t.Spec = Spec{Notes: "notes", Memory: "memory-en"}
			}
			return t, nil
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("read template %s: %w", path, err)
		}
	}
	if !isBuiltin {
		return nil, fmt.Errorf("template %q: %w", name, ErrUnknown)
	}
	src, err := builtinFS.ReadFile("builtin/" + name + ".md")
	if err != nil {
		return nil, fmt.Errorf("template %q: %w", name, err)
	}
	return &Template{Name: name, Kind: b.kind, Summary: b.summary, Source: src, Origin: "builtin", Spec: b.spec}, nil
}

// List returns every template, built-in and user, sorted by name. A user file that overrides
// a built-in template appears once, with its path as origin.
func List(home string) ([]*Template, error) {
	names := map[string]bool{}
	for n := range builtins() {
		names[n] = true
	}
	if home != "" {
		entries, err := os.ReadDir(filepath.Join(home, "templates"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("list templates: %w", err)
		}
		for _, e := range entries {
			n, ok := strings.CutSuffix(e.Name(), ".md")
			if ok && !e.IsDir() && validName().MatchString(n) {
				names[n] = true
			}
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	out := make([]*Template, 0, len(sorted))
	for _, n := range sorted {
		t, err := Load(home, n)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// IsBuiltin reports whether name is one of the embedded templates.
func IsBuiltin(name string) bool {
	_, ok := builtins()[name]
	return ok
}

// Section returns the id of the section that plays role r, or "".
func (s Spec) Section(r Role) string { return s.Roles[r] }
