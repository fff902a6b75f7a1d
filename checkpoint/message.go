package checkpoint

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/ckpt-dev/ckpt/internal/trailer"
	"github.com/ckpt-dev/ckpt/sections"
)

// Trigger says what a commit took: the value of its Ckpt-Trigger trailer. A sync is sparse or
// full whatever ran it; what ran it is the commit's Cause (Ckpt-Cause).
type Trigger string

// The triggers of ckpt's commits.
const (
	TriggerManual Trigger = "manual" // ckpt commit, init, a review of the knowledge graph
	TriggerWrite  Trigger = "write"  // ckpt write
	TriggerSparse Trigger = "sparse" // a sparse sync, whatever ran it
	TriggerFull   Trigger = "full"   // a full sync, whatever ran it
	// TriggerHook and TriggerCron are read from older histories, where a hook's or a cron
	// tick's sync said Ckpt-Trigger: hook|cron (with Ckpt-Mode: sparse|full, or, older
	// still, without); ckpt no longer writes them for a sync.
	TriggerHook    Trigger = "hook"
	TriggerCron    Trigger = "cron"
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
	KeySession = "Ckpt-Session" // the session id
	KeyTrigger = "Ckpt-Trigger" // a Trigger: what was taken
	KeyCause   = "Ckpt-Cause"   // what ran a sync: cron, hook:pre-commit, claude:PreCompact, …
	// KeyMode is read from older histories only: a hook's or cron's sync said
	// Ckpt-Trigger: hook|cron and Ckpt-Mode: sparse|full.
	KeyMode       = "Ckpt-Mode"
	KeySections   = "Ckpt-Sections"   // ids of the checkpoint sections that changed, comma separated
	KeyFiles      = "Ckpt-Files"      // the files that changed, when not only checkpoint.md
	KeyCheckpoint = "Ckpt-Checkpoint" // <session>@<hash>: a code commit's, or a promotion's, checkpoint
	KeySquashed   = "Ckpt-Squashed"   // how many sparse checkpoints gc squashed into this one
	KeyRedacted   = "Ckpt-Redacted"   // rule:count,… of what a redaction replaced (never the values)
	// KeyConversation is "<agent conversation id> <transcript>": the agent conversation
	// (Claude Code's session_id) on whose behalf a hook committed, and its transcript.
	KeyConversation = "Ckpt-Conversation"
)

// Causes of a sync (the Ckpt-Cause trailer); a sync run by hand has none.
const (
	CauseCron = "cron" // a cron tick
	CauseHook = "hook" // a git or agent hook, in histories that did not say which
)

// GitHookCause is the cause of a sync a git hook ran: "hook:pre-commit".
func GitHookCause(hook string) string { return "hook:" + hook }

// ClaudeCause is the cause of a sync a Claude Code hook event ran: "claude:PreCompact".
func ClaudeCause(event string) string { return "claude:" + event }

