package sync

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ckpt-dev/ckpt/internal/failpoint"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
	"github.com/ckpt-dev/ckpt/templates"
)

// Modes of a sync.
const (
	Sparse = "sparse" // recovered delta and metadata only: cheap enough for every agent turn
	Full   = "full"   // sparse, plus notes, MEMORY.md, task tree, budgets, promotion
)

// Options of one sync.
type Options struct {
	Mode       string // Sparse or Full
	DryRun     bool
	Transcript string   // a Claude Code or generic JSONL transcript (remembered for later syncs)
	Logs       []string // daily logs memory/YYYY-MM-DD.md
	Tasks      string   // task database (JSON)
	Trigger    string   // the Ckpt-Trigger trailer; defaults to the mode
	// AllowShrink lets the agent's checkpoint lose more entries than the shrink guard allows.
	AllowShrink bool
}

// Report says what a sync did (or, with DryRun, would do).
type Report struct {
	Session    string        `json:"session"`
	Mode       string        `json:"mode"`
	DryRun     bool          `json:"dry_run"`
	Commit     string        `json:"commit,omitempty"`
	Changed    bool          `json:"changed"`
	Knowledge  string        `json:"knowledge_commit,omitempty"`
	Entries    []EntryReport `json:"entries"`
	Spills     []Spill       `json:"spills"`
	Promotions []Promotion   `json:"promotions"`
	Moved      []MovedLine   `json:"moved"`
	Delta      DeltaReport   `json:"delta"`
	Tasks      int           `json:"tasks"`
	Warnings   []string      `json:"warnings"`
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

// DeltaReport says what the recovered delta took in.
type DeltaReport struct {
	Entries int    `json:"entries"`
	From    string `json:"from,omitempty"`
	To      string `json:"to,omitempty"`
}

// FileChange is one file a sync changes.
type FileChange struct {
	Repo     string // "session" or "knowledge"
	Name     string
	Old, New []byte
}

// ErrLiteralLost aborts a sync that would drop an exact literal from a notes entry.
var ErrLiteralLost = errors.New("literal would be lost")

// deltaState is what sync remembers between runs: where it stopped reading the transcript.
type deltaState struct {
	Transcript string `json:"transcript,omitempty"`
	Offset     int64  `json:"offset"`
}

func (s *Service) deltaStatePath(id string) string {
	return filepath.Join(s.Store.StateDir(), "delta", id+".json")
}

func (s *Service) loadDeltaState(id string) (deltaState, error) {
	var st deltaState
	b, err := os.ReadFile(s.deltaStatePath(id))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("%s: corrupt state: %w", s.deltaStatePath(id), err)
	}
	return st, nil
}

func (s *Service) saveDeltaState(id string, st deltaState) error {
	p := s.deltaStatePath(id)
	if err := os.MkdirAll(filepath.Dir(p), repo.DirPerm); err != nil {
		return err
	}
	b, _ := json.Marshal(st)
	return repo.WriteFileAtomic(p, b, repo.FilePerm, s.Store.Opts.Fsync)
}

// Sync reconciles a session: the recovered delta (sparse and full) and, for a full sync,
// notes.md routed into the checkpoint and MEMORY.md, §3 upkeep, the task tree, budgets and
// spill files, and the promotion of Key Decisions to the knowledge graph. The session's new
// files (notes.md reset to its template) are one commit, and the knowledge repository's
// change is one commit applied with it: all or nothing. A dry run writes nothing.
func (s *Service) Sync(r *repo.Repo, o Options) (*Report, error) {
	if o.Mode == "" {
		o.Mode = Full
	}
	if o.Trigger == "" {
		o.Trigger = o.Mode
	}
	unlock, err := s.Store.Lock(r.LockName, true)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return retryPlan(func() (*Report, error) { return s.syncOnce(r, o) })
}

