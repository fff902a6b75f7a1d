package history

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/repo"
)

// BlameLine is one line of a section and the commit that added it.
type BlameLine struct {
	// Line is the line's number in the file at the blamed revision (1-based).
	Line    int       `json:"line"`
	Text    string    `json:"text"`
	Commit  string    `json:"commit"`
	Short   string    `json:"short"`
	Time    time.Time `json:"time"`
	Trigger string    `json:"trigger"`
	Full    bool      `json:"full"`
}

// BlameResult is a section at a revision, line by line, with the commit that added each
// line. Blank lines, the heading and directive lines and the lines the template itself
// puts in the section (six's closing ---, a placeholder) are left out: they are no one's.
type BlameResult struct {
	Provenance
	File    string      `json:"file"`
	Heading string      `json:"heading"`
	Lines   []BlameLine `json:"lines"`
	// Walked is how many commits were read to attribute every line.
	Walked int `json:"walked"`
}

// Blame says, for each line of a section of checkpoint.md at rev (HEAD when ""), which
// commit added it. It walks first parents once, newest first: a commit whose file has the
// same blob as its child's, or whose section has the same bytes, is passed over without
// looking at lines; otherwise the lines of the child's section that the parent's lacks were
// added by the child. The walk stops as soon as every line is attributed. A line a merge
// brought in is the merge's; the first commit owns what was there from the start.
func (h *Reader) Blame(session, section, rev string) (BlameResult, error) {
	var out BlameResult
	err := h.with(session, func(src *source) error {
		start, err := resolve(src, rev)
		if err != nil {
			return err
		}
		t, err := h.template(src)
		if err != nil {
			return err
		}
		out, err = blame(src, t, start, section)
		return err
	})
	return out, err
}

func blame(src *source, t *checkpoint.Template, start repo.Hash, section string) (BlameResult, error) {
	file := checkpoint.File
	out := BlameResult{File: file, Lines: []BlameLine{}}
	blob, err := src.fileBlob(start, file)
	if err != nil {
		return out, err
	}
	if blob == repo.ZeroHash {
		return out, fmt.Errorf("%s at %s: %w", file, repo.ShortHash(start), repo.ErrNoFile)
	}
	b, err := src.blob(blob)
	if err != nil {
		return out, err
	}
	doc := t.Parse(b)
	sec, err := findSection(t, doc, section, file, start)
	if err != nil {
		return out, err
	}
	out.Section, out.Heading = string(sec.ID), sec.HeadingLine()
	// pending maps a line's text to the lines (indexes into out.Lines) with that text that
	// no commit has claimed yet.
	pending := map[string][]int{}
	left := 0
	n := sec.Line + 1
	if sec.Directive != nil {
		n++
	}
	// Lines the template itself puts in the section (the closing ---, a placeholder) are
	// no one's entries.
	skip := map[string]bool{}
	if ts := t.Doc.Section(sec.ID); ts != nil {
		eachLine(ts.Body, func(l []byte) { skip[string(bytes.TrimSpace(l))] = true })
	}
	eachLine(sec.Body, func(l []byte) {
		if len(bytes.TrimSpace(l)) > 0 && !skip[string(bytes.TrimSpace(l))] {
			pending[string(l)] = append(pending[string(l)], len(out.Lines))
			out.Lines = append(out.Lines, BlameLine{Line: n, Text: string(l)})
			left++
		}
		n++
	})
	claim := func(c repo.CommitInfo, idx []int) {
		cc := toCommit(src.id(), c)
		for _, i := range idx {
			l := &out.Lines[i]
			l.Commit, l.Short, l.Time, l.Trigger, l.Full = cc.Hash, cc.Short, cc.Time, cc.Trigger, cc.Full
		}
		left -= len(idx)
	}
	var child repo.CommitInfo
	body := sec.Body
	var werr error
	err = src.walk(start, func(ci repo.CommitInfo) bool {
		out.Walked++
		if out.Walked == 1 {
			out.Provenance = toCommit(src.id(), ci).Provenance(string(sec.ID))
			child = ci
			return left > 0
		}
		if unchangedBy(child, string(sec.ID)) {
			// The child's trailers say it left the section as this commit had it: no tree,
			// no blob to read.
			child, blob = ci, repo.ZeroHash
			return true
		}
		pb, err := src.fileBlob(ci.Hash, file)
		if err != nil {
			werr = err
			return false
		}
		if pb != repo.ZeroHash && pb == blob {
			child = ci
			return true
		}
		var parentBody []byte
		found := false
		if pb != repo.ZeroHash {
			data, err := src.blob(pb)
			if err != nil {
				werr = err
				return false
			}
			if ps := t.Parse(data).Section(sec.ID); ps != nil {
				parentBody, found = ps.Body, true
			}
		}
		if !found {
			for _, idx := range pending {
				claim(child, idx)
			}
			clear(pending)
			return false
		}
		blob = pb
		if !bytes.Equal(parentBody, body) {
			have := map[string]int{}
			eachLine(parentBody, func(l []byte) {
				if _, ok := pending[string(l)]; ok {
					have[string(l)]++
				}
			})
			for text, idx := range pending {
				if m := have[text]; m < len(idx) {
					claim(child, idx[m:])
					if m == 0 {
						delete(pending, text)
					} else {
						pending[text] = idx[:m]
					}
				}
			}
			body = parentBody
		}
		child = ci
		return left > 0
	})
	if werr != nil {
		return out, werr
	}
	if err != nil {
		return out, err
	}
	for _, idx := range pending {
		claim(child, idx) // the first commit: there from the start
	}
	return out, nil
}

// trustTrailers lets blame skip commits by their trailers; tests turn it off to check that
// the answer is the same.
var trustTrailers = true

// unchangedBy reports whether commit c's trailers vouch that it left section id of
// checkpoint.md as its first parent had it. Every commit ckpt makes lists in Ckpt-Sections
// the sections it changed against its first parent (gc's squash lists their union); a
// commit without the trailers (made with git) or a redaction's is read instead.
func unchangedBy(c repo.CommitInfo, id string) bool {
	if !trustTrailers {
		return false
	}
	var session, listed bool
	var list string
	for _, t := range c.Trailers {
		switch strings.ToLower(t.Key) {
		case "ckpt-session":
			session = true
		case "ckpt-sections":
			listed, list = true, t.Value
		case "ckpt-trigger":
			if t.Value == string(checkpoint.TriggerRedact) {
				return false
			}
		}
	}
	if !session || !listed || len(c.Parents) == 0 {
		return false
	}
	for _, s := range strings.Split(list, ",") {
		if strings.TrimSpace(s) == id {
			return false
		}
	}
	return true
}

// eachLine calls fn with each line of b, without its line ending.
func eachLine(b []byte, fn func(l []byte)) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		var l []byte
		if i < 0 {
			l, b = b, nil
		} else {
			l, b = b[:i], b[i+1:]
		}
		fn(bytes.TrimSuffix(l, []byte{'\r'}))
	}
}
