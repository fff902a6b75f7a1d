package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/ckpt-dev/ckpt/internal/hint"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
	"github.com/ckpt-dev/ckpt/templates"
)

// CommitOptions describe a commit: its trigger and an optional message.
type CommitOptions struct {
	Trigger Trigger
	Message string // replaces the generated description in the subject
	// TaskIDs, when not nil, also check task ids against the task database.
	TaskIDs map[string]bool
	// Parents of the commit: nil for HEAD; a merge gives HEAD and the other side.
	Parents []repo.Hash
	// Verbatim commits the bytes as they are, without metadata upkeep (an autosave).
	Verbatim bool
	// AllowShrink lets the checkpoint lose more entries than the shrink guard allows.
	AllowShrink bool
	// Cause is what ran a sync (cron, hook:pre-commit, claude:PreCompact), the Ckpt-Cause
	// trailer; "" for a command run by hand.
	Cause string
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
	return Retry(func() (Result, error) { return s.commitOnce(r, o, plan) })
}

func (s *Service) commitOnce(r *repo.Repo, o CommitOptions, plan change) (Result, error) {
	// A pull killed half way is finished first, or its files would be taken for new work.
	if err := s.Recover(r); err != nil {
		return Result{}, err
	}
	head, old, err := HeadFiles(r)
	if err != nil {
		return Result{}, err
	}
	disk, err := r.WorkFiles()
	if err != nil {
		return Result{}, err
	}
	var auto *Autosave
	if plan != nil {
		if head, old, auto, err = s.Autosave(r, head, old, disk, string(o.Trigger)); err != nil {
			return Result{}, err
		}
	}
	// Committing the disk: every file is the command's, as read (plus metadata upkeep).
	next, touch := maps.Clone(disk), sortedNames(disk)
	if plan != nil {
		if next, touch, err = plan(maps.Clone(old), maps.Clone(disk)); err != nil {
			return Result{Autosave: auto}, err
		}
	}
	res, err := s.commitFiles(r, Plan{Head: head, Old: old, Next: next, Disk: disk, Touch: touch}, o)
	res.Autosave = auto
	return res, err
}

// Autosave commits the work tree's uncommitted bytes as they are (trigger autosave) before a
// command (cause) replaces files there. A checkpoint that check refuses is kept under
// refs/ckpt/rejected/N (the other files are still committed) and left on disk as it is.
// It returns the new head and its files. The caller holds the exclusive lock.
func (s *Service) Autosave(r *repo.Repo, head repo.Hash, old, disk map[string][]byte, cause string) (repo.Hash, map[string][]byte, *Autosave, error) {
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
		next := maps.Clone(old)
		for _, name := range dirty {
			next[name] = disk[name]
		}
		o.Message = "record uncommitted " + strings.Join(dirty, ", ") + " before " + cause
		res, err := s.commitFiles(r, Plan{Head: head, Old: old, Next: next, Disk: disk}, o)
		var rej *RejectedError
		if errors.As(err, &rej) && slices.Contains(dirty, File) {
			// The bytes are kept under the rejected ref and stay on disk; the other files
			// are committed on main.
			auto.RejectedRef, auto.Rejected = rej.Ref, []string{File}
			dirty = slices.DeleteFunc(dirty, func(n string) bool { return n == File })
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
	return Retry(func() (Result, error) { return s.commitOnce(r, o, nil) })
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
		if src = t.Parse(then[File]).Find(section); src == nil {
			return Result{}, fmt.Errorf("%s at %s: no section %q", File, repo.ShortHash(from), section)
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
			return maps.Clone(then), touch, nil
		}
		// Every other section keeps the bytes it has on disk now.
		cur, ok := disk[File]
		if !ok {
			cur = base[File]
		}
		doc := t.Parse(cur)
		doc.Put(*src, t.Order())
		base[File] = doc.Render()
		return base, []string{File}, nil
	})
}

// Plan is one commit: the head and files it starts from, the complete new files, and how
// the work tree is treated (see repo.WorkTreeUpdate). notes.md is always appendable: agents
// append to it without taking ckpt's lock.
type Plan struct {
	Head      repo.Hash
	Old, Next map[string][]byte
	Disk      map[string][]byte // the work tree as read; nil: no compare and swap
	Touch     []string
	// Agent, when set, is the checkpoint as the agent wrote it, which the shrink guard
	// checks instead of the committed one (a sync's own moves are not the agent's).
	Agent []byte
}

