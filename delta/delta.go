// Package delta recovers what happened after a checkpoint was last written (six's 📡
// section): it reads seed 002's L3 sources, agent transcripts (from the offset where the
// last sync stopped, remembered per session) and daily logs, and merges their entries into
// the delta section, one line per entry:
//
//	**[2026-04-01T21:50Z]** assistant: Ran `workspace_watchdog.py verify`. [tool: Bash]
//
// Transcript entries read "<role>: <text>"; a tool call adds "[tool: <name>]" in the place
// where the call was made. Claude Code's noise is cut down: a slash command reads as typed
// ("user: /compact"), its output is left out, the summary after a compaction reads
// "summary: …", and a subagent's run is one entry, "subagent <id>: <task> (N messages)".
// Daily log entries carry the log line's text only.
package delta

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/sections"
)

// maxRunes is how long the text of one delta entry may be, in characters (seed 002:
// "content cut to 500 characters").
const maxRunes = 500

// sectionLimit is the size budget of the whole 📡 section in bytes (seed 002: "2KB").
const sectionLimit = 2048

// maxTranscriptRead bounds how much of a transcript one sync reads past its offset: 64 MiB
// of complete lines. A transcript that grew more is read on by the next syncs, each from
// where the last one stopped, so a hook never reads without end.
const maxTranscriptRead = 64 << 20

// transcriptReadTime bounds how long one sync reads a transcript: past it the read stops
// after the last complete line, as at the size bound, and the next sync reads on.
const transcriptReadTime = 10 * time.Second

// errNotRegular refuses a transcript that is not a regular file: a device such as
// /dev/zero never ends, a FIFO blocks until someone writes, a directory holds no lines.
var errNotRegular = errors.New("not a regular file")

// entry is one recovered event: when it happened and what was said or done.
type entry struct {
	Time time.Time
	Text string
}

// transcriptRead is what one readTranscript call found.
type transcriptRead struct {
	Entries  []entry
	Next     int64    // the offset to pass to the next readTranscript of the same file
	Warnings []string // lines that were skipped, as "path:line: problem"
	// Restarted is true when the file no longer continued at the given offset (it was
	// truncated, rotated or replaced), so it was read from the start.
	Restarted bool
	// Truncated is true when the read stopped at its size or time bound with more to read.
	Truncated bool
}

// readTranscript reads the JSONL transcript at path from offset on and returns the entries
// whose time is strictly after since (all of them when since is zero).
//
// offset is 0 or the Next of an earlier read: only the bytes from offset on are read, so a
// sync of a large transcript costs what the transcript grew by. A last line without a
// newline is being written: it is left for the next read, and Next stops before it. When
// the file is shorter than offset, or the byte before offset is not the end of a line, the
// file is not the one that was read before: it is read from the start and Restarted is set.
//
// Each line is one of:
//   - a Claude Code record, {"type":"user"|"assistant","timestamp":…,"message":{"role",
//     "content"}}: the content is a string or a list of blocks; text blocks are kept,
//     a tool_use block becomes "[tool: <name>]", thinking and tool_result blocks are
//     dropped (a user record holding only tool results gives no entry), and records marked
//     isMeta (harness notices, not the user's words) are skipped. A slash command's markup
//     reads as the command, its output is skipped, a compaction summary (isCompactSummary)
//     is labelled "summary", and the records of a subagent (isSidechain) become one entry
//     per run (parseTranscriptLine). A "system" record with subtype local_command is a
//     command too; records of other types ("summary", "system", …) are skipped.
//   - a generic record, {"ts"|"timestamp":…,"role":…,"content":…}.
//
// Times are RFC 3339 strings (fractions allowed), 2006-01-02T15:04Z, or Unix seconds (or
// milliseconds) as numbers. Any other line gives a warning and is skipped, never an error:
// "path:LINE: …" when reading from the start, "path: byte OFFSET: …" when resuming, since
// line numbers are unknown there without reading the whole file.
//
// Only a regular file is read (anything else is errNotRegular), and at most
// maxTranscriptRead bytes past offset, for at most transcriptReadTime: Next then stops
// after the last complete line read, Truncated is set and a warning says so. A single line
// longer than the whole bound is skipped with a warning.
func readTranscript(path string, offset int64, since time.Time) (transcriptRead, error) {
	return readTranscriptBounded(path, offset, since, maxTranscriptRead, time.Now().Add(transcriptReadTime))
}

