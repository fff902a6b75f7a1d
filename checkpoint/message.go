package checkpoint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ckpt-dev/ckpt/internal/trailer"
	"github.com/ckpt-dev/ckpt/sections"
)

// Trigger names what caused a commit: the value of its Ckpt-Trigger trailer.
type Trigger string

// The triggers of ckpt's commits.
const (
	TriggerManual  Trigger = "manual"  // ckpt commit, init, a review of the knowledge graph
	TriggerWrite   Trigger = "write"   // ckpt write
	TriggerSparse  Trigger = "sparse"  // a sparse sync
	TriggerFull    Trigger = "full"    // a full sync
	TriggerHook    Trigger = "hook"    // a git or agent hook's sync
	TriggerCron    Trigger = "cron"    // a cron tick's sync
	TriggerRestore Trigger = "restore" // ckpt restore
	TriggerMerge   Trigger = "merge"   // a pull's merge, or the commit that finishes one
	// TriggerAutosave marks the commit of uncommitted bytes a command found in a work tree
	// before it replaced files there.
	TriggerAutosave Trigger = "autosave"
	TriggerRedact   Trigger = "redact" // the commit a redaction adds on top
)

// Triggers lists every trigger, in the order the help text gives them.
var Triggers = []Trigger{TriggerManual, TriggerWrite, TriggerSparse, TriggerFull, TriggerHook, TriggerCron, TriggerRestore, TriggerMerge, TriggerAutosave, TriggerRedact}

// ParseTrigger accepts one of Triggers.
func ParseTrigger(s string) (Trigger, error) {
	if t := Trigger(s); slices.Contains(Triggers, t) {
		return t, nil
	}
	names := make([]string, len(Triggers))
	for i, t := range Triggers {
		names[i] = string(t)
	}
	return "", fmt.Errorf("trigger %q: want one of %s", s, strings.Join(names, ", "))
}

// The trailer keys of ckpt's commit messages.
const (
	KeySession    = "Ckpt-Session"    // the session id
	KeyTrigger    = "Ckpt-Trigger"    // a Trigger
	KeyMode       = "Ckpt-Mode"       // sparse or full: a hook's or cron's sync, which the trigger does not say
	KeySections   = "Ckpt-Sections"   // ids of the checkpoint sections that changed, comma separated
	KeyFiles      = "Ckpt-Files"      // the files that changed, when not only checkpoint.md
	KeyCheckpoint = "Ckpt-Checkpoint" // <session>@<hash>: a code commit's, or a promotion's, checkpoint
	KeySquashed   = "Ckpt-Squashed"   // how many sparse checkpoints gc squashed into this one
	KeyRedacted   = "Ckpt-Redacted"   // rule:count,… of what a redaction replaced (never the values)
)

// Message is a commit message in ckpt's format: a subject line, an optional body, then the
// trailers, one `Key: value` line each.
type Message struct {
	Subject, Body string
	Trailers      []trailer.Trailer
}

func (m Message) String() string {
	var b strings.Builder
	b.WriteString(m.Subject + "\n\n")
	if m.Body != "" {
		b.WriteString(m.Body + "\n\n")
	}
	for _, t := range m.Trailers {
		b.WriteString(t.Key + ": " + t.Value + "\n")
	}
	return b.String()
}

// Subject is a checkpoint commit's subject: checkpoint(<trigger>): <what changed>.
func Subject(t Trigger, what string) string {
	what, _, _ = strings.Cut(what, "\n")
	return fmt.Sprintf("checkpoint(%s): %s", t, what)
}

// commitMessage is the message of a checkpoint commit: the sync mode when the trigger does
// not say it, its sections, and its files unless only the checkpoint changed.
func commitMessage(id string, t Trigger, mode, subject string, secs []sections.ID, files []string) string {
	m := Message{Subject: subject, Trailers: []trailer.Trailer{{Key: KeySession, Value: id}, {Key: KeyTrigger, Value: string(t)}}}
	if mode != "" && mode != string(t) { // a hook's or cron's sync: say which it was
		m.Trailers = append(m.Trailers, trailer.Trailer{Key: KeyMode, Value: mode})
	}
	m.Trailers = append(m.Trailers, trailer.Trailer{Key: KeySections, Value: joinIDs(secs)})
	if len(files) > 0 && !(len(files) == 1 && files[0] == File) {
		m.Trailers = append(m.Trailers, trailer.Trailer{Key: KeyFiles, Value: strings.Join(files, ",")})
	}
	return m.String()
}

// rejectMessage is the message of a write kept under refs/ckpt/rejected/N: the findings of
// the check that refused it.
func rejectMessage(id string, t Trigger, fs []sections.Finding) string {
	lines := make([]string, len(fs))
	for i, f := range fs {
		lines[i] = fmt.Sprintf("%s:%d: %s: %s", File, f.Line, f.Severity, f.Message)
	}
	return Message{
		Subject:  fmt.Sprintf("rejected(%s): checkpoint failed check", t),
		Body:     strings.Join(lines, "\n"),
		Trailers: []trailer.Trailer{{Key: KeySession, Value: id}, {Key: KeyTrigger, Value: string(t)}},
	}.String()
}

// MergeMessage is the message of a pull's merge commit, recorded with MERGE_HEAD when the
// merge left conflicts.
func MergeMessage(id, label string) string {
	return Message{
		Subject:  Subject(TriggerMerge, "merge "+label),
		Trailers: []trailer.Trailer{{Key: KeySession, Value: id}, {Key: KeyTrigger, Value: string(TriggerMerge)}},
	}.String()
}

func joinIDs(ids []sections.ID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = string(id)
	}
	return strings.Join(s, ",")
}