// syncOnce is one attempt of Sync under the session's lock. It fails with
// repo.ErrWorkTreeChanged, having changed nothing, when a file it would replace changed
// since it read it; notes appended to notes.md meanwhile are not such a change: they stay
// after the reset notes for the next sync.
func (s *Service) syncOnce(r *repo.Repo, o Options) (*Report, error) {
	if err := s.FinishPull(r); err != nil {
		return nil, fmt.Errorf("%s: finish the interrupted pull: %w", r.ID, err)
	}
	rep := &Report{Session: r.ID, Mode: o.Mode, DryRun: o.DryRun, Entries: []EntryReport{}, Spills: []Spill{}, Promotions: []Promotion{}, Moved: []MovedLine{}, Warnings: []string{}}
	t, err := s.LoadTemplate(r.Template())
	if err != nil {
		return nil, err
	}
	var db *TaskDB
	if o.Tasks != "" {
		if db, err = LoadTasks(o.Tasks); err != nil {
			return nil, err
		}
	}
	head, old, err := headFiles(r)
	if err != nil {
		return nil, err
	}
	files, err := r.WorkFiles()
	if err != nil {
		return nil, err
	}
	disk := copyFiles(files)
	cp, ok := files[CheckpointFile]
	if !ok {
		return nil, fmt.Errorf("%s: missing from the work tree\nhint: bring it back with ckpt restore -s %s --rev HEAD", r.WorkPath(CheckpointFile), r.ID)
	}
	doc := t.Parse(cp)
	ed := newEditor(doc, t.Spec.Empty)
	now := s.now()

	// Sparse: the recovered delta.
	ds, err := s.loadDeltaState(r.ID)
	if err != nil {
		return nil, err
	}
	newState, err := s.recoverDelta(t, doc, o, ds, now, rep)
	if err != nil {
		return nil, err
	}

	// Full: notes, MEMORY.md, §3, tasks, budgets.
	var mem *memoryDoc
	var entries []Entry
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
		for k, v := range s.Config.Budgets[t.Name] {
			budgets[k] = v
		}
		entries = mergeFull(t, ed, mem, files, notesTmpl, db, s.Config.Routing[t.Name], budgets, r.ID, rep)
	}
	files[CheckpointFile] = doc.Render()

	// Every entry has a place and every literal survives byte for byte, or nothing is written.
	for i, e := range entries {
		if rep.Entries[i].Dest.Status == "dropped" {
			return nil, fmt.Errorf("%s:%d: no section of %s can take this entry (the checkpoint lacks %s); sync aborted, nothing written", r.WorkPath(NotesFile), e.Line, CheckpointFile, rep.Entries[i].Dest.Section)
		}
		rep.Entries[i].Literals = e.Literals()
		for _, lit := range rep.Entries[i].Literals {
			if !containsLiteral(t, doc, files, mem, rep.Entries[i].Dest, lit) {
				return nil, fmt.Errorf("%s:%d: %w: %s; sync aborted, nothing written", r.WorkPath(NotesFile), e.Line, ErrLiteralLost, lit)
			}
		}
	}

	co := CommitOptions{Trigger: o.Trigger, AllowShrink: o.AllowShrink, Mode: o.Mode}
	if db != nil {
		co.TaskIDs = db.IDs()
	}
	sp, res, err := s.prepareCommit(r, commitPlan{head: head, old: old, next: files, disk: disk, touch: names(files), agent: disk[CheckpointFile]}, co, o.DryRun)
	if err != nil {
		return nil, err
	}
	rep.Warnings = append(rep.Warnings, findingsText(res.Findings)...)
	rep.Changes = res.Changes
	for _, name := range res.Files {
		rep.Files = append(rep.Files, FileChange{Repo: "session", Name: name, Old: old[name], New: res.next[name]})
	}

	// Full: promotion and MEMORY.md, in the knowledge repository.
	var kp *knowledgeChange
	if o.Mode == Full {
		prov := Provenance{Session: r.ID, Commit: shortCommit(sp, head), Time: FormatTime(now)}
		kp, err = s.prepareKnowledge(t, mem, doc, files, prov, o.DryRun, rep)
		if err != nil {
			return nil, err
		}
		if kp != nil {
			defer kp.unlock()
		}
	}
	if o.DryRun {
		rep.Changed = len(rep.Files) > 0
		return rep, nil
	}

	// Apply: knowledge first, then the session; a session failure takes the knowledge back.
	if kp != nil && kp.prepared.Changed() {
		if err := kp.prepared.Apply(); err != nil {
			kp.discard()
			return nil, err
		}
		rep.Knowledge = kp.prepared.Commit().String()
	}
	if err := failpoint.Check("sync-between-repositories"); err != nil {
		return nil, kp.rollback(err)
	}
	if err := sp.Apply(); err != nil {
		return nil, kp.rollback(err)
	}
	if sp != nil && sp.Changed() {
		if err := res.finishMerge(r); err != nil {
			rep.Warnings = append(rep.Warnings, "could not clear the finished merge: "+err.Error())
		}
		r.MaybePack()
		rep.Changed = true
	}
	if sp != nil && len(sp.Kept) > 0 {
		rep.Warnings = append(rep.Warnings, "notes appended during the sync are kept in "+NotesFile+" for the next sync")
	}
	rep.Commit = shortCommit(sp, head)
	if sp != nil {
		rep.Commit = sp.Commit().String()
	}
	if kp != nil {
		kp.repo.MaybePack()
	}
	if newState != ds {
		if err := s.saveDeltaState(r.ID, newState); err != nil {
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
		out = append(out, fmt.Sprintf("%s:%d: %s: %s", CheckpointFile, f.Line, f.Severity, f.Message))
	}
	return out
}

