// Package trailer reads and adds git trailers, the `Key: value` lines that end a commit
// message, by the rules of git interpret-trailers. It is the one parser of trailers: repo
// reads them from commits with it, checkpoint defines ckpt's keys on top of it, and the git
// hooks add theirs to a message being written with it.
package trailer

import "strings"

// Trailer is one `Key: value` line of a message's trailer block.
type Trailer struct{ Key, Value string }

// Parse returns the trailers of a commit message: the lines of its last paragraph when that
// paragraph is a trailer block (isBlock) and not the subject. Values are trimmed; an
// indented continuation line joins the value before it.
func Parse(msg string) []Trailer {
	lines, first, start, last := paragraphs(msg)
	if last < 0 || start <= first || !isBlock(lines[start:last+1]) {
		return nil
	}
	var out []Trailer
	for _, l := range lines[start : last+1] {
		switch {
		case isComment(l):
		case (l[0] == ' ' || l[0] == '\t') && len(out) > 0:
			out[len(out)-1].Value = strings.TrimSpace(out[len(out)-1].Value + " " + strings.TrimSpace(l))
		default:
			if k, v, ok := parseLine(l); ok {
				out = append(out, Trailer{k, v})
			}
		}
	}
	return out
}

// Value returns the value of the first trailer named key (any case), "" if none.
func Value(ts []Trailer, key string) string {
	for _, t := range ts {
		if strings.EqualFold(t.Key, key) {
			return t.Value
		}
	}
	return ""
}

// paragraphs splits the part of msg above any scissors line into lines (each with its
// newline) and finds the first and last content lines and the start of the last paragraph
// (content and comment lines back to the previous blank line); last is -1 when there is no
// content.
func paragraphs(msg string) (lines []string, first, start, last int) {
	if i := scissorsIndex(msg); i >= 0 {
		msg = msg[:i]
	}
	lines = strings.SplitAfter(msg, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	first, last = -1, -1
	for i, l := range lines {
		if isContent(l) {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	start = last
	for start > 0 && !isBlank(lines[start-1]) {
		start--
	}
	return lines, first, start, last
}

// scissors is the line below which git ignores everything (commit -v puts the diff there).
const scissors = "# ------------------------ >8 ------------------------"

// Add adds the trailer "key: value" to the content of a commit message file, as
// prepare-commit-msg sees it. The trailer goes after the last line that is not a comment:
// into the message's trailer block if it ends with one, else into a new block after a
// blank line; git's "# …" lines and everything below a scissors line stay where they are.
//
// value has the form <session>@<hash>: a message carries one trailer per session, so an
// older value for the same session is replaced, and the same value twice (amend) changes
// nothing. A message with no content yet (git commit with the editor still to open) is
// returned as it is: a trailer alone would turn an aborted, empty commit into a commit
// whose subject is the trailer. Comments are assumed to start with "#" (core.commentChar).
func Add(msg, key, value string) string {
	tail := ""
	if i := scissorsIndex(msg); i >= 0 {
		tail = msg[i:]
	}
	lines, first, start, last := paragraphs(msg)
	if last < 0 {
		return msg
	}
	trailer := key + ": " + value + "\n"
	// Session ids never contain '@', so the first one ends the session.
	session, _, hasSession := strings.Cut(value, "@")
	hasSession = hasSession && session != ""

	var out []string
	if start <= first || !isBlock(lines[start:last+1]) {
		// The last paragraph is the subject or prose: open a new trailer block.
		out = append(out, lines[:last+1]...)
		out = terminate(out)
		out = append(out, "\n", trailer)
		out = append(out, lines[last+1:]...)
		return strings.Join(out, "") + tail
	}

	out = append(out, lines[:start]...)
	placed := false
	for _, l := range lines[start : last+1] {
		if k, v, ok := parseLine(l); ok && strings.EqualFold(k, key) &&
			(v == value || hasSession && strings.HasPrefix(v, session+"@")) {
			// Replace in place the first trailer of this session, drop any other.
			if !placed {
				out = append(out, trailer)
				placed = true
			}
			continue
		}
		out = append(out, l)
	}
	if !placed {
		out = terminate(out)
		out = append(out, trailer)
	}
	out = append(out, lines[last+1:]...)
	return strings.Join(out, "") + tail
}

// scissorsIndex finds the start of git's scissors line, or -1.
func scissorsIndex(msg string) int {
	for off := 0; off < len(msg); {
		end := strings.IndexByte(msg[off:], '\n')
		line := msg[off:]
		if end >= 0 {
			line = msg[off : off+end]
		}
		if line == scissors {
			return off
		}
		if end < 0 {
			break
		}
		off += end + 1
	}
	return -1
}

// terminate gives the last line a newline, so that what follows starts a line of its own.
func terminate(lines []string) []string {
	if n := len(lines); n > 0 && !strings.HasSuffix(lines[n-1], "\n") {
		lines[n-1] += "\n"
	}
	return lines
}

func isComment(l string) bool { return strings.HasPrefix(l, "#") }
func isBlank(l string) bool   { return strings.TrimSpace(l) == "" }
func isContent(l string) bool { return !isComment(l) && !isBlank(l) }

// parseLine splits "Key: value" where Key is a git trailer token (letters, digits, '-').
// The colon must be followed by a space or end the line, so that a URL is not a trailer.
func parseLine(l string) (key, value string, ok bool) {
	l = strings.TrimRight(l, "\n")
	i := strings.IndexByte(l, ':')
	if i <= 0 || i+1 < len(l) && l[i+1] != ' ' && l[i+1] != '\t' {
		return "", "", false
	}
	for _, r := range l[:i] {
		if !(r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "", "", false
		}
	}
	return l[:i], strings.TrimSpace(l[i+1:]), true
}

// isBlock follows git interpret-trailers: a paragraph is a trailer block when all
// its lines are trailers (or their indented continuations), or when at least a quarter
// are and one of them is one git writes itself.
func isBlock(par []string) bool {
	trailers, others := 0, 0
	gitMade := false
	prevTrailer := false
	for _, l := range par {
		switch {
		case isComment(l):
			continue
		case (l[0] == ' ' || l[0] == '\t') && prevTrailer:
			continue
		}
		if k, _, ok := parseLine(l); ok {
			trailers++
			prevTrailer = true
			gitMade = gitMade || strings.EqualFold(k, "Signed-off-by")
			continue
		}
		prevTrailer = false
		if strings.HasPrefix(l, "(cherry picked from commit ") {
			trailers++
			gitMade = true
			continue
		}
		others++
	}
	if trailers == 0 {
		return false
	}
	return others == 0 || gitMade && trailers*3 >= others
}

// MessageEmpty reports whether a commit message has no content yet: only blank lines and
// comments, as git hands prepare-commit-msg the template before the editor opens.
func MessageEmpty(msg string) bool {
	if i := scissorsIndex(msg); i >= 0 {
		msg = msg[:i]
	}
	for _, l := range strings.SplitAfter(msg, "\n") {
		if isContent(l) {
			return false
		}
	}
	return true
}
