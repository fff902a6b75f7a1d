package history

import (
	"errors"
	"io"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
)

// Shown is a file, or one section of it, at a revision.
type Shown struct {
	Provenance
	File string `json:"file"`
	// Heading is the section's heading line when one section was asked for.
	Heading string `json:"heading,omitempty"`
	// Content is the file or the section, byte for byte.
	Content string `json:"content"`
}

// Show returns file (checkpoint.md when "") at rev (HEAD when ""), or only section when it
// is not "": a section id, number or heading text, resolved against the template and then
// against the file itself (a section a person added by hand).
func (h *Reader) Show(session, rev, file, section string) (Shown, error) {
	if file == "" {
		file = checkpoint.File
	}
	out := Shown{File: file}
	err := h.with(session, func(src *source) error {
		hash, err := resolve(src, rev)
		if err != nil {
			return err
		}
		ci, err := src.commit(hash)
		if err != nil {
			return err
		}
		out.Provenance = toCommit(src.id(), ci).Provenance("")
		b, err := src.readFile(hash, file)
		if err != nil {
			return err
		}
		if section == "" {
			out.Content = string(b)
			return nil
		}
		t, err := h.template(src)
		if err != nil {
			return err
		}
		doc := t.Parse(b)
		s, err := findSection(t, doc, section, file, hash)
		if err != nil {
			return err
		}
		out.Section, out.Heading, out.Content = string(s.ID), s.HeadingLine(), string(s.Bytes())
		return nil
	})
	return out, err
}

// findSection finds a section query in doc (file at commit h): through the template first
// (so numbers work), then in the document itself (a section added by hand). A query that
// neither knows is the template's error: a mistyped query.
func findSection(t *checkpoint.Template, doc *sections.Document, query, file string, h repo.Hash) (*sections.Section, error) {
	id, terr := sectionOf(t, query)
	if terr == nil {
		if s := doc.Section(id); s != nil {
			return s, nil
		}
	}
	if s := doc.Find(query); s != nil {
		return s, nil
	}
	if terr != nil {
		return nil, terr
	}
	return nil, &SectionError{Query: query, Where: file + " at " + repo.ShortHash(h), Sections: ids(doc)}
}

// DiffQuery says what to compare.
type DiffQuery struct {
	// From is the older revision; "" is the first parent of To (nothing for a first commit).
	From string
	// To is the newer revision; "" is HEAD.
	To string
	// Section keeps one section's change (an id, a number or the heading text).
	Section string
	// File is the file to compare; "" is checkpoint.md.
	File string
}

// Change is one section that differs.
type Change struct {
	Section string `json:"section"`
	Heading string `json:"heading"`
	// Status is added, removed, changed or moved.
	Status string `json:"status"`
	// Moved is true when the section changed place, changed or not.
	Moved bool `json:"moved"`
	// Diff is the unified diff of the section (empty for a section that only moved).
	Diff string `json:"diff"`
}

// DiffResult is the per-section difference between two revisions of a file.
type DiffResult struct {
	Session string `json:"session"`
	File    string `json:"file"`
	// From is nil when To is a first commit: every section is added.
	From    *Commit  `json:"from"`
	To      Commit   `json:"to"`
	Changes []Change `json:"changes"`
}

// Diff compares a file between two revisions, section by section.
func (h *Reader) Diff(session string, q DiffQuery) (DiffResult, error) {
	out, in, err := h.readDiff(session, q)
	if err != nil {
		return out, err
	}
	in.each(func(ch sections.Change) {
		d := ""
		if ch.Status != sections.Moved {
			d = ch.Unified()
		}
		out.Changes = append(out.Changes, Change{Section: string(ch.ID), Heading: ch.Heading, Status: string(ch.Status), Moved: ch.Moved, Diff: d})
	})
	return out, nil
}

// DiffEach is Diff for a printer: it returns the result without its changes and hands fn
// each change in turn, its Diff empty, with a function that writes that change's unified
// diff (Diff's text, byte for byte) to a writer, so the diffs are never all in memory. The
// files are read under the session's lock and the changes handed out after it is released:
// a slow reader of the output holds up no write. DiffEach stops at fn's first error.
func (h *Reader) DiffEach(session string, q DiffQuery, fn func(ch Change, diff func(io.Writer) error) error) (DiffResult, error) {
	out, in, err := h.readDiff(session, q)
	if err != nil {
		return out, err
	}
	in.each(func(sc sections.Change) {
		if err != nil {
			return
		}
		ch := Change{Section: string(sc.ID), Heading: sc.Heading, Status: string(sc.Status), Moved: sc.Moved}
		err = fn(ch, func(w io.Writer) error {
			if sc.Status == sections.Moved {
				return nil
			}
			return sc.WriteUnified(w)
		})
	})
	return out, err
}

// diffInput is what a diff compares, read from the repository.
type diffInput struct {
	older, newer []byte
	t            *checkpoint.Template
	want         sections.ID // "" for every section
}

// each calls fn with the changes to report, in sections.Diff's order.
func (in diffInput) each(fn func(sections.Change)) {
	sections.EachChange(in.t.Parse(in.older), in.t.Parse(in.newer), func(ch sections.Change) bool {
		if in.want == "" || ch.ID == in.want {
			fn(ch)
		}
		return true
	})
}

// readDiff resolves the revisions and reads the two versions of the file, under the
// session's lock.
func (h *Reader) readDiff(session string, q DiffQuery) (DiffResult, diffInput, error) {
	if q.File == "" {
		q.File = checkpoint.File
	}
	out := DiffResult{Session: session, File: q.File, Changes: []Change{}}
	var in diffInput
	err := h.with(session, func(src *source) error {
		to, err := resolve(src, q.To)
		if err != nil {
			return err
		}
		toInfo, err := src.commit(to)
		if err != nil {
			return err
		}
		out.To = toCommit(src.id(), toInfo)
		from := repo.ZeroHash
		if q.From != "" {
			if from, err = resolve(src, q.From); err != nil {
				return err
			}
		} else if len(toInfo.Parents) > 0 {
			from = toInfo.Parents[0]
		}
		if in.newer, err = src.readFile(to, q.File); err != nil {
			return err
		}
		if from != repo.ZeroHash {
			fi, err := src.commit(from)
			if err != nil {
				return err
			}
			c := toCommit(src.id(), fi)
			out.From = &c
			if in.older, err = src.readFile(from, q.File); err != nil && !errors.Is(err, repo.ErrNoFile) {
				return err
			}
		}
		if in.t, err = h.template(src); err != nil {
			return err
		}
		if q.Section != "" {
			if in.want, err = sectionOf(in.t, q.Section); err != nil {
				return err
			}
		}
		return nil
	})
	return out, in, err
}