// containsLiteral looks for an exact literal where its entry went (the section, or that
// section's spill file), then, to be sure, in every session file and MEMORY.md.
func containsLiteral(t *Template, doc *sections.Document, files map[string][]byte, mem *memoryDoc, dest Destination, lit string) bool {
	if dest.Repo == "session" {
		if s := doc.Section(dest.Section); s != nil && bytes.Contains(s.Body, []byte(lit)) {
			return true
		}
		if s := t.Doc.Section(dest.Section); s != nil && bytes.Contains(files["checkpoint-"+spillTopic(t, dest.Section)+".md"], []byte(lit)) {
			return true
		}
	}
	for name, b := range files {
		if name != NotesFile && bytes.Contains(b, []byte(lit)) {
			return true
		}
	}
	return mem != nil && bytes.Contains(mem.doc.Render(), []byte(lit))
}

// recoverDelta reads the transcript (from where the last sync stopped) and daily logs, and
// merges their entries newer than _last_updated_ into the delta section.
func (s *Service) recoverDelta(t *Template, doc *sections.Document, o Options, ds deltaState, now time.Time, rep *Report) (deltaState, error) {
	id := t.Section(templates.RoleDelta)
	sec := doc.Section(id)
	next := ds
	if o.Transcript != "" {
		abs, err := filepath.Abs(o.Transcript)
		if err != nil {
			return ds, err
		}
		if abs != ds.Transcript {
			next = deltaState{Transcript: abs}
		}
	}
	if sec == nil || (next.Transcript == "" && len(o.Logs) == 0) {
		return next, nil
	}
	var since time.Time
	if v, ok := doc.MetaValue("last_updated"); ok {
		since, _ = time.Parse(TimeFormat, v)
	}
	var entries []DeltaEntry
	if next.Transcript != "" {
		// The offset, not the clock, says what is new: the first read of a transcript takes
		// all of it (the 2 KB limit keeps the newest), so a session created at PreCompact
		// keeps the conversation that led there, and later reads take every line past the
		// saved offset, even one older than _last_updated_ (a write moved it meanwhile).
		// A transcript that is gone, unreadable or not a regular file costs the delta, never
		// the checkpoint: hooks and ticks keep committing, and the offset stays.
		tr, err := ReadTranscript(next.Transcript, next.Offset, time.Time{})
		if err != nil {
			rep.Warnings = append(rep.Warnings, err.Error()+"; checkpoint taken without a delta from it")
		} else {
			entries = append(entries, tr.Entries...)
			rep.Warnings = append(rep.Warnings, tr.Warnings...)
			next.Offset = tr.Next
		}
	}
	for _, l := range o.Logs {
		es, warns, err := ReadDailyLog(l, since)
		if err != nil {
			return ds, err
		}
		entries = append(entries, es...)
		rep.Warnings = append(rep.Warnings, warns...)
	}
	if len(entries) == 0 {
		return next, nil
	}
	from := since
	if from.IsZero() {
		from = entries[0].Time
		for _, e := range entries {
			if e.Time.Before(from) {
				from = e.Time
			}
		}
	}
	*sec = UpdateDeltaSection(*sec, entries, from, now, DeltaLimit)
	rep.Delta = DeltaReport{Entries: len(entries), From: FormatTime(from), To: FormatTime(now)}
	return next, nil
}