// openRegular opens path for reading only if it is a regular file. The open itself does not
// block on a FIFO (O_NONBLOCK), and the check is made on the file opened, not on the name.
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, noTranscript(path)
	}
	if err != nil {
		return nil, fmt.Errorf("read transcript %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s: %w (%s)", path, errNotRegular, fileKind(fi.Mode()))
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// noTranscript is the error for a transcript that does not exist; it is fs.ErrNotExist.
type noTranscript string

func (e noTranscript) Error() string { return string(e) + ": no such transcript" }
func (e noTranscript) Unwrap() error { return fs.ErrNotExist }

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return m.Type().String()
}

// readTranscriptBounded is readTranscript with its bounds: at most limit bytes past offset, until
// deadline.
func readTranscriptBounded(path string, offset int64, since time.Time, limit int64, deadline time.Time) (transcriptRead, error) {
	var res transcriptRead
	if offset < 0 {
		return res, fmt.Errorf("%s: negative transcript offset %d", path, offset)
	}
	f, err := openRegular(path)
	if err != nil {
		return res, err
	}
	defer f.Close()
	var side subagentRuns
	moved, err := transcriptMoved(f, offset)
	if err != nil {
		return res, fmt.Errorf("read transcript %s: %w", path, err)
	}
	if moved {
		offset, res.Restarted = 0, true
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return res, fmt.Errorf("read transcript %s: %w", path, err)
	}
	res.Next = offset

	lr := &io.LimitedReader{R: f, N: limit}
	br := bufio.NewReaderSize(lr, 64<<10)
	var long []byte // a line longer than the reader's buffer, gathered piece by piece
	lineNo := 0
	for {
		if time.Now().After(deadline) {
			res.Truncated = true
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: read stopped at byte %d after %s; the next sync reads on", path, res.Next, transcriptReadTime))
			break
		}
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, chunk...)
			continue
		}
		line := chunk
		if len(long) > 0 {
			long = append(long, chunk...)
			line = long
		}
		if errors.Is(err, io.EOF) {
			// Nothing left, or a line still being written (left for the next read), or the
			// size bound cut the read.
			if lr.N == 0 && len(line) > 0 {
				res.Truncated = true
				if res.Next == offset {
					// One line longer than the whole bound: skip it, or nothing is ever read past it.
					end, found, serr := skipLine(f, offset+limit, deadline)
					if serr != nil {
						return res, fmt.Errorf("read transcript %s: %w", path, serr)
					}
					if found {
						res.Warnings = append(res.Warnings, fmt.Sprintf("%s: byte %d: skipped a line longer than %d MiB", path, offset, limit>>20))
						res.Next = end
						break
					}
				}
				res.Warnings = append(res.Warnings, fmt.Sprintf("%s: read %d MiB past byte %d; the next sync reads on", path, limit>>20, offset))
			}
			break
		}
		if err != nil {
			return res, fmt.Errorf("read transcript %s: %w", path, err)
		}
		lineNo++
		start := res.Next
		res.Next += int64(len(line))
		rec, ok, bad := parseTranscriptLine(line)
		long = long[:0]
		if bad {
			where := fmt.Sprintf("%s:%d", path, lineNo)
			if offset > 0 {
				where = fmt.Sprintf("%s: byte %d", path, start)
			}
			res.Warnings = append(res.Warnings, where+": skipped malformed line")
			continue
		}
		if ok && (since.IsZero() || rec.Time.After(since)) {
			if rec.sidechain {
				side.add(rec, len(res.Entries))
				continue
			}
			res.Entries = append(res.Entries, rec.entry)
		}
	}
	res.Entries = side.merge(res.Entries)
	return res, nil
}

