package sync

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
)

// CheckpointFile is the checkpoint's file name in a session's work tree.
const CheckpointFile = "checkpoint.md"

// NotesFile is the scratch notes file.
const NotesFile = "notes.md"

// TimeFormat is how ckpt writes times in metadata lines: 2026-04-01T22:00Z.
const TimeFormat = "2006-01-02T15:04Z"

// FormatTime formats t for a metadata line.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// CommitOptions describe a commit: its trigger and an optional message.
type CommitOptions struct {
	Trigger string // manual, write, sparse, full, hook, cron, restore, merge, autosave
	Message string // replaces the generated description in the subject
	// TaskIDs, when not nil, also check task ids against the task database.
	TaskIDs map[string]bool
	// Parents of the commit: nil for HEAD; a merge gives HEAD and the other side.
	Parents []repo.Hash
	// Verbatim commits the bytes as they are, without metadata upkeep (an autosave).
	Verbatim bool
	// AllowShrink lets the checkpoint lose more entries than the shrink guard allows.
	AllowShrink bool
	// Mode is the sync mode (sparse or full) that made the commit, "" for others; when the
	// trigger does not already say it (hook, cron), it becomes the Ckpt-Mode trailer, so a
	// full checkpoint a hook took before a compaction is recognisable in history.
	Mode string
}

// Result is what a commit did.
type Result struct {
	Commit   repo.Hash
	Changed  bool
	Sections []sections.ID // checkpoint sections that changed
	Files    []string      // files that changed
	Subject  string
	Findings []sections.Finding // warnings of the check that passed
	// Autosave is what the command first did with uncommitted bytes it found in the work
	// tree, or nil when there were none.
	Autosave *Autosave
	// Repaired are files brought back to the committed bytes with no new commit (a restore of
	// a broken or deleted file); Kept are files that hold, after the committed bytes, what an
	// agent appended while the command ran (notes waiting for the next sync).
	Repaired, Kept []string
}

// Autosave is the commit (trigger autosave) of uncommitted bytes a command found in the work
// tree before it replaced files there, and the rejected ref of those that check refused.
type Autosave struct {
	Commit      repo.Hash `json:"commit,omitempty"`
	Files       []string  `json:"files"`
	RejectedRef string    `json:"rejected_ref,omitempty"`
	Rejected    []string  `json:"rejected_files,omitempty"`
}

// maxPlans bounds how often a command plans again because a file it was about to replace
// changed underneath (an agent writing while ckpt commits).
const maxPlans = 20

// change is one command's edit of a session's files. base is the committed files it starts
// from (HEAD, after any autosave), disk the work tree as read. It returns the complete new
// set of files and the files to bring to their new bytes even if the commit leaves them
// unchanged.
type change func(base, disk map[string][]byte) (next map[string][]byte, touch []string, err error)

// commitChange is the one path by which a command changes a session's work tree and
// history. Under the session's exclusive lock, uncommitted bytes in the work tree are first
// committed as they are (autosave), or kept under refs/ckpt/rejected/N when check refuses
// them; then the change is planned from the result and committed; then only the files it
// changes are written, each only while it holds the bytes read (compare and swap). A file
// written meanwhile makes it start again from what is on disk now. So no command discards
// bytes it did not create.
func (s *Service) commitChange(r *repo.Repo, o CommitOptions, plan change) (Result, error) {
	unlock, err := s.Store.Lock(r.LockName, true)
	if err != nil {
		return Result{}, err
	}
	defer unlock()
	return retryPlan(func() (Result, error) { return s.commitOnce(r, o, plan) })
}

// retryPlan runs one attempt of a command again while the work tree changes underneath it.
func retryPlan[T any](attempt func() (T, error)) (T, error) {
	for i := 1; ; i++ {
		res, err := attempt()
		if !errors.Is(err, repo.ErrWorkTreeChanged) || i == maxPlans {
			if errors.Is(err, repo.ErrWorkTreeChanged) {
				err = fmt.Errorf("%w\nhint: something keeps writing it; nothing was lost, try again", err)
			}
			return res, err
		}
		time.Sleep(time.Duration(i) * time.Millisecond)
	}
}

