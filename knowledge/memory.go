package knowledge

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
	"github.com/ckpt-dev/ckpt/templates"
)

// maxMemory bounds the MEMORY.md ckpt reads: a file it did not write may be anything.
const maxMemory = 16 << 20

// MemoryPath is where MEMORY.md is read and written: the file config.toml's [memory] path
// names (absolute, or relative to the store), else the knowledge repository's. Either way the
// knowledge repository commits a copy of it as MEMORY.md, so its history is kept.
func MemoryPath(st *repo.Store, configured string) string {
	switch {
	case configured == "":
		return filepath.Join(st.KnowledgeDir(), MemoryFile)
	case filepath.IsAbs(configured):
		return filepath.Clean(configured)
	}
	return filepath.Join(st.Home, configured)
}

// ReadMemory reads the MEMORY.md at path: nil when there is none. Anything but a regular
// file (a directory, a FIFO, a device), and a file over 16 MiB, is refused.
func ReadMemory(path string) ([]byte, error) {
	b, err := repo.ReadRegularFile(path, maxMemory)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// writeMemory replaces the MEMORY.md at path with b, only while it holds old (nil: while
// there is none): a MEMORY.md edited meanwhile is never overwritten (repo.ErrWorkTreeChanged,
// and the caller starts again from what is there now).
func writeMemory(path string, old, b []byte, fsync bool) error {
	cur, err := ReadMemory(path)
	if err != nil {
		return err
	}
	if !bytes.Equal(cur, old) || (cur == nil) != (old == nil) {
		return fmt.Errorf("%s: %w", path, repo.ErrWorkTreeChanged)
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // a linked MEMORY.md stays linked
	}
	if err := os.MkdirAll(filepath.Dir(path), repo.DirPerm); err != nil {
		return err
	}
	return repo.WriteFileAtomic(path, b, repo.FilePerm, fsync)
}

// memorySpecs are the rules of both memory templates, so that MEMORY.md's sections are found
// whichever language its headings use.
func memorySpecs(home string) []templates.Spec {
	var out []templates.Spec
	for _, name := range []string{"memory", "memory-en"} {
		if t, err := templates.Load(home, name); err == nil {
			out = append(out, t.Spec)
		}
	}
	return out
}

// memoryRole is the MEMORY.md section an accepted entry goes to (seed 000): a decision to
// Architecture Decisions, a rule to Rules.
func memoryRole(kind string) templates.Role {
	if kind == KindRule {
		return templates.RoleRules
	}
	return templates.RoleDecisions
}

// memoryLine is how an accepted entry reads in MEMORY.md: its text on one line, then its id
// and where it came from.
func memoryLine(e *Entry) string {
	var from []string
	for _, p := range e.Provenance {
		from = append(from, fmt.Sprintf("%s @ %s, %s", p.Session, p.Commit, p.Time))
	}
	prov := e.ID
	if len(from) > 0 {
		prov += "; from " + strings.Join(from, "; ")
	}
	return "- " + NormText(e.Text) + " (" + prov + ")"
}

// AddAccepted writes accepted entries into MEMORY.md (src; nil when there is none yet, then
// tmpl is its start): each in its section, once. An entry is there already when its section
// names its id, or holds an item with the same Canonical text (RuleKey for a rule). It
// returns the new MEMORY.md and the ids it added; an entry whose section MEMORY.md lacks is
// left out and named in missing.
func AddAccepted(home string, src, tmpl []byte, entries []*Entry) (out []byte, added, missing []string) {
	if src == nil {
		src = tmpl
	}
	specs := memorySpecs(home)
	doc := sections.Parse(src, sections.Options{Level: 2})
	eol := sections.EOL(src)
	changed := false
	for _, e := range entries {
		sec := memorySection(doc, specs, memoryRole(e.Kind))
		if sec == nil {
			missing = append(missing, e.ID)
			continue
		}
		if memoryHolds(sec.Body, e) {
			continue
		}
		if len(sec.Body) == 0 && len(sec.Heading) > 0 && sec.Heading[len(sec.Heading)-1] != '\n' {
			sec.Heading = append(append([]byte(nil), sec.Heading...), eol...)
		}
		sec.Body = appendItem(sec.Body, memoryLine(e), eol, sec == &doc.Sections[len(doc.Sections)-1])
		added = append(added, e.ID)
		changed = true
	}
	if !changed {
		return src, nil, missing
	}
	return doc.Render(), added, missing
}

func memorySection(doc *sections.Document, specs []templates.Spec, role templates.Role) *sections.Section {
	for _, sp := range specs {
		if id := sp.Section(role); id != "" {
			if s := doc.Section(sections.ID(id)); s != nil {
				return s
			}
		}
	}
	return nil
}

// memoryHolds reports whether a MEMORY.md section already holds e.
func memoryHolds(body []byte, e *Entry) bool {
	if bytes.Contains(body, []byte(e.ID)) {
		return true
	}
	key := func(s string) string { return Canonical(s) }
	if e.Kind == KindRule {
		key = RuleKey
	}
	want := key(e.Text)
	for _, it := range memoryItems(body) {
		if key(it) == want {
			return true
		}
	}
	return false
}

// memoryItems splits a section body into its top-level items, continuation lines joined.
func memoryItems(body []byte) []string {
	var out []string
	for _, l := range strings.Split(strings.ReplaceAll(string(body), "\r\n", "\n"), "\n") {
		switch {
		case strings.TrimSpace(l) == "":
		case (l[0] == ' ' || l[0] == '\t') && len(out) > 0:
			out[len(out)-1] += "\n" + l
		default:
			out = append(out, l)
		}
	}
	return out
}

// appendItem adds line after the last non-blank line of body, keeping the blank lines that
// separate the section from the next one.
func appendItem(body []byte, line, eol string, last bool) []byte {
	end := len(body)
	for end > 0 && (body[end-1] == '\n' || body[end-1] == '\r' || body[end-1] == ' ' || body[end-1] == '\t') {
		end--
	}
	tail := body[end:]
	if i := bytes.IndexByte(tail, '\n'); i >= 0 {
		tail = tail[i+1:] // the rest of the last line is its line ending
	} else {
		tail = nil
	}
	var b bytes.Buffer
	b.Write(body[:end])
	if end > 0 {
		b.WriteString(eol)
	}
	b.WriteString(line + eol)
	if len(tail) == 0 && !last {
		tail = []byte(eol)
	}
	b.Write(tail)
	return b.Bytes()
}
