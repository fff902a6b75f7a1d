package modeltest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// state the model reads from disk before a command, to know which exit code DESIGN.md
// gives: a checkpoint check rejects, conflict markers left by a pull, a pending merge.
func (w *world) cpBroken(h *home) bool {
	b, err := os.ReadFile(h.file("checkpoint.md"))
	return err == nil && !w.seq.tmpl.valid(b)
}

func (w *world) cpMissing(h *home) bool {
	_, err := os.Stat(h.file("checkpoint.md"))
	return errors.Is(err, fs.ErrNotExist)
}

func (w *world) markers(h *home) bool {
	files, _ := os.ReadDir(h.session())
	for _, f := range files {
		if f.Type().IsRegular() {
			if b, err := os.ReadFile(h.file(f.Name())); err == nil && hasMarkers(b) {
				return true
			}
		}
	}
	return false
}

func (w *world) mergePending(h *home) bool {
	_, err := os.Stat(filepath.Join(h.session(), ".git", "MERGE_HEAD"))
	return err == nil
}

func (w *world) knowledgeMergePending(h *home) bool {
	_, err := os.Stat(filepath.Join(h.knowledge(), ".git", "MERGE_HEAD"))
	return err == nil
}

// spills are the checkpoint-<topic>.md files of h's work tree.
func (w *world) spills(h *home) [][]byte {
	var out [][]byte
	names, _ := filepath.Glob(filepath.Join(h.session(), "checkpoint-*.md"))
	for _, n := range names {
		if b, err := os.ReadFile(n); err == nil {
			out = append(out, b)
		}
	}
	return out
}

// diskShrinks reports whether the checkpoint on disk may trip the shrink guard against
// HEAD's (a killed restore or write can leave an older version on disk).
func (w *world) diskShrinks(h *home) bool {
	disk, err := os.ReadFile(h.file("checkpoint.md"))
	if err != nil {
		return false
	}
	return w.seq.tmpl.mayShrink(w.headFile(h, "checkpoint.md"), disk, w.spills(h)...)
}

// expect checks how a process ended against the exit codes DESIGN.md allows here. A
// killed process is not judged. A Go panic or runtime error is a failure whatever the
// code, and so is exit 2: every command the model runs is valid usage.
func expect(r result, allowed ...int) error {
	if r.killed {
		return nil
	}
	for _, bad := range []string{"panic:", "goroutine ", "fatal error:", "runtime error"} {
		if strings.Contains(r.stderr, bad) {
			return fmt.Errorf("ckpt crashed (%q in stderr)\n%s", bad, r.full())
		}
	}
	if r.code == 2 || !slices.Contains(allowed, r.code) {
		return fmt.Errorf("unexpected exit code %d, want one of %v\n%s", r.code, allowed, r.full())
	}
	return nil
}

// reportedHash finds the commit a command reported on the first line of its standard
// output ("<hash> <subject>", "synced ID (mode) at <hash>", "… unchanged at <hash>"), or on
// sync's knowledge line ("knowledge: … promoted at <hash>").
var reportedHash = regexp.MustCompile(`(?m)^([0-9a-f]{7,40}) |\bat ([0-9a-f]{7,40})\b`)

// afterCommit checks what DESIGN.md promises once a command that commits exited 0: the
// commit it reported is on main, and, for write and restore, the checkpoint on disk is
// the one HEAD holds (restore --rev HEAD repairs a broken file; issue 8 item 2).
func (w *world) afterCommit(h *home, r result, diskIsHead bool) error {
	if r.killed || r.code != 0 {
		return nil
	}
	for i, l := range strings.Split(r.stdout, "\n") {
		dir := h.session()
		switch {
		case strings.Contains(l, "knowledge:"):
			dir = h.knowledge()
		case i > 0:
			continue
		}
		if m := reportedHash.FindStringSubmatch(l); m != nil {
			c := m[1] + m[2]
			if strings.HasPrefix(mainCommit(filepath.Join(dir, ".git")), c) {
				continue
			}
			if _, err := w.git(dir, nil, "merge-base", "--is-ancestor", c, "main"); err != nil {
				return fmt.Errorf("ckpt reported commit %s, which is not on main of %s: %v\n%s", c, dir, err, r.full())
			}
		}
	}
	if !diskIsHead {
		return nil
	}
	disk, err := os.ReadFile(h.file("checkpoint.md"))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("after ckpt %s exited 0, checkpoint.md is missing from the work tree", strings.Join(r.args, " "))
	}
	if err != nil {
		return err
	}
	if head := w.headFile(h, "checkpoint.md"); string(head) != string(disk) {
		return fmt.Errorf("after ckpt %s exited 0, checkpoint.md on disk is not HEAD's:\n%s", strings.Join(r.args, " "),
			indent(unifiedLines(head, disk)))
	}
	return nil
}