func (s *Service) commitOnce(r *repo.Repo, o CommitOptions, plan change) (Result, error) {
	// A pull killed half way is finished first, or its files would be taken for new work.
	if err := s.FinishPull(r); err != nil {
		return Result{}, fmt.Errorf("%s: finish the interrupted pull: %w", r.ID, err)
	}
	head, old, err := headFiles(r)
	if err != nil {
		return Result{}, err
	}
	disk, err := r.WorkFiles()
	if err != nil {
		return Result{}, err
	}
	var auto *Autosave
	if plan != nil {
		if head, old, auto, err = s.autosave(r, head, old, disk, o.Trigger); err != nil {
			return Result{}, err
		}
	}
	// Committing the disk: every file is the command's, as read (plus metadata upkeep).
	next, touch := copyFiles(disk), names(disk)
	if plan != nil {
		if next, touch, err = plan(copyFiles(old), copyFiles(disk)); err != nil {
			return Result{Autosave: auto}, err
		}
	}
	res, err := s.commitFiles(r, commitPlan{head: head, old: old, next: next, disk: disk, touch: touch}, o)
	res.Autosave = auto
	return res, err
}

// autosave commits the work tree's uncommitted bytes as they are (trigger autosave) before a
// command replaces files there. A checkpoint that check refuses is kept under
// refs/ckpt/rejected/N (the other files are still committed) and left on disk as it is.
// It returns the new head and its files.
func (s *Service) autosave(r *repo.Repo, head repo.Hash, old, disk map[string][]byte, cause string) (repo.Hash, map[string][]byte, *Autosave, error) {
	var dirty []string
	for name, b := range disk {
		if ob, ok := old[name]; !ok || !bytes.Equal(ob, b) {
			dirty = append(dirty, name)
		}
	}
	if len(dirty) == 0 {
		return head, old, nil, nil
	}
	sort.Strings(dirty)
	auto := &Autosave{}
	o := CommitOptions{Trigger: TriggerAutosave, Verbatim: true}
	for len(dirty) > 0 {
		next := copyFiles(old)
		for _, name := range dirty {
			next[name] = disk[name]
		}
		o.Message = "record uncommitted " + strings.Join(dirty, ", ") + " before " + cause
		res, err := s.commitFiles(r, commitPlan{head: head, old: old, next: next, disk: disk}, o)
		var rej *RejectedError
		if errors.As(err, &rej) && slices.Contains(dirty, CheckpointFile) {
			// The bytes are kept under the rejected ref and stay on disk; the other files
			// are committed on main.
			auto.RejectedRef, auto.Rejected = rej.Ref, []string{CheckpointFile}
			dirty = slices.DeleteFunc(dirty, func(n string) bool { return n == CheckpointFile })
			continue
		}
		if err != nil {
			return head, old, nil, fmt.Errorf("autosave %s: %w", strings.Join(dirty, ", "), err)
		}
		if res.Changed {
			auto.Commit, auto.Files = res.Commit, dirty
			head, old = res.Commit, next
		}
		break
	}
	return head, old, auto, nil
}

// Write replaces one file of the session with content and commits it, if check accepts it.
// A rejected checkpoint leaves the work tree and the main history as they were.
func (s *Service) Write(r *repo.Repo, name string, content []byte, o CommitOptions) (Result, error) {
	if err := ValidSessionFile(name); err != nil {
		return Result{}, err
	}
	return s.commitChange(r, o, func(base, _ map[string][]byte) (map[string][]byte, []string, error) {
		base[name] = content
		return base, nil, nil
	})
}