// subagentRuns gathers the sidechain lines of one read (a subagent's own conversation, which
// Claude Code writes into the transcript of the conversation that started it) into one
// entry per subagent run: "subagent <agent id>: <its first words> (N messages)".
type subagentRuns struct {
	runs  []*subagentRun
	byKey map[string]*subagentRun
	last  *subagentRun // the run a line that names none continues
}

type subagentRun struct {
	at    int // the index in the main entries before which the run's entry goes
	time  time.Time
	agent string
	first string // the first words of the run, normally the task the subagent was given
	n     int
}

// add counts one sidechain line, at entries index at.
func (s *subagentRuns) add(rec record, at int) {
	key := rec.agent
	if key == "" && rec.starts {
		key = "\x00" + strconv.Itoa(len(s.runs)) // a run without an agent id starts here
	}
	var run *subagentRun
	switch {
	case key != "":
		run = s.byKey[key]
	default:
		run = s.last
	}
	if run == nil {
		run = &subagentRun{at: at, time: rec.Time, agent: rec.agent}
		if s.byKey == nil {
			s.byKey = map[string]*subagentRun{}
		}
		if key != "" {
			s.byKey[key] = run
		}
		s.runs = append(s.runs, run)
	}
	s.last = run
	run.n++
	if run.first == "" {
		run.first = rec.text
	}
}

// merge puts one entry per run into entries, where the run started.
func (s *subagentRuns) merge(entries []entry) []entry {
	if len(s.runs) == 0 {
		return entries
	}
	out := make([]entry, 0, len(entries)+len(s.runs))
	next := 0
	for i := 0; i <= len(entries); i++ {
		for next < len(s.runs) && s.runs[next].at == i {
			out = append(out, s.runs[next].entry())
			next++
		}
		if i < len(entries) {
			out = append(out, entries[i])
		}
	}
	return out
}

func (r *subagentRun) entry() entry {
	name := "subagent"
	if r.agent != "" {
		name += " " + r.agent
	}
	unit := "messages"
	if r.n == 1 {
		unit = "message"
	}
	first := []rune(r.first)
	if len(first) > 200 {
		first = append(first[:199], '…')
	}
	text := fmt.Sprintf("%s: (%d %s)", name, r.n, unit)
	if len(first) > 0 {
		text = fmt.Sprintf("%s: %s (%d %s)", name, string(first), r.n, unit)
	}
	return entry{Time: r.time, Text: clipText(text)}
}

// skipLine reads f from pos, keeping nothing, to the end of the line under way: end is the
// offset after its newline. found is false at the end of the file (the line is still being
// written) or at the deadline.
func skipLine(f *os.File, pos int64, deadline time.Time) (end int64, found bool, err error) {
	buf := make([]byte, 64<<10)
	for !time.Now().After(deadline) {
		n, err := f.ReadAt(buf, pos)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return pos + int64(i) + 1, true, nil
		}
		pos += int64(n)
		if errors.Is(err, io.EOF) {
			return pos, false, nil
		}
		if err != nil {
			return pos, false, err
		}
	}
	return pos, false, nil
}

// transcriptMoved reports whether f no longer continues at offset: it is shorter, or the
// byte before offset does not end a line (a resumed read always starts right after one).
func transcriptMoved(f *os.File, offset int64) (bool, error) {
	if offset == 0 {
		return false, nil
	}
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if fi.Size() < offset {
		return true, nil
	}
	var b [1]byte
	if _, err := f.ReadAt(b[:], offset-1); err != nil {
		return false, err
	}
	return b[0] != '\n', nil
}

