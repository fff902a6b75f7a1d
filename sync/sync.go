// Package sync reconciles a session's files (seed 002's sparse and full checkpoints): `Sync`
// routes notes.md into the checkpoint section by section, keeps every literal, tidies §3,
// recovers the delta from transcripts and logs, renders the task tree, spills sections over
// budget, and promotes Key Decisions into the knowledge graph. The result is committed
// through package checkpoint, the one path to a commit.
//
// It never prints: results come back as values for cmd/ckpt to show.
package sync

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/delta"
	"github.com/ckpt-dev/ckpt/internal/failpoint"
	"github.com/ckpt-dev/ckpt/internal/hint"
	"github.com/ckpt-dev/ckpt/knowledge"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
	"github.com/ckpt-dev/ckpt/templates"
)

// Service syncs sessions; it commits through the checkpoint service it is given, and
// reaches the store and its configuration through it.
type Service struct {
	cp *checkpoint.Service
}

// New returns a Service over cp.
func New(cp *checkpoint.Service) *Service { return &Service{cp: cp} }

func names(m map[string][]byte) []string { return slices.Sorted(maps.Keys(m)) }

// Modes of a sync.
const (
	Sparse = "sparse" // recovered delta and metadata only: cheap enough for every agent turn
	Full   = "full"   // sparse, plus notes, MEMORY.md, task tree, budgets, promotion
)

// Options of one sync.
type Options struct {
	Mode       string // Sparse or Full
	DryRun     bool
	Transcript string // a Claude Code or generic JSONL transcript (remembered for later syncs)
	// Recorded is the transcript recorded for the session (ckpt init --transcript, a hook's
	// binding): followed when Transcript is empty and no earlier sync followed one.
	Recorded string
	Logs     []string // daily logs memory/YYYY-MM-DD.md
	Tasks    string   // task database (JSON)
	// Cause is what ran the sync, the commit's Ckpt-Cause trailer (cron, hook:pre-commit,
	// claude:PreCompact; checkpoint.ParseCause); "" when run by hand. Its Ckpt-Trigger is
	// the mode, whatever ran it.
	Cause string
	// AllowShrink lets the agent's checkpoint lose more entries than the shrink guard allows.
	AllowShrink bool

	autosaved bool // the work tree was committed as it was, before this attempt
}

// Report says what a sync did (or, with DryRun, would do).
type Report struct {
	Session string `json:"session"`
	// Autosave is the commit of the work tree as it was, made first when the sync would
	// replace bytes no commit holds.
	Autosave   *checkpoint.Autosave  `json:"autosave,omitempty"`
	Mode       string                `json:"mode"`
	DryRun     bool                  `json:"dry_run"`
	Commit     string                `json:"commit,omitempty"`
	Changed    bool                  `json:"changed"`
	Knowledge  string                `json:"knowledge_commit,omitempty"`
	Entries    []EntryReport         `json:"entries"`
	Spills     []Spill               `json:"spills"`
	Promotions []knowledge.Promotion `json:"promotions"`
	Moved      []MovedLine           `json:"moved"`
	Delta      delta.Report          `json:"delta"`
	Tasks      int                   `json:"tasks"`
	Warnings   []string              `json:"warnings"`
	// Changes are the section changes of checkpoint.md, for --dry-run's diff.
	Changes []sections.Change `json:"-"`
	// Files are the files that changed, with their old and new bytes, for --dry-run.
	Files []FileChange `json:"-"`
}

// EntryReport is where one notes entry went.
type EntryReport struct {
	Line     int         `json:"line"`
	Tag      string      `json:"tag"`
	Durable  bool        `json:"durable"`
	Text     string      `json:"text"`
	Dest     Destination `json:"destination"`
	Literals []string    `json:"literals"`
}

// MovedLine is a §3 line that sync moved or removed (seed 000's rules for §3).
type MovedLine struct {
	Line   string      `json:"line"`
	From   sections.ID `json:"from"`
	To     sections.ID `json:"to,omitempty"` // "" when removed (already in MEMORY.md)
	Reason string      `json:"reason"`
}