// commitFiles makes one commit on main: metadata upkeep, check (reject on errors), message,
// commit, work tree. Only commitChange and the commands built on it call it; the caller
// holds the exclusive lock.
func (s *Service) commitFiles(r *repo.Repo, cp Plan, o CommitOptions) (Result, error) {
	p, res, err := s.Prepare(r, cp, o, false)
	if err != nil {
		return res.Result, err
	}
	if err := p.Apply(); err != nil {
		return res.Result, err
	}
	res.Repaired, res.Kept = p.Repaired, p.Kept
	if p.Changed() {
		if err := res.FinishMerge(r); err != nil {
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

// Prepared is a Result with what a caller applying the commit later needs.
type Prepared struct {
	Result
	Changes []sections.Change
	// Next are the files of the commit, metadata upkeep done.
	Next map[string][]byte
	// mergeHead is the pending merge this commit finishes, cleared once it is applied.
	mergeHead repo.Hash
}

// FinishMerge clears the pending merge a just-applied commit finished.
func (p Prepared) FinishMerge(r *repo.Repo) error {
	if p.mergeHead == repo.ZeroHash {
		return nil
	}
	return r.SetMergeHead(repo.ZeroHash, "")
}

// Prepare does everything a commit does short of moving main: metadata upkeep, check (a
// refused checkpoint is kept under refs/ckpt/rejected/N and a *RejectedError returned),
// message, objects. The caller Applies the prepared commit (a sync together with the
// knowledge repository's), then calls FinishMerge. A dry run writes no objects and
// returns a nil *repo.Prepared. The caller holds the exclusive lock.
func (s *Service) Prepare(r *repo.Repo, cp Plan, o CommitOptions, dry bool) (*repo.Prepared, Prepared, error) {
	head, old, next := cp.Head, cp.Old, cp.Next
	res := Prepared{Next: next}
	// A pending merge (a pull left conflicts): whatever commits next finishes it, with both
	// parents, whether it is ckpt commit, a write or a hook's sync.
	if o.Parents == nil {
		mh, err := r.MergeHead()
		if err != nil {
			return nil, res, err
		}
		if mh != repo.ZeroHash {
			o.Parents, o.Trigger, res.mergeHead = []repo.Hash{head, mh}, TriggerMerge, mh
			if o.Message == "" {
				o.Message = "merge " + repo.ShortHash(mh) + " (conflicts resolved)"
			}
		}
	}
	// An agent's own memory directory (template free) is versioned as it is: no file is
	// required and none is checked.
	free := r.Template() == templates.Free
	if _, had := old[File]; had && !free {
		if _, has := next[File]; !has {
			return nil, res, hint.New(fmt.Errorf("%s: missing from the work tree; nothing committed", r.WorkPath(File)), "bring it back with ckpt restore --rev HEAD")
		}
	}
	if cpb, ok := next[File]; ok && !free {
		written := cpb // as the agent wrote it, before metadata upkeep
		t, err := s.LoadTemplate(r.Template())
		if err != nil {
			return nil, res, err
		}
		var same bool
		if o.Verbatim {
			same = bytes.Equal(old[File], cpb)
			if !same {
				res.Changes = sections.Diff(t.Parse(old[File]), t.Parse(cpb))
			}
		} else {
			cpb, same, res.Changes = s.maintain(t, r.ID, old[File], cpb)
			next[File] = cpb
		}
		if !same {
			co := CheckOptions{TaskIDs: o.TaskIDs}
			guard := shrinkGuarded(o) && old[File] != nil
			if guard && cp.Agent == nil {
				co.Previous, co.Elsewhere = old[File], spillFiles(next)
			}
			_, findings := s.Check(t, cpb, co)
			if guard && cp.Agent != nil && !bytes.Equal(cp.Agent, old[File]) && !sections.HasErrors(findings) {
				findings = append(findings, sections.Shrink(t.Parse(old[File]), t.Parse(cp.Agent), s.shrinkRules(t, spillFiles(cp.Disk)))...)
			}
			if sections.HasErrors(findings) {
				if dry {
					return nil, res, &RejectedError{File: r.WorkPath(File), Findings: findings}
				}
				// Kept as written: the same broken bytes rejected again a minute later (a
				// hook retrying) are then the same rejected write, not a new ref.
				kept := maps.Clone(next)
				kept[File] = written
				ref, h, err := r.Reject(kept, rejectMessage(r.ID, o.Trigger, o.Cause, findings))
				if err != nil {
					return nil, res, fmt.Errorf("keep rejected write: %w", err)
				}
				return nil, res, &RejectedError{File: r.WorkPath(File), Ref: ref, Commit: h, Findings: findings}
			}
			res.Findings = findings
		}
	}
	res.Files = changedFiles(old, next)
	for _, c := range res.Changes {
		res.Sections = append(res.Sections, c.ID)
	}
	what := o.Message
	if what == "" {
		what = describe(res.Changes, res.Files, next)
	}
	res.Subject = Subject(o.Trigger, what)
	if dry {
		return nil, res, nil
	}
	p, err := r.Prepare(repo.CommitRequest{
		Files: next, Message: withConversation(commitMessage(r.ID, o.Trigger, o.Cause, res.Subject, res.Sections, res.Files), s.Conversation),
		Parents: o.Parents, Force: o.Parents != nil,
		Disk: cp.Disk, Touch: cp.Touch, Appendable: []string{NotesFile},
	})
	if err != nil {
		return nil, res, err
	}
	return p, res, nil
}

// shrinkGuarded says whether a commit goes through the shrink guard: not when the user asked
// to go back to an earlier version (restore) or a merge took the other side's removals.
func shrinkGuarded(o CommitOptions) bool {
	return !o.AllowShrink && o.Trigger != TriggerRestore && o.Trigger != TriggerMerge
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
	if slices.Contains(t.Spec.Meta, "last_updated") {
		doc.SetMeta("last_updated", FormatTime(s.now()))
	}
	if slices.Contains(t.Spec.Meta, "session_id") {
		if v, ok := doc.MetaValue("session_id"); ok && isPlaceholderID(v) {
			doc.SetMeta("session_id", id)
		}
	}
	return doc.Render(), false, changes
}

// isPlaceholderID reports whether a _session_id_ value is empty or the template's
// placeholder: ckpt fills those in, and keeps any other value a harness wrote.
func isPlaceholderID(v string) bool { return v == "" || v == "SESSION_ID" }

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

func describe(changes []sections.Change, files []string, next map[string][]byte) string {
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
		if _, kept := next[f]; !kept {
			parts = append(parts, "remove "+f) // a deleted memory file, say
		} else if f != File || len(changes) == 0 {
			parts = append(parts, "update "+f)
		}
	}
	if len(parts) == 0 {
		return "no change"
	}
	return strings.Join(parts, "; ")
}

func sortedNames(m map[string][]byte) []string { return slices.Sorted(maps.Keys(m)) }
