package history

import (
	"errors"

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
	if q.File == "" {
		q.File = checkpoint.File
	}
	out := DiffResult{Session: session, File: q.File, Changes: []Change{}}
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
		newer, err := src.readFile(to, q.File)
		if err != nil {
			return err
		}
		var older []byte
		if from != repo.ZeroHash {
			fi, err := src.commit(from)
			if err != nil {
				return err
			}
			c := toCommit(src.id(), fi)
			out.From = &c
			if older, err = src.readFile(from, q.File); err != nil && !errors.Is(err, repo.ErrNoFile) {
				return err
			}
		}
		t, err := h.template(src)
		if err != nil {
			return err
		}
		var want sections.ID
		if q.Section != "" {
			if want, err = sectionOf(t, q.Section); err != nil {
				return err
			}
		}
		for _, ch := range sections.Diff(t.Parse(older), t.Parse(newer)) {
			if want != "" && ch.ID != want {
				continue
			}
			d := ""
			if ch.Status != sections.Moved {
				d = ch.Unified()
			}
			out.Changes = append(out.Changes, Change{Section: string(ch.ID), Heading: ch.Heading, Status: string(ch.Status), Moved: ch.Moved, Diff: d})
		}
		return nil
	})
	return out, err
}