// FileChange is one file a sync changes.
type FileChange struct {
	Repo     string // "session" or "knowledge"
	Name     string
	Old, New []byte
}

// ErrLiteralLost aborts a sync that would drop an exact literal from a notes entry.
var ErrLiteralLost = errors.New("literal would be lost")

// Sync reconciles a session: the recovered delta (sparse and full) and, for a full sync,
// notes.md routed into the checkpoint and MEMORY.md, §3 upkeep, the task tree, budgets and
// spill files, and the promotion of Key Decisions to the knowledge graph. The session's new
// files (notes.md reset to its template) are one commit, and the knowledge repository's
// change is one commit applied with it: all or nothing. A dry run writes nothing.
func (s *Service) Sync(r *repo.Repo, o Options) (*Report, error) {
	if o.Mode == "" {
		o.Mode = Full
	}
	if o.Mode != Full && o.Mode != Sparse {
		return nil, fmt.Errorf("sync mode %q: want %s or %s", o.Mode, Sparse, Full)
	}
	if o.Cause != "" {
		if _, err := checkpoint.ParseCause(o.Cause); err != nil {
			return nil, err
		}
	}
	unlock, err := s.cp.Store.Lock(r.LockName, true)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return checkpoint.Retry(func() (*Report, error) { return s.syncOnce(r, o) })
}

