package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ckpt-dev/ckpt/history"
	"github.com/ckpt-dev/ckpt/knowledge"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/search"
)

// maxBytes is about what one result may carry: some 4,000 tokens, so that an agent that
// asks never floods its context. Larger answers come in pages.
const maxBytes = 16 << 10

// limitOf reads a page size: 0 is def; above most it is most (the page says what follows).
func limitOf(n, def, most int) (int, error) {
	switch {
	case n < 0:
		return 0, fmt.Errorf("limit %d: want a positive number (at most %d)", n, most)
	case n == 0:
		return def, nil
	}
	return min(n, most), nil
}

// offsetOf reads a cursor that is an offset.
func offsetOf(cursor string) (int, error) {
	if cursor == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(cursor)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("cursor %q: pass back the next_cursor of the previous result", clip(cursor, 40))
	}
	return n, nil
}

// diffCursor reads a ckpt_diff cursor: "I" (start at change I) or "I:OFF" (change I, from
// byte OFF of its diff).
func diffCursor(cursor string) (at, within int, err error) {
	a, b, two := strings.Cut(cursor, ":")
	if at, err = offsetOf(a); err != nil {
		return 0, 0, err
	}
	if two {
		if within, err = offsetOf(b); err != nil || a == "" || b == "" {
			return 0, 0, fmt.Errorf("cursor %q: pass back the next_cursor of the previous result", clip(cursor, 40))
		}
	}
	return at, within, nil
}

// page cuts list to the page that starts at off: at most limit items and maxBytes of JSON.
func page[T any](list []T, off, limit int, noun string) ([]T, Paging) {
	if off > len(list) {
		off = len(list)
	}
	rest := list[off:]
	n := min(len(rest), limit)
	n = fit(rest[:n], maxBytes)
	var p Paging
	if n < len(rest) {
		p.NextCursor = strconv.Itoa(off + n)
		p.Truncated = fmt.Sprintf("truncated, %d more %s: call again with cursor %q", len(rest)-n, noun, p.NextCursor)
	}
	out := rest[:n]
	if out == nil {
		out = []T{}
	}
	return out, p
}

// fit returns how many of items fit in budget bytes of JSON (at least one, when there is
// one: a single item is itself bounded by its fields' clips).
func fit[T any](items []T, budget int) int {
	used := 0
	for i, it := range items {
		b, _ := json.Marshal(it)
		used += len(b) + 1
		if used > budget && i > 0 {
			return i
		}
	}
	return len(items)
}

// cutText returns the longest prefix of s of at most n bytes that ends at a line end (or,
// for a first line longer than n, at a character boundary), and how many bytes are left.
func cutText(s string, n int) (string, int) {
	if len(s) <= n {
		return s, 0
	}
	cut := strings.LastIndexByte(s[:n], '\n') + 1
	if cut == 0 {
		cut = n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
	}
	return s[:cut], len(s) - cut
}

// clip shortens s to about n bytes, saying so.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d more bytes)", len(s)-cut)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// toolError makes an error one sentence an agent can act on: what was wrong, and what to
// pass instead.
func toolError(err error) error {
	msg := strings.ReplaceAll(repo.MaskURLs(err.Error()), "\n", "; ")
	var se *history.SectionError
	var sse *search.SectionError
	switch {
	case errors.Is(err, repo.ErrInvalidSession), errors.Is(err, repo.ErrNotFound):
		msg += "; ckpt_sessions lists the sessions"
	case errors.As(err, &se), errors.As(err, &sse):
	case errors.Is(err, repo.ErrBadRevision):
		msg += "; a revision is a commit hash, HEAD, HEAD~N, before-compact, rejected/N or a time such as 2026-04-01T22:00Z"
	case errors.Is(err, repo.ErrNoFile), errors.Is(err, repo.ErrInvalidName):
		msg += "; a session's files are checkpoint.md, notes.md and checkpoint-<topic>.md"
	case errors.Is(err, repo.ErrBusy):
		msg += "; a checkpoint is being written, try again in a moment"
	case errors.Is(err, knowledge.ErrNoEntry):
	}
	return errors.New(msg)
}