// transcriptLine holds the fields of both transcript shapes that the delta needs.
type transcriptLine struct {
	Type      string          `json:"type"`
	Subtype   string          `json:"subtype"`
	Timestamp json.RawMessage `json:"timestamp"`
	TS        json.RawMessage `json:"ts"`
	IsMeta    bool            `json:"isMeta"`
	// IsSidechain marks a subagent's own conversation; AgentID names the run (newer Claude
	// Code); a run's first line has a null parentUuid.
	IsSidechain bool            `json:"isSidechain"`
	AgentID     string          `json:"agentId"`
	ParentUUID  json.RawMessage `json:"parentUuid"`
	// IsCompactSummary marks the summary Claude Code writes, as a user line, after a
	// compaction.
	IsCompactSummary bool `json:"isCompactSummary"`
	Message          *struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// record is one transcript line that carries an entry, with what tells a subagent's lines
// apart.
type record struct {
	entry
	text      string // the text without its "role: " label
	sidechain bool   // a subagent's line: summarised per run, never an entry of its own
	agent     string // the subagent run's id, when the line names it
	starts    bool   // the first line of a subagent run (its parentUuid is null)
}

// contentBlock is one block of a message's content list. Fields of other block types
// (tool inputs and results, thinking) are not decoded.
type contentBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
	Name string `json:"name"`
}

// parseTranscriptLine turns one line into a record. ok is false when the line carries no
// entry; bad is true when it is not a transcript record at all.
//
// Claude Code's noise is told apart: a command the user typed, which Claude Code wraps in
// <command-name> markup on a user line (a system line with subtype local_command in newer
// versions), reads as the command ("user: /compact"); what a command printed
// (<local-command-stdout>) and its caveat are left out; the summary written after a
// compaction is labelled "summary", not "user"; a subagent's lines (isSidechain) are
// marked so that the read summarises each run in one entry.
func parseTranscriptLine(line []byte) (rec record, ok, bad bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return rec, false, false
	}
	var l transcriptLine
	if err := json.Unmarshal(line, &l); err != nil {
		return rec, false, true
	}
	isTurn := l.Type == "user" || l.Type == "assistant"
	var role string
	var stamp, content json.RawMessage
	switch {
	case isTurn && l.Message != nil:
		role, stamp, content = l.Type, l.Timestamp, l.Message.Content
	case l.Type == "system" && l.Subtype == "local_command" && l.Content != nil:
		role, stamp, content = "user", l.Timestamp, l.Content
	case l.Role != "" && l.Content != nil:
		role, stamp, content = l.Role, l.TS, l.Content
		if stamp == nil {
			stamp = l.Timestamp
		}
	case l.Type != "" && !isTurn:
		return rec, false, false // a summary or other bookkeeping record
	default:
		return rec, false, true
	}
	t, tok := parseTranscriptTime(stamp)
	text, cok := contentText(content)
	if !tok || !cok {
		return rec, false, true
	}
	if l.IsMeta || (text == "" && !l.IsSidechain) {
		return rec, false, false // a subagent's line without text still counts in its run
	}
	if cmd, isCmd := commandText(text); isCmd {
		if cmd == "" {
			return rec, false, false // a command's output or caveat
		}
		text = cmd
	}
	if l.IsCompactSummary {
		role = "summary"
	}
	rec = record{
		entry:     entry{Time: t, Text: clipText(strings.TrimSpace(role) + ": " + text)},
		text:      text,
		sidechain: l.IsSidechain,
		agent:     strings.TrimSpace(l.AgentID),
		starts:    string(bytes.TrimSpace(l.ParentUUID)) == "null",
	}
	return rec, true, false
}

// commandMarkup matches the markup Claude Code wraps around a slash command the user typed
// and around what it printed: <command-name>/compact</command-name>, <command-message>,
// <command-args>, <local-command-stdout>, <local-command-stderr>, <local-command-caveat>.
var commandMarkup = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?s)^\s*(?:<(command-name|command-message|command-args|local-command-stdout|local-command-stderr|local-command-caveat)>(.*?)</(?:command-name|command-message|command-args|local-command-stdout|local-command-stderr|local-command-caveat)>\s*)+$`)
})

var commandTag = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?s)<(command-name|command-args)>(.*?)</(?:command-name|command-args)>`)
})

