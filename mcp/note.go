package mcp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/repo"
)

type NoteIn struct {
	Session string `json:"session" jsonschema:"the session id (ckpt_sessions lists them)"`
	Text    string `json:"text" jsonschema:"the entry: one line, or a few (continuation lines are indented); at most 4000 bytes"`
	Tag     string `json:"tag,omitempty" jsonschema:"how the next full sync routes it: decision, task, next, done, blocker, note, rule, fact, literal, intent, …; end with ! (rule!, decision!) to keep it in MEMORY.md too"`
}

type NoteOut struct {
	Session string `json:"session"`
	File    string `json:"file" jsonschema:"the notes file the entry was appended to"`
	Entry   string `json:"entry" jsonschema:"the lines appended"`
}

const maxNote = 4000

var noteTag = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z]{1,20}!?$`) })

func (s *Server) note(_ context.Context, in NoteIn) (NoteOut, error) {
	out := NoteOut{Session: in.Session}
	id, err := repo.ParseSessionID(in.Session)
	if err != nil {
		return out, err
	}
	entry, err := noteEntry(in.Tag, in.Text)
	if err != nil {
		return out, err
	}
	r, err := s.svc.Store.Open(id)
	if err != nil {
		return out, err
	}
	path := r.WorkPath(checkpoint.NotesFile)
	out.File, out.Entry = path, strings.TrimSuffix(entry, "\n")
	return out, appendEntry(path, entry)
}

// noteEntry turns a tag and text into one notes.md entry: a bullet, its continuation lines
// indented, control characters and blank lines dropped.
func noteEntry(tag, text string) (string, error) {
	if tag != "" && !noteTag().MatchString(tag) {
		return "", fmt.Errorf("tag %q: want lower-case letters, optionally ending in ! (decision, task, note, rule!)", clip(tag, 40))
	}
	if len(text) > maxNote {
		return "", fmt.Errorf("text is %d bytes: at most %d make one entry", len(text), maxNote)
	}
	clean := strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || r >= ' ' && r != 0x7f && (r < 0x80 || r > 0x9f) {
			return r
		}
		if r == '\r' {
			return -1
		}
		return ' '
	}, text)
	var lines []string
	for _, l := range strings.Split(clean, "\n") {
		if l = strings.TrimRight(l, " \t"); strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return "", errors.New("text is empty: give the note to append")
	}
	var b strings.Builder
	b.WriteString("- ")
	if tag != "" {
		b.WriteString("[" + tag + "] ")
	}
	b.WriteString(strings.TrimSpace(lines[0]) + "\n")
	for _, l := range lines[1:] {
		b.WriteString("  " + strings.TrimLeft(l, " \t") + "\n")
	}
	return b.String(), nil
}

// appendEntry appends entry to the notes file with one O_APPEND write, as an agent does:
// no lock, no commit; a sync running meanwhile keeps it for the next one. A notes.md that
// is not a regular file (a symbolic link pointing elsewhere) is refused.
func appendEntry(path, entry string) error {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file; refusing to write through it", path)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, fi.Size()-1); err == nil && last[0] != '\n' {
			entry = "\n" + entry // the last line lacked its newline: do not glue onto it
		}
	}
	if _, err := f.WriteString(entry); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}