func (s *Service) notesTemplate(t *Template) ([]byte, error) {
	name := t.Spec.Notes
	if name == "" {
		name = "notes"
	}
	n, err := templates.Load(s.Store.Home, name)
	if err != nil {
		return nil, err
	}
	return n.Source, nil
}

// mergeFull is the pure heart of a full sync: notes entries routed into the checkpoint (and
// MEMORY.md), §3 tidied, the task tree rendered, notes.md reset to its template, sections
// over budget spilled. It edits ed's document, mem and files in place and returns the
// entries it read.
func mergeFull(t *Template, ed *editor, mem *memoryDoc, files map[string][]byte, notesTmpl []byte, db *TaskDB, routing map[string]string, budgets map[string]int, session string, rep *Report) []Entry {
	entries := ParseNotes(files[NotesFile], notesTmpl)
	rt := &router{t: t, overrides: routing, taskOwned: db != nil}
	for _, e := range entries {
		rep.Entries = append(rep.Entries, applyRouted(t, ed, mem, rt.route(e)))
	}
	if mem != nil {
		rep.Moved = append(rep.Moved, tidyDirectives(t, ed, mem)...)
	}
	if db != nil {
		if id := t.Section(templates.RoleTasks); id != "" {
			ed.setContent(id, RenderTasks(db, ed.itemsRaw(id), t.Name == "six"))
			rep.Tasks = len(db.Tasks)
		}
	}
	files[NotesFile] = notesTmpl
	rep.Spills = append(rep.Spills, spillBudgets(t, ed, budgets, files, session)...)
	return entries
}

// applyRouted puts one routed entry into its section (or MEMORY.md) unless it is there.
func applyRouted(t *Template, ed *editor, mem *memoryDoc, r Routed) EntryReport {
	rep := EntryReport{Line: r.Entry.Line, Tag: r.Tag, Durable: r.Entry.Durable, Text: r.Entry.Text, Dest: r.Dest, Literals: []string{}}
	if r.Dest.Repo == "memory" && mem != nil {
		id := mem.section(r.Role)
		rep.Dest.Section = id
		sec := mem.doc.Section(id)
		if sec == nil {
			// MEMORY.md lacks the section: keep the entry in the checkpoint's catch-all.
			rep.Dest = Destination{Repo: "session", File: CheckpointFile, Section: t.Section(templates.RoleCatchAll), Why: "memory section missing"}
		} else {
			if mem.ed.present(id, r.Entry.Text) {
				rep.Dest.Status = "duplicate"
			} else {
				mem.ed.add(id, "- "+r.Entry.Text, false)
				rep.Dest.Status = "added"
			}
			return rep
		}
	}
	id := rep.Dest.Section
	sec := ed.doc.Section(id)
	if sec == nil {
		id = t.Section(templates.RoleCatchAll)
		if id == "" && len(ed.doc.Sections) > 0 {
			id = ed.doc.Sections[len(ed.doc.Sections)-1].ID
		}
		rep.Dest.Section, rep.Dest.Why = id, "section missing; catch-all"
		sec = ed.doc.Section(id)
	}
	if sec == nil {
		rep.Dest.Status = "dropped"
		return rep
	}
	if ed.present(id, r.Entry.Text) {
		rep.Dest.Status = "duplicate"
		return rep
	}
	role := r.Role
	if roleOf(t, id) != role {
		role = roleOf(t, id)
	}
	ed.add(id, renderEntry(t, role, r.Tag, r.Entry.Text), replaces(role))
	rep.Dest.Status = "added"
	if replaces(role) {
		rep.Dest.Status = "replaced"
	}
	return rep
}