// commandText reads a text made only of command markup: the command as typed ("/compact",
// "/model opus"), or "" for a command's output or caveat. isCmd is false for any other text,
// a message that merely quotes the tags included.
func commandText(text string) (cmd string, isCmd bool) {
	if !strings.HasPrefix(text, "<") || !commandMarkup().MatchString(text) {
		return "", false
	}
	var name, args string
	for _, m := range commandTag().FindAllStringSubmatch(text, -1) {
		switch m[1] {
		case "command-name":
			name = strings.TrimSpace(m[2])
		case "command-args":
			args = strings.TrimSpace(m[2])
		}
	}
	if name == "" {
		return "", true
	}
	if !strings.HasPrefix(name, "/") {
		name = "/" + name
	}
	if args != "" {
		name += " " + args
	}
	return name, true
}

// contentText flattens a message content: a string, or a list of blocks. ok is false for
// any other JSON value.
func contentText(raw json.RawMessage) (text string, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", false
		}
		return strings.TrimSpace(s), true
	case '[':
		var blocks []contentBlock
		if err := json.Unmarshal(raw, &blocks); err != nil {
			return "", false
		}
		var parts []string
		for _, b := range blocks {
			switch b.Type {
			case "text":
				if t := strings.TrimSpace(b.Text); t != "" {
					parts = append(parts, t)
				}
			case "tool_use":
				parts = append(parts, "[tool: "+strings.TrimSpace(b.Name)+"]")
			}
		}
		return strings.Join(parts, " "), true
	}
	return "", false
}

// parseTranscriptTime reads a record's time: an RFC 3339 string, ckpt's own minute format,
// or a Unix time in seconds (milliseconds when it is too large to be seconds).
func parseTranscriptTime(raw json.RawMessage) (time.Time, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return time.Time{}, false
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return time.Time{}, false
		}
		for _, layout := range []string{time.RFC3339Nano, checkpoint.TimeFormat} {
			if t, err := time.Parse(layout, s); err == nil {
				return t.UTC(), true
			}
		}
		return time.Time{}, false
	}
	n, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || n <= 0 || n > 1e15 {
		return time.Time{}, false
	}
	if n > 1e11 { // 1e11 seconds is the year 5138: this is milliseconds
		return time.UnixMilli(int64(n)).UTC(), true
	}
	sec := int64(n)
	return time.Unix(sec, int64((n-float64(sec))*1e9)).UTC(), true
}

var (
	dailyLogLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^- (\d{1,2}):(\d{2})\s+(\S.*)$`) })
	dailyLogDate = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^#\s+(\d{4}-\d{2}-\d{2})(?:\s|$)`) })
)

// readDailyLog reads a daily log (memory/YYYY-MM-DD.md) whose entries are lines
// "- HH:MM text", and returns the entries strictly after since. The date is the file's
// name, else its "# YYYY-MM-DD" heading; the times are taken as UTC, the zone ckpt writes
// every time in. Other lines are not entries and are ignored; an entry line with an
// impossible time gives a warning.
func readDailyLog(path string, since time.Time) ([]entry, []string, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read daily log %s: %w", path, err)
	}
	lines := strings.Split(string(src), "\n")
	day, ok := dailyLogDay(path, lines)
	if !ok {
		return nil, nil, fmt.Errorf("%s: no date: name the log YYYY-MM-DD.md or start it with a \"# YYYY-MM-DD\" heading", path)
	}
	var entries []entry
	var warnings []string
	for i, l := range lines {
		m := dailyLogLine().FindStringSubmatch(strings.TrimRight(l, " \t\r"))
		if m == nil {
			continue
		}
		h, _ := strconv.Atoi(m[1])
		mm, _ := strconv.Atoi(m[2])
		if h > 23 || mm > 59 {
			warnings = append(warnings, fmt.Sprintf("%s:%d: bad time %s:%s", path, i+1, m[1], m[2]))
			continue
		}
		t := day.Add(time.Duration(h)*time.Hour + time.Duration(mm)*time.Minute)
		if since.IsZero() || t.After(since) {
			entries = append(entries, entry{Time: t, Text: clipText(m[3])})
		}
	}
	return entries, warnings, nil
}