// syncOnce is one attempt of Sync under the session's lock. It fails with
// repo.ErrWorkTreeChanged, having changed nothing, when a file it would replace changed
// since it read it; notes appended to notes.md meanwhile are not such a change: they stay
// after the reset notes for the next sync.
func (s *Service) syncOnce(r *repo.Repo, o Options) (*Report, error) {
	if err := s.cp.Recover(r); err != nil {
		return nil, err
	}
	rep := &Report{Session: r.ID, Mode: o.Mode, DryRun: o.DryRun, Entries: []EntryReport{}, Spills: []Spill{}, Promotions: []knowledge.Promotion{}, Moved: []MovedLine{}, Warnings: []string{}}
	t, err := s.cp.LoadTemplate(r.Template())
	if err != nil {
		return nil, err
	}
	var db *TaskDB
	if o.Tasks != "" {
		if db, err = LoadTasks(o.Tasks); err != nil {
			return nil, err
		}
	}
	head, old, err := checkpoint.HeadFiles(r)
	if err != nil {
		return nil, err
	}
	files, err := r.WorkFiles()
	if err != nil {
		return nil, err
	}
	disk := maps.Clone(files)
	cp, ok := files[checkpoint.File]
	if !ok {
		return nil, hint.New(fmt.Errorf("%s: missing from the work tree", r.WorkPath(checkpoint.File)), "bring it back with ckpt restore -s %s --rev HEAD", r.ID)
	}
	doc := t.Parse(cp)
	ed := newEditor(doc, t.Spec.Empty)
	now := s.cp.Store.Opts.Now()

	// Sparse: the recovered delta.
	ds, err := delta.LoadState(s.cp.Store, r.ID)
	if err != nil {
		return nil, err
	}
	newState, err := recoverDelta(t, doc, o, ds, now, rep)
	if err != nil {
		return nil, err
	}

	// Full: notes, MEMORY.md, §3, tasks, budgets.
	var mem *memoryDoc
	var entries []note
	if o.Mode == Full {
		if mem, err = s.loadMemory(t); err != nil {
			return nil, err
		}
		notesTmpl, err := s.notesTemplate(t)
		if err != nil {
			return nil, err
		}
		budgets := map[string]int{}
		for k, v := range t.Spec.Budgets {
			budgets[k] = v
		}
		for k, v := range s.cp.Config.Budgets[t.Name] {
			budgets[k] = v
		}
		entries = mergeFull(t, ed, mem, files, notesTmpl, db, s.cp.Config.Routing[t.Name], budgets, r.ID, rep)
	}
	files[checkpoint.File] = doc.Render()

	// Every entry has a place and every literal survives byte for byte, or nothing is written.
	for i, e := range entries {
		if rep.Entries[i].Dest.Status == "dropped" {
			return nil, fmt.Errorf("%s:%d: no section of %s can take this entry (the checkpoint lacks %s); sync aborted, nothing written", r.WorkPath(checkpoint.NotesFile), e.Line, checkpoint.File, rep.Entries[i].Dest.Section)
		}
		rep.Entries[i].Literals = e.literals()
		for _, lit := range rep.Entries[i].Literals {
			if !containsLiteral(t, doc, files, mem, rep.Entries[i].Dest, lit) {
				return nil, fmt.Errorf("%s:%d: %w: %s; sync aborted, nothing written", r.WorkPath(checkpoint.NotesFile), e.Line, ErrLiteralLost, lit)
			}
		}
	}

	// Replacing a one-value section (the intent, the next action) drops what it held: when
	// that is in no commit, the work tree is committed as it is first and the sync starts
	// again from there, so every byte the agent wrote stays in history.
	if o.Mode == Full && !o.DryRun && !o.autosaved && replacesUncommitted(t, rep, old[checkpoint.File], disk[checkpoint.File]) {
		_, _, auto, err := s.cp.Autosave(r, head, old, disk, "full sync")
		if err != nil {
			return nil, err
		}
		if auto != nil && auto.Commit != repo.ZeroHash {
			o.autosaved = true
			again, err := s.syncOnce(r, o)
			if again != nil {
				again.Autosave = auto
			}
			return again, err
		}
	}

	co := checkpoint.CommitOptions{Trigger: checkpoint.Trigger(o.Mode), Cause: o.Cause, AllowShrink: o.AllowShrink}
	if db != nil {
		co.TaskIDs = db.IDs()
	}
	sp, res, err := s.cp.Prepare(r, checkpoint.Plan{Head: head, Old: old, Next: files, Disk: disk, Touch: names(files), Agent: disk[checkpoint.File]}, co, o.DryRun)
	if err != nil {
		return nil, err
	}
	rep.Warnings = append(rep.Warnings, findingsText(res.Findings)...)
	rep.Changes = res.Changes
	for _, name := range res.Files {
		rep.Files = append(rep.Files, FileChange{Repo: "session", Name: name, Old: old[name], New: res.Next[name]})
	}

	// Full: promotion and MEMORY.md, in the knowledge repository.
	var kp *knowledge.Change
	if o.Mode == Full {
		kp, err = knowledge.Prepare(s.cp.Store, knowledge.Update{
			Decisions: sessionDecisions(t, doc, files),
			From:      knowledge.Provenance{Session: r.ID, Commit: shortCommit(sp, head), Time: checkpoint.FormatTime(now)},
			Memory:    mem.doc.Render(), OldMemory: mem.old, Review: s.cp.Config.Review(),
		}, o.DryRun)
		if err != nil {
			return nil, err
		}
		defer kp.Unlock()
		rep.Promotions = append(rep.Promotions, kp.Promotions...)
		for _, f := range kp.Files {
			rep.Files = append(rep.Files, FileChange{Repo: "knowledge", Name: f.Name, Old: f.Old, New: f.New})
		}
	}
	if o.DryRun {
		rep.Changed = len(rep.Files) > 0
		return rep, nil
	}

	// Apply: knowledge first, then the session; a session failure takes the knowledge back.
	if kp.Changed() {
		h, err := kp.Apply()
		if err != nil {
			return nil, err
		}
		rep.Knowledge = h.String()
	}
	if err := failpoint.Check("sync-between-repositories"); err != nil {
		return nil, kp.Rollback(err)
	}
	if err := sp.Apply(); err != nil {
		return nil, kp.Rollback(err)
	}
	if sp != nil && sp.Changed() {
		if err := res.FinishMerge(r); err != nil {
			rep.Warnings = append(rep.Warnings, "could not clear the finished merge: "+err.Error())
		}
		r.MaybePack()
		rep.Changed = true
	}
	if sp != nil && len(sp.Kept) > 0 {
		rep.Warnings = append(rep.Warnings, "notes appended during the sync are kept in "+checkpoint.NotesFile+" for the next sync")
	}
	rep.Commit = shortCommit(sp, head)
	if sp != nil {
		rep.Commit = sp.Commit().String()
	}
	kp.MaybePack()
	if !newState.Equal(ds) {
		if err := delta.SaveState(s.cp.Store, r.ID, newState); err != nil {
			rep.Warnings = append(rep.Warnings, "could not save the transcript offset: "+err.Error())
		}
	}
	return rep, nil
}