// tidyDirectives applies seed 000's rules to the directives section (§3): a `Dn:` line whose
// rule MEMORY.md's rules already hold is removed (MEMORY.md is the authority), and a line in
// status language (COMPLETE, done, partially complete) moves to the current-work section.
func tidyDirectives(t *Template, ed *editor, mem *memoryDoc) []MovedLine {
	dir := t.Section(templates.RoleDirectives)
	status := t.Section(templates.RoleStatus)
	if dir == "" || ed.doc.Section(dir) == nil {
		return nil
	}
	rules := map[string]bool{}
	if sec := mem.doc.Section(mem.section(templates.RoleRules)); sec != nil {
		for _, it := range items(sec.Body) {
			rules[it] = true
		}
	}
	var keep []string
	var moved []MovedLine
	var toStatus []string
	for _, it := range ed.itemsRaw(dir) {
		n := normText(it)
		switch {
		case dRule().MatchString(n) && rules[n]:
			moved = append(moved, MovedLine{Line: it, From: dir, Reason: "rule already in " + MemoryFile})
		case status != "" && isStatusLine(n):
			moved = append(moved, MovedLine{Line: it, From: dir, To: status, Reason: "status language"})
			toStatus = append(toStatus, it)
		default:
			keep = append(keep, it)
		}
	}
	if len(moved) == 0 {
		return nil
	}
	ed.setContent(dir, keep)
	for _, l := range toStatus {
		if !ed.present(status, l) {
			ed.add(status, l, false)
		}
	}
	return moved
}

// dRule is a project rule line, "D3: …"; statusRe is status language, which reports
// progress rather than a way of working.
var (
	dRule    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^D\d+:`) })
	statusRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\bCOMPLETE\b|(?i:\bpartially complete\b)|(?i:\bdone\b)|已完成|部分完成`)
	})
)

func isStatusLine(n string) bool { return statusRe().MatchString(n) }

// memoryDoc is MEMORY.md being edited.
type memoryDoc struct {
	doc    *sections.Document
	ed     *editor
	old    []byte
	specs  []templates.Spec
	exists bool // the knowledge repository already holds it
}

// section finds the MEMORY.md section that plays role, whichever language its headings use.
func (m *memoryDoc) section(role templates.Role) sections.ID {
	for _, sp := range m.specs {
		if id := sections.ID(sp.Section(role)); id != "" && m.doc.Section(id) != nil {
			return id
		}
	}
	return ""
}

// loadMemory reads MEMORY.md from the knowledge work tree (so hand edits are picked up),
// else renders the template's memory template.
func (s *Service) loadMemory(t *Template) (*memoryDoc, error) {
	name := t.Spec.Memory
	if name == "" {
		name = "memory-en"
	}
	mt, err := s.LoadTemplate(name)
	if err != nil {
		return nil, err
	}
	m := &memoryDoc{specs: []templates.Spec{mt.Spec}}
	for _, other := range []string{"memory", "memory-en"} {
		if other != name {
			if ot, err := templates.Load(s.Store.Home, other); err == nil {
				m.specs = append(m.specs, ot.Spec)
			}
		}
	}
	src, err := os.ReadFile(filepath.Join(s.Store.KnowledgeDir(), MemoryFile))
	switch {
	case err == nil:
		m.exists = true
		m.old = src
	case errors.Is(err, fs.ErrNotExist):
		src = mt.Source
	default:
		return nil, err
	}
	m.doc = sections.Parse(src, sections.Options{Level: mt.Doc.Level})
	m.ed = newEditor(m.doc, "")
	return m, nil
}

// knowledgeChange is a prepared commit of the knowledge repository.
type knowledgeChange struct {
	repo     *repo.Repo
	prepared *repo.Prepared
	created  bool // the repository was created by this sync
	adopted  bool // ... in a directory that already held the user's files
	unlock   func()
}

// rollback undoes the knowledge commit after a failure of the session's, and returns err.
func (k *knowledgeChange) rollback(err error) error {
	if k == nil {
		return err
	}
	if uerr := k.prepared.Undo(); uerr != nil {
		return fmt.Errorf("%w; and undoing the knowledge commit failed: %v", err, uerr)
	}
	k.discard()
	return err
}

// discard removes a knowledge repository this sync created and did not keep: the whole
// directory when the sync made it, only its .git when it held the user's files before.
func (k *knowledgeChange) discard() {
	switch {
	case k == nil || !k.created || k.repo == nil:
	case k.adopted:
		_ = os.RemoveAll(k.repo.GitDir)
	default:
		_ = os.RemoveAll(k.repo.Dir)
	}
}