// dailyLogDay is the day a daily log covers, at 00:00 UTC.
func dailyLogDay(path string, lines []string) (time.Time, bool) {
	base := filepath.Base(path)
	if t, err := time.Parse("2006-01-02", strings.TrimSuffix(base, filepath.Ext(base))); err == nil {
		return t, true
	}
	for _, l := range lines {
		if m := dailyLogDate().FindStringSubmatch(strings.TrimRight(l, "\r")); m != nil {
			if t, err := time.Parse("2006-01-02", m[1]); err == nil {
				return t, true
			}
		}
	}
	return time.Time{}, false
}

// formatEntry renders e as one line of the 📡 section: "**[2026-04-01T21:50Z]** text",
// the text on one line (white space collapsed) and cut to MaxRunes characters, the
// last of them "…" when it was cut.
func formatEntry(e entry) string {
	stamp := "**[" + checkpoint.FormatTime(e.Time) + "]**"
	if t := clipText(e.Text); t != "" {
		return stamp + " " + t
	}
	return stamp
}

// clipText puts s on one line (runs of white space and control characters become one
// space, invalid UTF-8 becomes U+FFFD) and cuts it to MaxRunes characters, the last
// one "…". It stops reading s once it has enough, so a huge message costs little.
func clipText(s string) string {
	var b strings.Builder
	n, cut := 0, 0 // runes written; byte length after MaxRunes-1 runes
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			space = n > 0
			continue
		}
		if space {
			if n == maxRunes-1 {
				cut = b.Len()
			}
			b.WriteByte(' ')
			n++
			space = false
		}
		if n == maxRunes-1 {
			cut = b.Len()
		}
		b.WriteRune(r)
		n++
		if n > maxRunes {
			return b.String()[:cut] + "…"
		}
	}
	return b.String()
}

// deltaLine is an entry line of the 📡 section, without its line ending.
type deltaLine struct {
	t    time.Time // to the minute, as written
	text string
}