func shortCommit(p *repo.Prepared, head repo.Hash) string {
	if p != nil {
		return p.Commit().String()[:12]
	}
	return head.String()[:12]
}

func findingsText(fs []sections.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s:%d: %s: %s", checkpoint.File, f.Line, f.Severity, f.Message))
	}
	return out
}

// containsLiteral looks for an exact literal where its entry went (the section, or that
// section's spill file), then, to be sure, in every session file and MEMORY.md.
func containsLiteral(t *checkpoint.Template, doc *sections.Document, files map[string][]byte, mem *memoryDoc, dest Destination, lit string) bool {
	if dest.Repo == "session" {
		if s := doc.Section(dest.Section); s != nil && bytes.Contains(s.Body, []byte(lit)) {
			return true
		}
		if s := t.Doc.Section(dest.Section); s != nil && bytes.Contains(files["checkpoint-"+spillTopic(t, dest.Section)+".md"], []byte(lit)) {
			return true
		}
	}
	for name, b := range files {
		if name != checkpoint.NotesFile && bytes.Contains(b, []byte(lit)) {
			return true
		}
	}
	return mem != nil && bytes.Contains(mem.doc.Render(), []byte(lit))
}

// recoverDelta merges what the transcript and daily logs hold since the checkpoint was last
// written into its delta section (package delta).
func recoverDelta(t *checkpoint.Template, doc *sections.Document, o Options, ds delta.State, now time.Time, rep *Report) (delta.State, error) {
	last, _ := doc.MetaValue("last_updated")
	next, dr, warnings, err := delta.Recover(doc.Section(t.Section(templates.RoleDelta)), last, delta.Sources{Transcript: o.Transcript, Recorded: o.Recorded, Logs: o.Logs}, ds, now)
	rep.Warnings = append(rep.Warnings, warnings...)
	if err != nil {
		return ds, err
	}
	if dr.Entries > 0 {
		rep.Delta = dr
	}
	return next, nil
}

func (s *Service) notesTemplate(t *checkpoint.Template) ([]byte, error) {
	name := t.Spec.Notes
	if name == "" {
		name = "notes"
	}
	n, err := templates.Load(s.cp.Store.Home, name)
	if err != nil {
		return nil, err
	}
	return n.Source, nil
}

// PendingNotes counts the entries waiting in a session's notes.md for a full sync.
func (s *Service) PendingNotes(r *repo.Repo) (int, error) {
	t, err := s.cp.LoadTemplate(r.Template())
	if err != nil {
		return 0, err
	}
	tmpl, err := s.notesTemplate(t)
	if err != nil {
		return 0, err
	}
	b, err := os.ReadFile(r.WorkPath(checkpoint.NotesFile))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return len(parseNotes(b, tmpl)), nil
}

// replacesUncommitted reports whether the sync replaced a one-value section more than once
// (an earlier entry of the same notes dropped), or replaced one whose text on disk no
// commit holds (the agent's own edit of it).
func replacesUncommitted(t *checkpoint.Template, rep *Report, committed, disk []byte) bool {
	n := map[sections.ID]int{}
	for _, e := range rep.Entries {
		if e.Dest.Status == "replaced" && e.Dest.Repo == "session" {
			n[e.Dest.Section]++
		}
	}
	if len(n) == 0 {
		return false
	}
	before, now := t.Parse(committed), t.Parse(disk)
	for id, k := range n {
		if k > 1 {
			return true
		}
		a, b := before.Section(id), now.Section(id)
		if a == nil || b == nil || !bytes.Equal(a.Body, b.Body) {
			return true
		}
	}
	return false
}