// prepareKnowledge promotes the session's decisions (the checkpoint's and those spilled
// from it, files being the session's new files) and writes MEMORY.md changes as a prepared
// commit of the knowledge repository (nil when nothing changes). It takes the knowledge
// lock, which the caller releases.
func (s *Service) prepareKnowledge(t *Template, mem *memoryDoc, doc *sections.Document, files map[string][]byte, prov Provenance, dry bool, rep *Report) (*knowledgeChange, error) {
	unlock, err := s.Store.Lock(repo.KnowledgeLock, true)
	if err != nil {
		return nil, err
	}
	kc := &knowledgeChange{unlock: unlock}
	fail := func(err error) (*knowledgeChange, error) {
		unlock()
		return nil, err
	}
	kgTmpl, err := templates.Load(s.Store.Home, "knowledge")
	if err != nil {
		return fail(err)
	}
	dir := s.Store.KnowledgeDir()
	kgSrc, err := os.ReadFile(filepath.Join(dir, KnowledgeFile))
	oldKG := kgSrc // nil when there is none yet
	if errors.Is(err, fs.ErrNotExist) {
		kgSrc, err = kgTmpl.Source, nil
	}
	if err != nil {
		return fail(err)
	}
	kg, err := ParseKnowledgeGraph(kgSrc)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", filepath.Join(dir, KnowledgeFile), err))
	}
	rep.Promotions = append(rep.Promotions, kg.Promote(sessionDecisions(t, doc, files), prov, s.Config.Review())...)
	files = map[string][]byte{KnowledgeFile: kg.Render(), MemoryFile: mem.doc.Render()}
	changed := false
	for name, b := range files {
		var prev []byte
		if name == KnowledgeFile {
			prev = oldKG
		} else {
			prev = mem.old
		}
		if !bytes.Equal(prev, b) {
			changed = true
			rep.Files = append(rep.Files, FileChange{Repo: "knowledge", Name: name, Old: prev, New: b})
		}
	}
	if !changed || dry {
		if !changed {
			unlock()
			return nil, nil
		}
		return kc, nil
	}
	kr, err := s.Store.OpenKnowledge()
	if errors.Is(err, repo.ErrNotFound) {
		_, statErr := os.Stat(dir)
		kr, _, err = s.Store.InitKnowledge(map[string][]byte{KnowledgeFile: kgTmpl.Source, MemoryFile: mem.old})
		kc.created, kc.adopted = true, statErr == nil
	}
	if err != nil {
		return fail(err)
	}
	kc.repo = kr
	disk, err := kr.WorkFiles()
	if err != nil {
		return fail(err)
	}
	// Replace MEMORY.md and the graph only while they hold the bytes this sync read.
	seen := copyFiles(disk)
	for name, b := range map[string][]byte{MemoryFile: mem.old, KnowledgeFile: oldKG} {
		if kc.created {
			break // its files are the ones this sync just wrote
		}
		if b == nil {
			delete(seen, name)
		} else {
			seen[name] = b
		}
	}
	for name, b := range files {
		disk[name] = b
	}
	var news []string
	for _, p := range rep.Promotions {
		if p.Outcome == "new" || p.Outcome == "provenance" {
			news = append(news, p.ID)
		}
	}
	sort.Strings(news)
	subject := "knowledge(promote): " + strings.Join(news, ", ")
	if len(news) == 0 {
		subject = "knowledge(memory): update " + MemoryFile
	}
	msg := fmt.Sprintf("%s\n\nCkpt-Session: %s\nCkpt-Checkpoint: %s\nCkpt-Trigger: full\n", subject, prov.Session, prov.Commit)
	p, err := kr.Prepare(repo.CommitRequest{Files: disk, Message: msg, Disk: seen})
	if err != nil {
		kc.discard()
		return fail(err)
	}
	kc.prepared = p
	return kc, nil
}

// PendingNotes counts the entries waiting in a session's notes.md for a full sync.
func (s *Service) PendingNotes(r *repo.Repo) (int, error) {
	t, err := s.LoadTemplate(r.Template())
	if err != nil {
		return 0, err
	}
	tmpl, err := s.notesTemplate(t)
	if err != nil {
		return 0, err
	}
	b, err := os.ReadFile(r.WorkPath(NotesFile))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return len(ParseNotes(b, tmpl)), nil
}