// unifiedLines is a crude diff for a report: the lines only one side has.
func unifiedLines(a, b []byte) string {
	in := func(x []byte) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(string(x), "\n") {
			m[l] = true
		}
		return m
	}
	ia, ib := in(a), in(b)
	var out []string
	for _, l := range strings.Split(string(a), "\n") {
		if !ib[l] {
			out = append(out, "- "+l)
		}
	}
	for _, l := range strings.Split(string(b), "\n") {
		if !ia[l] {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}

// do runs one operation and returns its outcome for the log; an error is a failure.
func (w *world) do(o *op) (string, error) {
	h := w.homes[o.home]
	t := w.seq.tmpl
	sec := o.section % len(t.ids)
	brokenSec := (o.section / 7) % len(t.ids)
	switch o.kind {
	case opNote:
		return "appended", w.appendNote(h, o.style, "agent notes entry")

	case opEdit:
		disk, err := os.ReadFile(h.file("checkpoint.md"))
		if errors.Is(err, fs.ErrNotExist) {
			return "no checkpoint.md on disk; the harness leaves it", nil
		}
		if err != nil {
			return "", err
		}
		tk := w.newToken()
		line := "- harness edit " + tk
		content, ok := t.insert(t.repair(disk), sec, line)
		if !ok {
			return "", fmt.Errorf("harness: no heading %q in checkpoint.md after repair:\n%s", t.headings[sec], indent(string(disk)))
		}
		if o.invalid {
			content = t.breakHeading(content, brokenSec)
		}
		w.register(h, fmt.Sprintf("harness edit of checkpoint.md %q", line), false, tk)
		if err := os.WriteFile(h.file("checkpoint.md"), content, 0o644); err != nil {
			return "", err
		}
		// The harness resolves conflicts in the other files too: marker lines go, every
		// other line stays.
		if err := w.dropMarkerLines(h); err != nil {
			return "", err
		}
		if o.invalid {
			return "wrote an invalid checkpoint", nil
		}
		return "wrote", nil

	case opDelete:
		disk, err := os.ReadFile(h.file("checkpoint.md"))
		if errors.Is(err, fs.ErrNotExist) {
			return "already gone", nil
		}
		if err != nil {
			return "", err
		}
		if string(disk) != string(w.headFile(h, "checkpoint.md")) {
			// The harness would destroy its own uncommitted bytes: not a thing to test.
			return "it holds uncommitted bytes; the harness keeps it", nil
		}
		return "deleted", os.Remove(h.file("checkpoint.md"))

	case opWrite:
		base := w.headFile(h, "checkpoint.md")
		if !o.fromHead || base == nil {
			if disk, err := os.ReadFile(h.file("checkpoint.md")); err == nil {
				base = disk
			}
		}
		if base == nil {
			return "", fmt.Errorf("no checkpoint.md in HEAD nor on disk")
		}
		tk := w.newToken()
		line := "- written " + tk
		content, ok := t.insert(t.repair(base), sec, line)
		if !ok {
			return "", fmt.Errorf("write: no heading %q in the base checkpoint:\n%s", t.headings[sec], indent(string(base)))
		}
		if o.invalid {
			content = t.breakHeading(content, brokenSec)
		}
		disk, _ := os.ReadFile(h.file("checkpoint.md"))
		shrinks := t.mayShrink(w.headFile(h, "checkpoint.md"), content, w.spills(h)...) ||
			(t.valid(disk) && t.mayShrink(disk, content, w.spills(h)...))
		r, err := w.ckpt(h, o, content, "write", "-s", sessionID)
		if err != nil {
			return "", err
		}
		w.register(h, fmt.Sprintf("ckpt write's stdin (%s)", r.short()), r.killed, tk)
		want := []int{0}
		switch {
		case !t.valid(content):
			want = []int{3}
		case shrinks:
			// The write drops items the committed checkpoint (or the disk's, which is
			// autosaved first) holds: the shrink guard may reject it.
			want = []int{0, 3}
		}
		if err := expect(r, want...); err != nil {
			return r.short(), err
		}
		return r.short(), w.afterCommit(h, r, true)

	case opWriteNotes:
		base := w.headFile(h, "notes.md")
		if !o.fromHead || base == nil {
			if disk, err := os.ReadFile(h.file("notes.md")); err == nil {
				base = disk
			}
		}
		base = dropMarkers(base)
		if len(base) > 0 && base[len(base)-1] != '\n' {
			base = append(base, '\n')
		}
		text, keep := entry(o.style, w.newToken(), w.newToken())
		content := append(base, text+"\n"...)
		r, err := w.ckpt(h, o, content, "write", "-s", sessionID, "--file", "notes.md")
		if err != nil {
			return "", err
		}
		w.register(h, fmt.Sprintf("ckpt write --file notes.md's stdin, entry %q (%s)", text, r.short()), r.killed, keep...)
		if err := expect(r, 0); err != nil {
			return r.short(), err
		}
		return r.short(), w.afterCommit(h, r, false)

	case opCommit:
		want := []int{0}
		switch {
		case w.cpMissing(h):
			// "missing from the work tree; nothing committed", with a hint to restore.
			want = []int{1}
		case w.cpBroken(h):
			want = []int{3}
		case w.diskShrinks(h):
			want = []int{0, 3}
		}
		r, err := w.ckpt(h, o, nil, "commit", "-s", sessionID)
		if err != nil {
			return "", err
		}
		if err := expect(r, want...); err != nil {
			return r.short(), err
		}
		return r.short(), w.afterCommit(h, r, false)

	case opSync, opSparse:
		args := []string{"sync", "-s", sessionID}
		if o.kind == opSparse {
			if err := w.transcriptLines(h, o.lines, o.partial); err != nil {
				return "", err
			}
			args = append(args, "--sparse", "--transcript", h.transcript)
		} else if o.full {
			if _, err := os.Stat(h.transcript); err == nil {
				args = append(args, "--transcript", h.transcript)
			}
		}
		want := []int{0}
		switch {
		case w.cpMissing(h):
			want = []int{1}
		case w.cpBroken(h):
			want = []int{3}
		case w.diskShrinks(h):
			want = []int{0, 3}
		case o.kind == opSync && w.markers(h):
			// Marker lines in notes.md are routed like any line: the checkpoint they land
			// in may fail check.
			want = []int{0, 3}
		}
		r, err := w.ckpt(h, o, nil, args...)
		if err != nil {
			return "", err
		}
		if err := expect(r, want...); err != nil {
			return r.short(), err
		}
		return r.short(), w.afterCommit(h, r, false)

	case opRestoreSect, opRestore:
		out, err := w.git(h.session(), nil, "rev-list", "main")
		if err != nil {
			return "", fmt.Errorf("main is unreadable: %w", err)
		}
		revs := strings.Fields(out)
		if len(revs) == 0 {
			return "", fmt.Errorf("main has no commits")
		}
		back := int(o.rev % uint32(len(revs)))
		rev := revs[back]
		switch (o.rev >> 8) % 4 {
		case 0:
			rev = rev[:12]
		case 1:
			// The names a user types: HEAD and HEAD~N along the first parents.
			first, err := w.git(h.session(), nil, "rev-list", "--first-parent", "main")
			if err != nil {
				return "", err
			}
			n := back % len(strings.Fields(first))
			rev = "HEAD"
			if n > 0 {
				rev = fmt.Sprintf("HEAD~%d", n)
			}
		}
		args := []string{"restore", "-s", sessionID, "--rev", rev}
		want := []int{0}
		if o.kind == opRestoreSect {
			args = append(args, "--section", t.ids[sec])
			if w.cpBroken(h) {
				// The other sections keep their bytes: a broken heading elsewhere stays.
				want = []int{0, 3}
			}
		}
		r, err := w.ckpt(h, o, nil, args...)
		if err != nil {
			return "", err
		}
		out = fmt.Sprintf("R=%s: %s", rev[:min(len(rev), 7)], r.short())
		if err := expect(r, want...); err != nil {
			return out, err
		}
		return out, w.afterCommit(h, r, true)

	case opGC:
		args := []string{"gc", "-s", sessionID}
		want := []int{0}
		if o.squash != "" {
			args = append(args, "--squash-sparse-older-than", o.squash)
			if w.mergePending(h) {
				// Issue 8 item 3: gc refuses to squash while a merge is pending.
				want = []int{1}
			}
		}
		r, err := w.ckpt(h, o, nil, args...)
		if err != nil {
			return "", err
		}
		return r.short(), expect(r, want...)

	case opPush:
		r, err := w.ckpt(h, o, nil, "push")
		if err != nil {
			return "", err
		}
		if !r.killed && r.code == 1 && pushBehind(r) {
			return r.short() + " (behind the remote)", nil
		}
		return r.short(), expect(r, 0)

	case opPull:
		want := []int{0, 5}
		switch {
		case w.mergePending(h) || w.knowledgeMergePending(h):
			// A pull that left conflicts must be finished before the next one.
			want = []int{1}
		case w.cpBroken(h) || w.diskShrinks(h):
			// Uncommitted bytes are recorded before a merge: a checkpoint check rejects is
			// kept under refs/ckpt/rejected/N and the merge goes on, or the pull refuses.
			want = []int{0, 3, 5}
		case w.cpMissing(h):
			// Likewise a work tree without its checkpoint.
			want = []int{0, 1, 5}
		}
		r, err := w.ckpt(h, o, nil, "pull")
		if err != nil {
			return "", err
		}
		return r.short(), expect(r, want...)
	}
	return "", fmt.Errorf("unknown operation %d", o.kind)
}

// pushBehind reports whether a push failed because the remote has commits this home has
// not pulled yet: exit 1, as DESIGN.md gives for a failure, with a message saying so.
func pushBehind(r result) bool {
	s := strings.ToLower(r.stderr)
	return strings.Contains(s, "the remote has commits you do not have") ||
		strings.Contains(s, "non-fast-forward") || strings.Contains(s, "fetch first")
}

// dropMarkerLines removes conflict marker lines from every file of h's session work tree
// but checkpoint.md (which the harness repairs itself), and of its knowledge work tree.
func (w *world) dropMarkerLines(h *home) error {
	for _, dir := range []string{h.session(), h.knowledge()} {
		files, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		for _, f := range files {
			if !f.Type().IsRegular() || (dir == h.session() && f.Name() == "checkpoint.md") {
				continue
			}
			p := filepath.Join(dir, f.Name())
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if hasMarkers(b) {
				if err := os.WriteFile(p, dropMarkers(b), 0o644); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// repairAll is the harness making h's work tree acceptable: headings back, markers gone.
func (w *world) repairAll(h *home) error {
	b, err := os.ReadFile(h.file("checkpoint.md"))
	if err != nil {
		return err
	}
	if r := w.seq.tmpl.repair(b); string(r) != string(b) {
		if err := os.WriteFile(h.file("checkpoint.md"), r, 0o644); err != nil {
			return err
		}
	}
	return w.dropMarkerLines(h)
}

// settle ends a sequence as a user would: each home's work tree repaired and committed
// (after which git status must be clean), and, with two homes, pull and push until both
// and the remote agree. A killed pull or push must not keep them from converging, and a
// pull after that must change nothing.
func (w *world) settle() error {
	commit := func(h *home) error {
		if w.cpMissing(h) {
			r, err := w.ckpt(h, nil, nil, "restore", "-s", sessionID, "--rev", "HEAD")
			if err != nil {
				return err
			}
			w.log = append(w.log, fmt.Sprintf("settle %s: checkpoint.md is missing, ckpt restore --rev HEAD (as the hint says): %s", h.name, r.short()))
			if err := expect(r, 0); err != nil {
				return err
			}
			if err := w.afterCommit(h, r, true); err != nil {
				return err
			}
		}
		if err := w.repairAll(h); err != nil {
			return err
		}
		if w.knowledgeMergePending(h) {
			// What ckpt's own hint says to do after a conflict in the knowledge repository.
			r, err := w.ckpt(h, nil, nil, "commit", "--knowledge")
			if err != nil {
				return err
			}
			w.log = append(w.log, fmt.Sprintf("settle %s: resolve the knowledge conflict, ckpt commit --knowledge (as the hint says): %s", h.name, r.short()))
			if err := expect(r, 0); err != nil {
				return fmt.Errorf("a conflict in the knowledge repository cannot be finished: %w", err)
			}
		}
		shrinks := w.diskShrinks(h)
		r, err := w.ckpt(h, nil, nil, "commit", "-s", sessionID)
		if err != nil {
			return err
		}
		w.log = append(w.log, fmt.Sprintf("settle %s: repair, ckpt commit: %s", h.name, r.short()))
		if shrinks && r.code == 3 {
			// The disk holds an older checkpoint than HEAD (a killed restore or write left
			// it): the user confirms it, as the guard's message says.
			if r, err = w.ckpt(h, nil, nil, "commit", "-s", sessionID, "--allow-shrink"); err != nil {
				return err
			}
			w.log = append(w.log, fmt.Sprintf("settle %s: ckpt commit --allow-shrink: %s", h.name, r.short()))
		}
		if err := expect(r, 0); err != nil {
			return err
		}
		out, err := w.git(h.session(), nil, "status", "--porcelain")
		if err != nil {
			return err
		}
		if strings.TrimSpace(out) != "" {
			return fmt.Errorf("home %s: git status is not clean after ckpt commit:\n%s", h.name, indent(out))
		}
		return nil
	}
	for _, h := range w.homes {
		if err := commit(h); err != nil {
			return err
		}
	}
	if len(w.homes) < 2 {
		return nil
	}
	// a brings in what b pushed and sends its own, b merges that and sends the result, a
	// fast-forwards to it: then both homes and the remote must agree.
	travel := func(h *home, push bool) error {
		r, err := w.ckpt(h, nil, nil, "pull")
		if err != nil {
			return err
		}
		w.log = append(w.log, fmt.Sprintf("settle %s: ckpt pull: %s", h.name, r.short()))
		if err := expect(r, 0, 5); err != nil {
			return err
		}
		if r.code == 5 {
			if err := commit(h); err != nil {
				return err
			}
		}
		if !push {
			return nil
		}
		r, err = w.ckpt(h, nil, nil, "push")
		if err != nil {
			return err
		}
		w.log = append(w.log, fmt.Sprintf("settle %s: ckpt push: %s", h.name, r.short()))
		return expect(r, 0)
	}
	a, b := w.homes[0], w.homes[1]
	for _, step := range []struct {
		h    *home
		push bool
	}{{a, true}, {b, true}, {a, false}} {
		if err := travel(step.h, step.push); err != nil {
			return err
		}
	}
	heads := func() (string, error) {
		var b strings.Builder
		for _, h := range w.homes {
			for _, d := range []string{h.session(), h.knowledge()} {
				id := mainCommit(filepath.Join(d, ".git"))
				if id == "" {
					out, err := w.git(d, nil, "rev-parse", "main")
					if err != nil {
						return "", err
					}
					id = strings.TrimSpace(out)
				}
				fmt.Fprintf(&b, "%s %s\n", filepath.Base(d), id)
			}
		}
		return b.String(), nil
	}
	before, err := heads()
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSpace(before), "\n")
	remote, err := w.git(w.remote, nil, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/")
	if err != nil {
		return err
	}
	if lines[0] != lines[2] || lines[1] != lines[3] ||
		!strings.Contains(remote, "refs/heads/sessions/"+sessionID+" "+strings.Fields(lines[0])[1]) ||
		!strings.Contains(remote, "refs/heads/knowledge "+strings.Fields(lines[1])[1]) {
		return fmt.Errorf("the homes did not converge (a pull, push; b pull, push; a pull):\nhomes a then b:\n%sremote:\n%s", indent(before), indent(remote))
	}
	// One more pull, with nothing new on the remote, must change nothing (a killed pull
	// must not leave a session that merges again on every pull).
	r, err := w.ckpt(b, nil, nil, "pull")
	if err != nil {
		return err
	}
	w.log = append(w.log, fmt.Sprintf("settle b: ckpt pull once more: %s", r.short()))
	if err := expect(r, 0); err != nil {
		return err
	}
	after, err := heads()
	if err != nil {
		return err
	}
	if after != before {
		return fmt.Errorf("a pull with nothing new changed a home:\nbefore:\n%safter:\n%s", indent(before), indent(after))
	}
	return nil
}