// CommitDisk commits the session's files as they are on disk.
func (s *Service) CommitDisk(r *repo.Repo, o CommitOptions) (Result, error) {
	unlock, err := s.Store.Lock(r.LockName, true)
	if err != nil {
		return Result{}, err
	}
	defer unlock()
	return retryPlan(func() (Result, error) { return s.commitOnce(r, o, nil) })
}

// Restore makes a new commit whose files are those of rev, or, with a section, whose
// checkpoint is the one on disk with that one section taken from rev. History is never
// rewritten. The files restored are written even when the commit leaves them unchanged, so
// restoring HEAD repairs a broken or deleted file.
func (s *Service) Restore(r *repo.Repo, rev, section string, o CommitOptions) (Result, error) {
	from, err := r.Resolve(rev)
	if err != nil {
		return Result{}, err
	}
	then, err := r.Files(from)
	if err != nil {
		return Result{}, err
	}
	desc := "restore " + repo.ShortHash(from)
	var src *sections.Section
	var t *Template
	if section != "" {
		if t, err = s.LoadTemplate(r.Template()); err != nil {
			return Result{}, err
		}
		if src = t.Parse(then[CheckpointFile]).Find(section); src == nil {
			return Result{}, fmt.Errorf("%s at %s: no section %q", CheckpointFile, repo.ShortHash(from), section)
		}
		desc = fmt.Sprintf("restore %s from %s", src.ID, repo.ShortHash(from))
	}
	if o.Message == "" {
		o.Message = desc
	}
	return s.commitChange(r, o, func(base, disk map[string][]byte) (map[string][]byte, []string, error) {
		if src == nil {
			touch := make([]string, 0, len(then))
			for name := range then {
				touch = append(touch, name)
			}
			return copyFiles(then), touch, nil
		}
		// Every other section keeps the bytes it has on disk now.
		cur, ok := disk[CheckpointFile]
		if !ok {
			cur = base[CheckpointFile]
		}
		doc := t.Parse(cur)
		doc.Put(*src, t.Order())
		base[CheckpointFile] = doc.Render()
		return base, []string{CheckpointFile}, nil
	})
}

// ValidSessionFile accepts the files a session versions: checkpoint.md, notes.md and spill
// files checkpoint-<topic>.md.
func ValidSessionFile(name string) error {
	if name == "MEMORY.md" || name == "knowledge-graph.md" {
		return fmt.Errorf("%w: %s lives in the knowledge repository, not in a session", repo.ErrInvalidName, name)
	}
	return repo.ValidFileName(name)
}

func headFiles(r *repo.Repo) (repo.Hash, map[string][]byte, error) {
	head, err := r.Head()
	if err != nil {
		return head, nil, err
	}
	if head == repo.ZeroHash {
		return head, map[string][]byte{}, nil
	}
	files, err := r.Files(head)
	return head, files, err
}

