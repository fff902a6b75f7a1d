package hooks

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/templates"
)

// roleText says what a section playing a role is for, for templates whose headings carry
// no directive line of their own (six).
var roleText = map[templates.Role]string{
	templates.RoleIntent:     "what you are working on now and why, in a few lines; quote the user's request",
	templates.RoleNext:       "the very next concrete step",
	templates.RoleDirectives: "how the user wants you to work in this session",
	templates.RoleTasks:      "the open tasks, one `- [ ]` line each, ticked `- [x]` when done",
	templates.RoleStatus:     "what was in progress just before this checkpoint",
	templates.RoleCompleted:  "what this session finished, one line each",
	templates.RoleDecisions:  "each decision with its reason; never delete one: mark it superseded (`~~D3: …~~` or `(superseded by D7)`)",
	templates.RoleDelta:      "written by ckpt from the transcript: leave it as it is",
	templates.RoleCatchAll:   "blockers, open questions, anything that fits nowhere else",
}

// AgentPrompt is the text that tells an agent how to keep session r's files: where they
// are (each path as show writes it), what every section of its template is for, and when
// to append to notes.md and when to rewrite checkpoint.md. It is what `ckpt hooks install
// --claude` installs for Claude Code and what `ckpt agent-prompt` prints for any other
// harness.
func AgentPrompt(cp *checkpoint.Service, r *repo.Repo, show func(path string) string) (string, error) {
	if show == nil {
		show = func(p string) string { return p }
	}
	t, err := cp.LoadTemplate(r.Template())
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if t.Kind == templates.KindFree {
		fmt.Fprintf(&b, `# Your memory files are versioned

ckpt versions the Markdown files of %s (ckpt session %s): every version of every
*.md file there is committed, at the end of each of your turns and before each compaction.
Write them as you like, with whatever headings suit you; delete a file that is no longer
true (the history keeps it). Nothing you write there is ever lost, so prefer rewriting a
stale note to piling up new ones. ckpt log -s %s and ckpt diff -s %s --file NAME show
what changed.
`, "`"+show(r.WorkDir)+"`", "`"+r.ID+"`", r.ID, r.ID)
		return b.String(), nil
	}
	cpPath, notesPath := show(r.WorkPath(checkpoint.File)), show(r.WorkPath(checkpoint.NotesFile))
	fmt.Fprintf(&b, `# Keep the checkpoint of this work

Your context will be compacted, and what it held is then gone. ckpt keeps this work's
memory in two files (ckpt session %s), and commits every version of them, so nothing you
write there is lost:

- %s: the checkpoint, what you need to carry on after a compaction.
- %s: scratch notes, which ckpt merges into the checkpoint and then empties.

## The checkpoint's sections

Keep every heading and every italic line under a heading exactly as it is, and the
sections in their order; rewrite what is under them.

`, "`"+r.ID+"`", "`"+cpPath+"`", "`"+notesPath+"`")
	roles := map[string]templates.Role{}
	for role, id := range t.Spec.Roles {
		if _, taken := roles[id]; !taken || role == templates.RoleStatus {
			roles[id] = role
		}
	}
	for _, s := range t.Doc.Sections {
		what := ""
		if s.Directive != nil {
			what = strings.Trim(strings.TrimSpace(s.DirectiveLine()), "_")
		}
		if role, ok := roles[string(s.ID)]; ok && (what == "" || role == templates.RoleDelta) {
			what = roleText[role]
		}
		if n, ok := t.Spec.MaxOpen[string(s.ID)]; ok {
			what += fmt.Sprintf(" (at most %d open)", n)
		}
		if what == "" {
			what = "as its heading says"
		}
		fmt.Fprintf(&b, "- `%s`: %s.\n", strings.TrimSpace(s.HeadingLine()), strings.TrimSuffix(what, "."))
	}
	if len(t.Spec.Meta) > 0 {
		metas := make([]string, len(t.Spec.Meta))
		for i, m := range t.Spec.Meta {
			metas[i] = "`_" + m + ": …_`"
		}
		fmt.Fprintf(&b, "\nckpt itself keeps the lines %s: leave them.\n", strings.Join(metas, ", "))
	}
	tags := make([]string, 0, len(t.Spec.Routes))
	for tag := range t.Spec.Routes {
		tags = append(tags, tag)
	}
	slices.Sort(tags)
	for i, tag := range tags {
		tags[i] = "`[" + tag + "]`"
	}
	fmt.Fprintf(&b, `
## When to write

- As you work, append to %s one line per thing worth keeping, as soon as it happens:
  `+"`- [decision] use the sqlite backend: the server has no Postgres`"+`. Tags: %s; add `+"`!`"+`
  (`+"`[decision!]`"+`) for what the whole project should remember. Only ever append there: ckpt
  moves the entries into the checkpoint and removes them, and a line you rewrite may be
  lost to that.
- Rewrite %s whole when you finish a piece of work, before you end your turn, and at
  once when you are told that the context is about to be compacted: ckpt takes a full
  checkpoint of it then. Write the whole file in one go.
- After a compaction or a resume the checkpoint comes back to you: carry on from it, and
  look there first for what you knew before.
- Keep exact values (paths, commands, URLs, names) as they are, in backticks.
`, "`"+filepath.Base(notesPath)+"`", strings.Join(tags, ", "), "`"+filepath.Base(cpPath)+"`")
	return b.String(), nil
}