// causeValue is what a cause may be: a word, then optionally ":" and a name. It goes into a
// trailer, so it never holds white space.
var causeValue = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}(?::[A-Za-z0-9][A-Za-z0-9._-]{0,63})?$`)
})

// ParseCause accepts a cause: "cron", "hook:pre-commit", "claude:PreCompact", …
func ParseCause(s string) (string, error) {
	if !causeValue().MatchString(s) {
		return "", fmt.Errorf("cause %q: want a word, optionally with :name (cron, hook:pre-commit, claude:PreCompact)", s)
	}
	return s, nil
}

// Taken is what a commit took (its trigger: sparse or full for any sync) and what ran it,
// read from its trailers in whichever form its history holds.
type Taken struct {
	Trigger Trigger
	Cause   string // "" for a command run by hand
}

// Sparse reports whether the commit is a sparse checkpoint, whatever ran it.
func (t Taken) Sparse() bool { return t.Trigger == TriggerSparse }

// Full reports whether the commit is a full checkpoint, whatever ran it.
func (t Taken) Full() bool { return t.Trigger == TriggerFull }

// Matches reports whether filter names the commit: its trigger ("sparse", "full", "write",
// …), its cause ("claude:PreCompact"), or what ran it: "hook" for any git or agent hook,
// "cron" for a tick.
func (t Taken) Matches(filter string) bool {
	switch {
	case filter == string(t.Trigger), filter != "" && filter == t.Cause:
		return true
	case filter == CauseHook:
		return t.Cause == CauseHook || strings.HasPrefix(t.Cause, "hook:") || strings.HasPrefix(t.Cause, "claude:")
	}
	return false
}

// ReadTaken reads what a commit took from its trailers (get returns a trailer's value, ""
// when absent). Three forms are read:
//
//   - Ckpt-Trigger: sparse|full with Ckpt-Cause: cron|hook:…|claude:… (what ckpt writes);
//   - Ckpt-Trigger: hook|cron with Ckpt-Mode: sparse|full;
//   - Ckpt-Trigger: hook|cron alone, the oldest: such a sync is taken as sparse when it
//     changed no section but the recovered delta (📡) and no file but checkpoint.md, which
//     is all a sparse sync changes, and as full otherwise.
func ReadTaken(get func(key string) string) Taken {
	t := Taken{Trigger: Trigger(strings.ToLower(strings.TrimSpace(get(KeyTrigger)))), Cause: strings.TrimSpace(get(KeyCause))}
	if t.Trigger != TriggerHook && t.Trigger != TriggerCron {
		return t
	}
	if t.Cause == "" {
		t.Cause = string(t.Trigger)
	}
	switch mode := Trigger(strings.ToLower(strings.TrimSpace(get(KeyMode)))); mode {
	case TriggerSparse, TriggerFull:
		t.Trigger = mode
	default:
		t.Trigger = TriggerFull
		if onlyDelta(get(KeySections)) && strings.TrimSpace(get(KeyFiles)) == "" {
			t.Trigger = TriggerSparse
		}
	}
	return t
}

// onlyDelta reports whether a Ckpt-Sections value names no section but six's recovered delta.
func onlyDelta(secs string) bool {
	for _, s := range strings.Split(secs, ",") {
		if s = strings.TrimSpace(s); s != "" && s != "📡" {
			return false
		}
	}
	return true
}

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

// commitMessage is the message of a checkpoint commit: what it took, what ran it (a sync's
// cause), its sections, and its files unless only the checkpoint changed.
func commitMessage(id string, t Trigger, cause, subject string, secs []sections.ID, files []string) string {
	m := Message{Subject: subject, Trailers: []trailer.Trailer{{Key: KeySession, Value: id}, {Key: KeyTrigger, Value: string(t)}}}
	if cause != "" {
		m.Trailers = append(m.Trailers, trailer.Trailer{Key: KeyCause, Value: cause})
	}
	m.Trailers = append(m.Trailers, trailer.Trailer{Key: KeySections, Value: joinIDs(secs)})
	if len(files) > 0 && !(len(files) == 1 && files[0] == File) {
		m.Trailers = append(m.Trailers, trailer.Trailer{Key: KeyFiles, Value: strings.Join(files, ",")})
	}
	return m.String()
}

// withConversation adds the Ckpt-Conversation trailer to msg when conversation is set.
func withConversation(msg, conversation string) string {
	if conversation == "" {
		return msg
	}
	return trailer.Add(msg, KeyConversation, conversation)
}

// rejectMessage is the message of a write kept under refs/ckpt/rejected/N: the findings of
// the check that refused it.
func rejectMessage(id string, t Trigger, cause string, fs []sections.Finding) string {
	lines := make([]string, len(fs))
	for i, f := range fs {
		lines[i] = fmt.Sprintf("%s:%d: %s: %s", File, f.Line, f.Severity, f.Message)
	}
	m := Message{
		Subject:  fmt.Sprintf("rejected(%s): checkpoint failed check", t),
		Body:     strings.Join(lines, "\n"),
		Trailers: []trailer.Trailer{{Key: KeySession, Value: id}, {Key: KeyTrigger, Value: string(t)}},
	}
	if cause != "" {
		m.Trailers = append(m.Trailers, trailer.Trailer{Key: KeyCause, Value: cause})
	}
	return m.String()
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