func names(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func copyFiles(m map[string][]byte) map[string][]byte {
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// commitPlan is one commit: the head and files it starts from, the complete new files, and
// how the work tree is treated (see repo.WorkTreeUpdate). notes.md is always appendable:
// agents append to it without taking ckpt's lock.
type commitPlan struct {
	head      repo.Hash
	old, next map[string][]byte
	disk      map[string][]byte // the work tree as read; nil: no compare and swap
	touch     []string
	// agent, when set, is the checkpoint as the agent wrote it, which the shrink guard
	// checks instead of the committed one (a sync's own moves are not the agent's).
	agent []byte
}

// commitFiles makes one commit on main: metadata upkeep, check (reject on errors), message,
// commit, work tree. Only commitChange and the commands built on it call it; the caller
// holds the exclusive lock.
func (s *Service) commitFiles(r *repo.Repo, cp commitPlan, o CommitOptions) (Result, error) {
	p, res, err := s.prepareCommit(r, cp, o, false)
	if err != nil {
		return res.Result, err
	}
	if err := p.Apply(); err != nil {
		return res.Result, err
	}
	res.Repaired, res.Kept = p.Repaired, p.Kept
	if p.Changed() {
		if err := res.finishMerge(r); err != nil {
			return res.Result, err
		}
		r.MaybePack()
	}
	res.Commit, res.Changed = p.Commit(), p.Changed()
	if !res.Changed {
		res.Sections, res.Files, res.Subject = nil, nil, ""
	}
	return res.Result, nil
}

// prepared is a Result with what a caller applying it later needs.
type prepared struct {
	Result
	Changes []sections.Change
	next    map[string][]byte
	// mergeHead is the pending merge this commit finishes, cleared once it is applied.
	mergeHead repo.Hash
}

// finishMerge clears the pending merge a just-applied commit finished.
func (p prepared) finishMerge(r *repo.Repo) error {
	if p.mergeHead == repo.ZeroHash {
		return nil
	}
	return r.SetMergeHead(repo.ZeroHash, "")
}

// prepareCommit does everything commitFiles does short of moving main: it returns the
// prepared commit (objects written) for the caller to Apply, possibly together with a
// knowledge commit. A dry run writes no objects and returns a nil Prepared.
func (s *Service) prepareCommit(r *repo.Repo, cp commitPlan, o CommitOptions, dry bool) (*repo.Prepared, prepared, error) {
	head, old, next := cp.head, cp.old, cp.next
	res := prepared{next: next}
	// A pending merge (a pull left conflicts): whatever commits next finishes it, with both
	// parents, whether it is ckpt commit, a write or a hook's sync.
	if o.Parents == nil {
		mh, err := r.MergeHead()
		if err != nil {
			return nil, res, err
		}
		if mh != repo.ZeroHash {
			o.Parents, o.Trigger, res.mergeHead = []repo.Hash{head, mh}, "merge", mh
			if o.Message == "" {
				o.Message = "merge " + repo.ShortHash(mh) + " (conflicts resolved)"
			}
		}
	}
	if _, had := old[CheckpointFile]; had {
		if _, has := next[CheckpointFile]; !has {
			return nil, res, fmt.Errorf("%s: missing from the work tree; nothing committed\nhint: bring it back with ckpt restore --rev HEAD", r.WorkPath(CheckpointFile))
		}
	}
	if cpb, ok := next[CheckpointFile]; ok {
		written := cpb // as the agent wrote it, before metadata upkeep
		t, err := s.LoadTemplate(r.Template())
		if err != nil {
			return nil, res, err
		}
		var same bool
		if o.Verbatim {
			same = bytes.Equal(old[CheckpointFile], cpb)
			if !same {
				res.Changes = sections.Diff(t.Parse(old[CheckpointFile]), t.Parse(cpb))
			}
		} else {
			cpb, same, res.Changes = s.maintain(t, r.ID, old[CheckpointFile], cpb)
			next[CheckpointFile] = cpb
		}
		if !same {
			co := CheckOptions{TaskIDs: o.TaskIDs}
			guard := shrinkGuarded(o) && old[CheckpointFile] != nil
			if guard && cp.agent == nil {
				co.Previous, co.Elsewhere = old[CheckpointFile], SpillFiles(next)
			}
			_, findings := s.Check(t, cpb, co)
			if guard && cp.agent != nil && !bytes.Equal(cp.agent, old[CheckpointFile]) && !sections.HasErrors(findings) {
				findings = append(findings, sections.Shrink(t.Parse(old[CheckpointFile]), t.Parse(cp.agent), s.shrinkRules(t, SpillFiles(cp.disk)))...)
			}
			if sections.HasErrors(findings) {
				if dry {
					return nil, res, &RejectedError{File: r.WorkPath(CheckpointFile), Findings: findings}
				}
				// Kept as written: the same broken bytes rejected again a minute later (a
				// hook retrying) are then the same rejected write, not a new ref.
				kept := copyFiles(next)
				kept[CheckpointFile] = written
				ref, h, err := r.Reject(kept, rejectMessage(r.ID, o.Trigger, findings))
				if err != nil {
					return nil, res, fmt.Errorf("keep rejected write: %w", err)
				}
				return nil, res, &RejectedError{File: r.WorkPath(CheckpointFile), Ref: ref, Commit: h, Findings: findings}
			}
			res.Findings = findings
		}
	}
	res.Files = changedFiles(old, next)
	for _, c := range res.Changes {
		res.Sections = append(res.Sections, c.ID)
	}
	res.Subject = subject(o, res.Changes, res.Files)
	if dry {
		return nil, res, nil
	}
	p, err := r.Prepare(repo.CommitRequest{
		Files: next, Message: message(r.ID, o.Trigger, o.Mode, res.Subject, res.Sections, res.Files),
		Parents: o.Parents, Force: o.Parents != nil,
		Disk: cp.disk, Touch: cp.touch, Appendable: []string{NotesFile},
	})
	if err != nil {
		return nil, res, err
	}
	return p, res, nil
}

// shrinkGuarded says whether a commit goes through the shrink guard: not when the user asked
// to go back to an earlier version (restore) or a merge took the other side's removals.
func shrinkGuarded(o CommitOptions) bool {
	return !o.AllowShrink && o.Trigger != "restore" && o.Trigger != "merge"
}

// maintain keeps the metadata lines ckpt owns: _last_updated_ becomes now when the content
// changed, and an empty or placeholder _session_id_ becomes the session id. When content
// differs from old only in those lines, old is returned and same is true, so identical
// content makes no commit. changes are the section changes, metadata aside.
func (s *Service) maintain(t *Template, id string, old, content []byte) (out []byte, same bool, changes []sections.Change) {
	oldDoc := t.Parse(old)
	norm := t.Parse(content)
	if v, ok := oldDoc.MetaValue("last_updated"); ok {
		norm.SetMeta("last_updated", v)
	}
	if v, ok := norm.MetaValue("session_id"); ok && isPlaceholderID(v) {
		if ov, ok := oldDoc.MetaValue("session_id"); ok {
			norm.SetMeta("session_id", ov)
		}
	}
	if old != nil && bytes.Equal(norm.Render(), old) {
		return old, true, nil
	}
	changes = sections.Diff(oldDoc, norm)
	doc := t.Parse(content)
	if hasKey(t.Spec.Meta, "last_updated") {
		doc.SetMeta("last_updated", FormatTime(s.now()))
	}
	if hasKey(t.Spec.Meta, "session_id") {
		if v, ok := doc.MetaValue("session_id"); ok && isPlaceholderID(v) {
			doc.SetMeta("session_id", id)
		}
	}
	return doc.Render(), false, changes
}

// isPlaceholderID reports whether a _session_id_ value is empty or the template's
// placeholder: ckpt fills those in, and keeps any other value a harness wrote.
func isPlaceholderID(v string) bool { return v == "" || v == "SESSION_ID" }

func hasKey(keys []string, k string) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}

func changedFiles(old, next map[string][]byte) []string {
	var out []string
	for name, b := range next {
		if ob, ok := old[name]; !ok || !bytes.Equal(ob, b) {
			out = append(out, name)
		}
	}
	for name := range old {
		if _, ok := next[name]; !ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// subject is the commit subject: checkpoint(<trigger>): <what changed>.
func subject(o CommitOptions, changes []sections.Change, files []string) string {
	what := o.Message
	if what == "" {
		what = describe(changes, files)
	}
	what, _, _ = strings.Cut(what, "\n")
	return fmt.Sprintf("checkpoint(%s): %s", o.Trigger, what)
}

func describe(changes []sections.Change, files []string) string {
	var parts []string
	byStatus := map[sections.Status][]string{}
	var order []sections.Status
	for _, c := range changes {
		name := string(c.ID)
		if c.ID != sections.PreambleID {
			name = sections.HeadingTitle(c.Heading)
		}
		if _, ok := byStatus[c.Status]; !ok {
			order = append(order, c.Status)
		}
		byStatus[c.Status] = append(byStatus[c.Status], name)
	}
	verbs := map[sections.Status]string{sections.Changed: "update", sections.Added: "add", sections.Removed: "remove", sections.Moved: "move"}
	for _, st := range order {
		names := byStatus[st]
		if len(names) > 3 {
			names = append(names[:3:3], fmt.Sprintf("%d more", len(byStatus[st])-3))
		}
		parts = append(parts, verbs[st]+" "+strings.Join(names, ", "))
	}
	for _, f := range files {
		if f != CheckpointFile || len(changes) == 0 {
			parts = append(parts, "update "+f)
		}
	}
	if len(parts) == 0 {
		return "no change"
	}
	return strings.Join(parts, "; ")
}

func message(id, trigger, mode, subject string, secs []sections.ID, files []string) string {
	var b strings.Builder
	b.WriteString(subject + "\n\n")
	b.WriteString("Ckpt-Session: " + id + "\n")
	b.WriteString("Ckpt-Trigger: " + trigger + "\n")
	if mode != "" && mode != trigger { // a hook's or cron's sync: say which it was
		b.WriteString("Ckpt-Mode: " + mode + "\n")
	}
	ids := make([]string, len(secs))
	for i, s := range secs {
		ids[i] = string(s)
	}
	b.WriteString("Ckpt-Sections: " + strings.Join(ids, ",") + "\n")
	if len(files) > 0 && !(len(files) == 1 && files[0] == CheckpointFile) {
		b.WriteString("Ckpt-Files: " + strings.Join(files, ",") + "\n")
	}
	return b.String()
}

func rejectMessage(id, trigger string, fs []sections.Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "rejected(%s): checkpoint failed check\n\n", trigger)
	for _, f := range fs {
		fmt.Fprintf(&b, "%s:%d: %s: %s\n", CheckpointFile, f.Line, f.Severity, f.Message)
	}
	fmt.Fprintf(&b, "\nCkpt-Session: %s\nCkpt-Trigger: %s\n", id, trigger)
	return b.String()
}

// InitFiles renders a new session's files from its template: metadata filled in.
func (s *Service) InitFiles(t *Template, id string) (map[string][]byte, error) {
	doc := t.Parse(t.Source)
	now := FormatTime(s.now())
	doc.SetMeta("last_updated", now)
	doc.SetMeta("session_id", id)
	doc.SetMeta("delta_since_last", now+" → "+now)
	files := map[string][]byte{CheckpointFile: doc.Render()}
	if t.Spec.Notes != "" {
		n, err := s.LoadTemplate(t.Spec.Notes)
		if err != nil {
			return nil, err
		}
		files[NotesFile] = n.Source
	}
	return files, nil
}

// InitSession creates a session from a template and makes its first commit.
func (s *Service) InitSession(id repo.SessionID, tmpl, worktree string, extra map[string]string) (*repo.Repo, repo.Hash, error) {
	t, err := s.LoadTemplate(tmpl)
	if err != nil {
		return nil, repo.ZeroHash, err
	}
	files, err := s.InitFiles(t, string(id))
	if err != nil {
		return nil, repo.ZeroHash, err
	}
	cfg := map[string]string{"template": tmpl}
	for k, v := range extra {
		cfg[k] = v
	}
	ids := make([]string, 0, len(t.Doc.Sections))
	for _, sec := range t.Doc.Sections {
		ids = append(ids, string(sec.ID))
	}
	msg := fmt.Sprintf("checkpoint(manual): start session %s from template %s\n\nCkpt-Session: %s\nCkpt-Trigger: manual\nCkpt-Sections: %s\n", id, tmpl, id, strings.Join(ids, ","))
	return s.Store.Init(id, repo.InitOptions{Files: files, Worktree: worktree, Config: cfg, Message: msg})
}