var deltaEntryPrefix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\*\*\[([0-9T:Z-]+)\]\*\*`) })

// updateSection merges entries into the 📡 section sec and returns the new section.
// Entry lines already there are kept and new ones added unless the same line is there;
// all are ordered by time (ties keep their order, old before new), then the oldest are
// dropped until the section is at most limit bytes (limit <= 0: no limit).
// The `_delta_since_last: from → to_` line is set, or added under the heading. Other
// non-blank lines are kept, in their order, before the entries; the blank lines (and a
// closing `---`) that end the section stay at its end, and every line ends as the
// section's lines do (CRLF stays CRLF).
func updateSection(sec sections.Section, entries []entry, from, to time.Time, limit int) sections.Section {
	eol := sectionEOL(sec)
	lines, tail := splitDeltaBody(sec.Body)

	var others []string
	var kept []deltaLine
	seen := make(map[string]bool)
	for _, l := range lines {
		if strings.TrimSpace(l) == "" || isDeltaMeta(l) {
			continue
		}
		if t, ok := deltaLineTime(l); ok {
			kept = append(kept, deltaLine{t: t, text: l})
			seen[strings.TrimRight(l, " \t")] = true
			continue
		}
		others = append(others, l)
	}
	for _, e := range entries {
		l := formatEntry(e)
		if seen[l] {
			continue
		}
		seen[l] = true
		kept = append(kept, deltaLine{t: e.Time.UTC().Truncate(time.Minute), text: l})
	}
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].t.Before(kept[j].t) })

	// A section that ended without a line ending (the end of a file) still does.
	last := sec.Body
	if len(last) == 0 {
		last = sec.Directive
	}
	if len(last) == 0 {
		last = sec.Heading
	}
	noFinalEOL := len(tail) == 0 && len(last) > 0 && last[len(last)-1] != '\n'

	out := sections.Section{
		ID:        sec.ID,
		Line:      sec.Line,
		Heading:   withEOL(sec.Heading, eol),
		Directive: withEOL(sec.Directive, eol),
	}
	meta := "_delta_since_last: " + checkpoint.FormatTime(from) + " → " + checkpoint.FormatTime(to) + "_"
	render := func(entries []deltaLine) []byte {
		var b bytes.Buffer
		b.WriteString(meta + eol)
		if len(others) > 0 || len(entries) > 0 {
			b.WriteString(eol)
		}
		for _, l := range others {
			b.WriteString(l + eol)
		}
		if len(others) > 0 && len(entries) > 0 {
			b.WriteString(eol)
		}
		for _, l := range entries {
			b.WriteString(l.text + eol)
		}
		if noFinalEOL {
			b.Truncate(b.Len() - len(eol))
		}
		b.Write(tail)
		return b.Bytes()
	}

	drop := 0
	if limit > 0 {
		// Entries add one blank line (after the meta line or after the other lines) and
		// one line each to the section without them.
		size := len(out.Heading) + len(out.Directive) + len(render(nil))
		if len(kept) > 0 {
			size += len(eol)
		}
		for _, l := range kept {
			size += len(l.text) + len(eol)
		}
		for drop < len(kept) && size > limit {
			size -= len(kept[drop].text) + len(eol)
			drop++
		}
	}
	out.Body = render(kept[drop:])
	return out
}

// sectionEOL is the line ending of the section's first line: "\r\n" or "\n". A section
// made of one line cut after its "\r" counts as CRLF, as that is how it will end.
func sectionEOL(sec sections.Section) string {
	var last []byte
	for _, b := range [][]byte{sec.Heading, sec.Directive, sec.Body} {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			if i > 0 && b[i-1] == '\r' {
				return "\r\n"
			}
			return "\n"
		}
		if len(b) > 0 {
			last = b
		}
	}
	if len(last) > 0 && last[len(last)-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

// withEOL returns a copy of line that ends with a line ending (nil stays nil). It copies
// so that the caller's document is never written through a shared array.
func withEOL(line []byte, eol string) []byte {
	if len(line) == 0 {
		return nil
	}
	out := append([]byte(nil), line...)
	switch {
	case out[len(out)-1] == '\n':
	case eol == "\r\n" && out[len(out)-1] == '\r':
		out = append(out, '\n')
	default:
		out = append(out, eol...)
	}
	return out
}

// splitDeltaBody splits a section body into its lines (without line endings) and the tail
// that ends it: the trailing blank lines and thematic breaks, kept byte for byte.
func splitDeltaBody(body []byte) (lines []string, tail []byte) {
	var raw [][]byte
	for rest := body; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			raw = append(raw, rest)
			break
		}
		raw = append(raw, rest[:i+1])
		rest = rest[i+1:]
	}
	end, size := len(raw), len(body)
	for end > 0 {
		l := strings.TrimRight(string(raw[end-1]), "\r\n")
		if strings.TrimSpace(l) != "" && !isThematicBreak(l) {
			break
		}
		end--
		size -= len(raw[end])
	}
	for _, l := range raw[:end] {
		// Stray carriage returns go with the line ending, which is the section's own.
		lines = append(lines, strings.TrimRight(string(l), "\r\n"))
	}
	return lines, body[size:]
}

// isThematicBreak reports whether l is a Markdown thematic break: three or more of the same
// "-", "*" or "_", with nothing else but spaces and tabs, indented at most three spaces.
func isThematicBreak(l string) bool {
	if len(l)-len(strings.TrimLeft(l, " ")) > 3 {
		return false
	}
	l = strings.TrimSpace(l)
	if l == "" || (l[0] != '-' && l[0] != '*' && l[0] != '_') {
		return false
	}
	n := 0
	for i := 0; i < len(l); i++ {
		switch l[i] {
		case l[0]:
			n++
		case ' ', '\t':
		default:
			return false
		}
	}
	return n >= 3
}

func isDeltaMeta(l string) bool {
	return strings.HasPrefix(l, "_delta_since_last:") && sections.IsMetaLine(strings.TrimRight(l, " \t"))
}

// deltaLineTime reads the time of an entry line "**[2026-04-01T21:50Z]** …".
func deltaLineTime(l string) (time.Time, bool) {
	m := deltaEntryPrefix().FindStringSubmatch(l)
	if m == nil {
		return time.Time{}, false
	}
	t, err := time.Parse(checkpoint.TimeFormat, m[1])
	return t, err == nil
}
