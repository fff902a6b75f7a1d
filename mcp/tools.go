package mcp

import (
	"context"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ckpt-dev/ckpt/history"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/search"
)

// Provenance says where a result comes from.
type Provenance struct {
	Session string `json:"session" jsonschema:"the session id"`
	Commit  string `json:"commit" jsonschema:"the commit (a full hash)"`
	Time    string `json:"time" jsonschema:"the commit's time, RFC 3339"`
	Section string `json:"section,omitempty" jsonschema:"the section id, when the result is about one section"`
}

func provenance(p history.Provenance) Provenance {
	return Provenance{Session: p.Session, Commit: p.Commit, Time: timeString(p.Time), Section: p.Section}
}

func timeString(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// Paging is what every bounded result ends with.
type Paging struct {
	NextCursor string `json:"next_cursor,omitempty" jsonschema:"pass it back as cursor to get what follows; absent at the end"`
	Truncated  string `json:"truncated,omitempty" jsonschema:"says what was left out when the result was cut to size"`
}

func readOnly(title string) *sdk.ToolAnnotations {
	f := false
	return &sdk.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &f}
}

func (s *Server) addTools() {
	tool(s, &sdk.Tool{Name: "ckpt_sessions", Annotations: readOnly("List sessions"),
		Description: "Lists the checkpoint sessions of this project: id, template, newest commit (time, trigger, subject), work tree, the git work tree it is bound to, pending notes and circuit breaker."}, s.sessions)
	tool(s, &sdk.Tool{Name: "ckpt_log", Annotations: readOnly("Session history"),
		Description: "Lists a session's commits, newest first: time, trigger (write, sparse, full, hook, cron, merge, restore, autosave), whether it was a full checkpoint (as before a compaction), the sections and files it changed. Filter by section, trigger (full matches every full checkpoint) and time."}, s.log)
	tool(s, &sdk.Tool{Name: "ckpt_show", Annotations: readOnly("Show a checkpoint"),
		Description: "Returns a session file (checkpoint.md by default) or one section of it as it was at a revision. rev before-compact gives what the checkpoint said before the last compaction."}, s.show)
	tool(s, &sdk.Tool{Name: "ckpt_diff", Annotations: readOnly("Compare checkpoints"),
		Description: "Compares a session file between two revisions section by section: each section added, removed, changed or moved, with a unified diff. Default: HEAD against its parent."}, s.diff)
	tool(s, &sdk.Tool{Name: "ckpt_blame", Annotations: readOnly("Blame a section"),
		Description: "For each line of a section of checkpoint.md, the commit, time and trigger that added it: when a decision was taken or a blocker appeared."}, s.blame)
	tool(s, &sdk.Tool{Name: "ckpt_search", Annotations: readOnly("Search checkpoints"),
		Description: "Finds lines containing every word of query (any case; \"a quoted phrase\" is one word) in the current checkpoints, notes and knowledge graph, or in every version with history true (a history hit is the commit that introduced the line)."}, s.searchTool)
	tool(s, &sdk.Tool{Name: "ckpt_decisions", Annotations: readOnly("Decisions"),
		Description: "Lists decisions with their state (pending, accepted or rejected in the knowledge graph; unpromoted for a Key Decision no full sync has promoted yet) and where each was written. With session, that session's Key Decisions first."}, s.decisions)
	if s.opts.AllowNotes {
		f := false
		tool(s, &sdk.Tool{Name: "ckpt_note", Annotations: &sdk.ToolAnnotations{Title: "Add a note", DestructiveHint: &f, OpenWorldHint: &f},
			Description: "Appends one entry to a session's notes.md, as the agent would: the next full sync routes it into the checkpoint by its tag (decision, task, done, blocker, note, rule, fact, …) and promotes decisions for review. Nothing is committed now."}, s.note)
	}
}

// --- ckpt_sessions

type SessionsIn struct {
	Query  string `json:"query,omitempty" jsonschema:"keep the sessions whose id contains this text"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous result, to get the next page"`
	Limit  int    `json:"limit,omitempty" jsonschema:"sessions per page, 1 to 200 (default 50)"`
}

type SessionOut struct {
	ID            string `json:"id"`
	Template      string `json:"template"`
	Worktree      string `json:"worktree" jsonschema:"the directory that holds the session's files"`
	Bound         string `json:"bound,omitempty" jsonschema:"the git work tree whose hooks checkpoint the session"`
	Head          string `json:"head" jsonschema:"the newest commit"`
	Time          string `json:"time"`
	Trigger       string `json:"trigger"`
	Full          bool   `json:"full" jsonschema:"the newest commit is a full checkpoint"`
	Subject       string `json:"subject"`
	PendingNotes  int    `json:"pending_notes" jsonschema:"notes.md entries waiting for a full sync"`
	BreakerOpen   bool   `json:"breaker_open" jsonschema:"the circuit breaker is open: only sparse checkpoints until a person resets it"`
	BreakerReason string `json:"breaker_reason,omitempty"`
}

type SessionsOut struct {
	Sessions []SessionOut `json:"sessions"`
	Total    int          `json:"total" jsonschema:"sessions matching the query"`
	Paging
}

func (s *Server) sessions(_ context.Context, in SessionsIn) (SessionsOut, error) {
	out := SessionsOut{Sessions: []SessionOut{}}
	limit, err := limitOf(in.Limit, 50, 200)
	if err != nil {
		return out, err
	}
	off, err := offsetOf(in.Cursor)
	if err != nil {
		return out, err
	}
	all, err := s.history.Sessions()
	if err != nil {
		return out, err
	}
	var list []SessionOut
	for _, ss := range all {
		if in.Query != "" && !strings.Contains(strings.ToLower(ss.ID), strings.ToLower(in.Query)) {
			continue
		}
		list = append(list, SessionOut{
			ID: ss.ID, Template: ss.Template, Worktree: ss.Worktree, Bound: ss.Bound, Head: ss.Head,
			Time: timeString(ss.Time), Trigger: ss.Trigger, Full: ss.Full, Subject: ss.Subject,
			PendingNotes: ss.PendingNotes, BreakerOpen: ss.Breaker.Open, BreakerReason: ss.Breaker.Reason,
		})
	}
	out.Total = len(list)
	out.Sessions, out.Paging = page(list, off, limit, "sessions")
	return out, nil
}

// --- ckpt_log

type LogIn struct {
	Session string `json:"session" jsonschema:"the session id (ckpt_sessions lists them)"`
	Section string `json:"section,omitempty" jsonschema:"keep the commits that changed this section: its emoji (🔑), §N, its number (4), or its heading text (Key Decisions)"`
	Trigger string `json:"trigger,omitempty" jsonschema:"keep the commits with this trigger (write, sparse, full, hook, cron, merge, restore, autosave); full keeps every full checkpoint"`
	Since   string `json:"since,omitempty" jsonschema:"keep commits at or after this time (2026-04-01T22:00Z, RFC 3339 or a date)"`
	Until   string `json:"until,omitempty" jsonschema:"keep commits at or before this time"`
	Cursor  string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous result, to get the next page"`
	Limit   int    `json:"limit,omitempty" jsonschema:"commits per page, 1 to 100 (default 20)"`
}

type CommitOut struct {
	Provenance
	Short    string   `json:"short"`
	Trigger  string   `json:"trigger"`
	Full     bool     `json:"full" jsonschema:"a full checkpoint (as a hook takes before a compaction)"`
	Subject  string   `json:"subject"`
	Sections []string `json:"sections" jsonschema:"the checkpoint sections it changed"`
	Files    []string `json:"files" jsonschema:"the files it changed"`
}

type LogOut struct {
	Session string      `json:"session"`
	Commits []CommitOut `json:"commits"`
	Paging
}

// logScan bounds the commits one ckpt_log call reads while filtering.
const logScan = 2000

func (s *Server) log(_ context.Context, in LogIn) (LogOut, error) {
	out := LogOut{Session: in.Session, Commits: []CommitOut{}}
	limit, err := limitOf(in.Limit, 20, 100)
	if err != nil {
		return out, err
	}
	q := history.LogQuery{Section: in.Section, Trigger: in.Trigger, Cursor: in.Cursor, Limit: limit, Scan: logScan, Files: true}
	if in.Since != "" {
		if q.Since, err = history.ParseTime(in.Since); err != nil {
			return out, err
		}
	}
	if in.Until != "" {
		if q.Until, err = history.ParseTime(in.Until); err != nil {
			return out, err
		}
	}
	p, err := s.history.Log(in.Session, q)
	if err != nil {
		return out, err
	}
	for _, c := range p.Commits {
		out.Commits = append(out.Commits, CommitOut{
			Provenance: provenance(c.Provenance("")), Short: c.Short, Trigger: c.Trigger, Full: c.Full,
			Subject: clip(c.Subject, 300), Sections: c.Sections, Files: nonNil(c.Files),
		})
	}
	n := fit(out.Commits, maxBytes)
	switch {
	case n < len(out.Commits):
		out.NextCursor = out.Commits[n].Commit
		out.Truncated = fmt.Sprintf("truncated to fit: %d of %d commits shown, more follow; call again with cursor %q", n, len(out.Commits), out.NextCursor)
		out.Commits = out.Commits[:n]
	case p.Next != "" && len(p.Commits) < limit:
		out.NextCursor = p.Next
		out.Truncated = fmt.Sprintf("stopped after reading %d commits; older ones may match: call again with cursor %q", p.Scanned, p.Next)
	case p.Next != "":
		out.NextCursor = p.Next
		out.Truncated = fmt.Sprintf("truncated, more commits follow: call again with cursor %q", p.Next)
	}
	return out, nil
}

// --- ckpt_show

type ShowIn struct {
	Session string `json:"session" jsonschema:"the session id (ckpt_sessions lists them)"`
	Rev     string `json:"rev,omitempty" jsonschema:"a revision: a commit hash, HEAD, HEAD~N, before-compact (the last commit before the newest full checkpoint, that is before the last compaction), rejected/N, or a time (2026-04-01T22:00Z, RFC 3339, or a date: the newest commit at or before it); default HEAD"`
	File    string `json:"file,omitempty" jsonschema:"checkpoint.md (default), notes.md or checkpoint-<topic>.md"`
	Section string `json:"section,omitempty" jsonschema:"only this section: its emoji (🔑), §N, its number (4), or its heading text (Key Decisions)"`
	Cursor  string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous result, to read on"`
	Limit   int    `json:"limit,omitempty" jsonschema:"bytes of content per page, 1024 to 65536 (default 16384)"`
}

type ShowOut struct {
	Provenance
	File       string `json:"file"`
	Heading    string `json:"heading,omitempty"`
	Content    string `json:"content" jsonschema:"the file or section, from offset"`
	Offset     int    `json:"offset" jsonschema:"where content starts, in bytes"`
	TotalBytes int    `json:"total_bytes"`
	Paging
}

func (s *Server) show(_ context.Context, in ShowIn) (ShowOut, error) {
	var out ShowOut
	limit, err := limitOf(in.Limit, maxBytes, 64<<10)
	if err != nil {
		return out, err
	}
	limit = max(limit, 1024)
	off, err := offsetOf(in.Cursor)
	if err != nil {
		return out, err
	}
	sh, err := s.history.Show(in.Session, in.Rev, in.File, in.Section)
	if err != nil {
		return out, err
	}
	out = ShowOut{Provenance: provenance(sh.Provenance), File: sh.File, Heading: sh.Heading, TotalBytes: len(sh.Content), Offset: off}
	if off > len(sh.Content) {
		return out, fmt.Errorf("cursor %q is past the end of %s (%d bytes)", in.Cursor, sh.File, len(sh.Content))
	}
	text, rest := cutText(sh.Content[off:], limit)
	out.Content = text
	if rest > 0 {
		next := off + len(text)
		out.NextCursor = fmt.Sprint(next)
		out.Truncated = fmt.Sprintf("truncated, %d more bytes: call again with cursor %q", rest, out.NextCursor)
	}
	return out, nil
}

// --- ckpt_diff

type DiffIn struct {
	Session string `json:"session" jsonschema:"the session id (ckpt_sessions lists them)"`
	From    string `json:"from,omitempty" jsonschema:"the older revision (a commit hash, HEAD~N, before-compact or a time); default the parent of to"`
	To      string `json:"to,omitempty" jsonschema:"the newer revision; default HEAD"`
	Section string `json:"section,omitempty" jsonschema:"only this section: its emoji (🔑), §N, its number (4), or its heading text (Key Decisions)"`
	File    string `json:"file,omitempty" jsonschema:"checkpoint.md (default), notes.md or checkpoint-<topic>.md"`
	Cursor  string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous result, to read on"`
	Limit   int    `json:"limit,omitempty" jsonschema:"bytes of diff per page, 1024 to 65536 (default 16384)"`
}

type ChangeOut struct {
	Section string `json:"section"`
	Heading string `json:"heading"`
	Status  string `json:"status" jsonschema:"added, removed, changed or moved"`
	Moved   bool   `json:"moved" jsonschema:"the section changed place"`
	Diff    string `json:"diff" jsonschema:"unified diff of the section (from offset, when continued)"`
	Offset  int    `json:"offset,omitempty" jsonschema:"where diff starts, when a long diff continues from the previous page"`
}

type DiffOut struct {
	Session string      `json:"session"`
	File    string      `json:"file"`
	From    *Provenance `json:"from" jsonschema:"the older commit; null when to is the first commit"`
	To      Provenance  `json:"to"`
	Changes []ChangeOut `json:"changes"`
	Total   int         `json:"total" jsonschema:"sections that differ"`
	Paging
}

func (s *Server) diff(_ context.Context, in DiffIn) (DiffOut, error) {
	out := DiffOut{Session: in.Session, Changes: []ChangeOut{}}
	limit, err := limitOf(in.Limit, maxBytes, 64<<10)
	if err != nil {
		return out, err
	}
	limit = max(limit, 1024)
	at, within, err := diffCursor(in.Cursor)
	if err != nil {
		return out, err
	}
	d, err := s.history.Diff(in.Session, history.DiffQuery{From: in.From, To: in.To, Section: in.Section, File: in.File})
	if err != nil {
		return out, err
	}
	out.File, out.To, out.Total = d.File, provenance(d.To.Provenance("")), len(d.Changes)
	if d.From != nil {
		p := provenance(d.From.Provenance(""))
		out.From = &p
	}
	if at > len(d.Changes) || at < len(d.Changes) && within > len(d.Changes[at].Diff) {
		return out, fmt.Errorf("cursor %q is past the end of the diff", in.Cursor)
	}
	budget := limit
	for i := at; i < len(d.Changes); i++ {
		ch := d.Changes[i]
		c := ChangeOut{Section: ch.Section, Heading: clip(ch.Heading, 300), Status: ch.Status, Moved: ch.Moved}
		off := 0
		if i == at {
			off = within
		}
		c.Offset = off
		text, rest := cutText(ch.Diff[off:], max(budget, 0))
		if len(out.Changes) > 0 && (rest > 0 || budget <= 0) {
			// Start the next page with this section rather than show a scrap of it.
			out.NextCursor = fmt.Sprint(i)
			out.Truncated = fmt.Sprintf("truncated, %d more sections differ: call again with cursor %q", len(d.Changes)-i, out.NextCursor)
			return out, nil
		}
		c.Diff = text
		out.Changes = append(out.Changes, c)
		budget -= len(text) + 200
		if rest > 0 {
			out.NextCursor = fmt.Sprintf("%d:%d", i, off+len(text))
			out.Truncated = fmt.Sprintf("truncated, %d more bytes of the %s diff and %d more sections: call again with cursor %q", rest, ch.Section, len(d.Changes)-i-1, out.NextCursor)
			return out, nil
		}
	}
	return out, nil
}

// --- ckpt_blame

type BlameIn struct {
	Session string `json:"session" jsonschema:"the session id (ckpt_sessions lists them)"`
	Section string `json:"section" jsonschema:"the section of checkpoint.md: its emoji (🔑), §N, its number (4), or its heading text (Key Decisions)"`
	Rev     string `json:"rev,omitempty" jsonschema:"the revision to blame (a commit hash, HEAD~N, before-compact or a time); default HEAD"`
	Cursor  string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous result, to get the next lines"`
	Limit   int    `json:"limit,omitempty" jsonschema:"lines per page, 1 to 500 (default 100)"`
}

type BlameLineOut struct {
	Line    int    `json:"line" jsonschema:"line number in the file at rev"`
	Text    string `json:"text"`
	Commit  string `json:"commit" jsonschema:"the commit that added the line"`
	Short   string `json:"short"`
	Time    string `json:"time"`
	Trigger string `json:"trigger"`
	Full    bool   `json:"full" jsonschema:"added by a full checkpoint"`
}

type BlameOut struct {
	Provenance
	Heading string         `json:"heading"`
	Lines   []BlameLineOut `json:"lines"`
	Total   int            `json:"total" jsonschema:"lines of the section (blank lines left out)"`
	Paging
}

func (s *Server) blame(_ context.Context, in BlameIn) (BlameOut, error) {
	out := BlameOut{Lines: []BlameLineOut{}}
	if strings.TrimSpace(in.Section) == "" {
		return out, fmt.Errorf("section is empty: name one by emoji (🔑), §N, number or heading text")
	}
	limit, err := limitOf(in.Limit, 100, 500)
	if err != nil {
		return out, err
	}
	off, err := offsetOf(in.Cursor)
	if err != nil {
		return out, err
	}
	b, err := s.history.Blame(in.Session, in.Section, in.Rev)
	if err != nil {
		return out, err
	}
	out.Provenance, out.Heading, out.Total = provenance(b.Provenance), b.Heading, len(b.Lines)
	var lines []BlameLineOut
	for _, l := range b.Lines {
		lines = append(lines, BlameLineOut{Line: l.Line, Text: clip(l.Text, 500), Commit: l.Commit, Short: l.Short, Time: timeString(l.Time), Trigger: l.Trigger, Full: l.Full})
	}
	out.Lines, out.Paging = page(lines, off, limit, "lines")
	return out, nil
}

// --- ckpt_search

type SearchIn struct {
	Query   string `json:"query" jsonschema:"words that must all appear in a line, any case; \"a quoted phrase\" is one word"`
	Session string `json:"session,omitempty" jsonschema:"only this session (default: every session and the knowledge graph)"`
	Section string `json:"section,omitempty" jsonschema:"only hits in this section: its emoji (🔑), §N or heading text"`
	History bool   `json:"history,omitempty" jsonschema:"search every committed version too, not only the current files"`
	Cursor  string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous result, to get the next page"`
	Limit   int    `json:"limit,omitempty" jsonschema:"hits per page, 1 to 100 (default 20)"`
}

type HitOut struct {
	Provenance
	File    string `json:"file"`
	Line    int    `json:"line"`
	Snippet string `json:"snippet"`
	Current bool   `json:"current" jsonschema:"in the current file (else in history: the commit that introduced the line)"`
}

type SearchOut struct {
	Hits  []HitOut `json:"hits"`
	Total int      `json:"total"`
	Paging
}

func (s *Server) searchTool(_ context.Context, in SearchIn) (SearchOut, error) {
	out := SearchOut{Hits: []HitOut{}}
	limit, err := limitOf(in.Limit, 20, 100)
	if err != nil {
		return out, err
	}
	off, err := offsetOf(in.Cursor)
	if err != nil {
		return out, err
	}
	terms := splitQuery(in.Query)
	if len(terms) == 0 {
		return out, fmt.Errorf("query is empty: give one or more words to find")
	}
	q := search.Query{Terms: terms, Section: in.Section, History: in.History}
	if in.Session != "" {
		id, err := repo.ParseSessionID(in.Session)
		if err != nil {
			return out, err
		}
		q.Session = id
	}
	hits, err := s.search.Search(q)
	if err != nil {
		return out, err
	}
	var list []HitOut
	for _, h := range hits {
		list = append(list, HitOut{
			Provenance: Provenance{Session: h.Session, Commit: h.Commit.String(), Time: timeString(h.Time), Section: string(h.Section)},
			File:       h.File, Line: h.Line, Snippet: h.Snippet, Current: h.Current,
		})
	}
	out.Total = len(list)
	out.Hits, out.Paging = page(list, off, limit, "hits")
	return out, nil
}

// splitQuery splits a query into words, a double-quoted phrase being one.
func splitQuery(q string) []string {
	var out []string
	for i, part := range strings.Split(q, `"`) {
		if i%2 == 1 {
			if p := strings.Join(strings.Fields(part), " "); p != "" {
				out = append(out, p)
			}
			continue
		}
		out = append(out, strings.Fields(part)...)
	}
	return out
}

// --- ckpt_decisions

type DecisionsIn struct {
	Session string `json:"session,omitempty" jsonschema:"list this session's Key Decisions first and keep the knowledge graph entries it contributed; default: the whole knowledge graph"`
	Rev     string `json:"rev,omitempty" jsonschema:"the session's revision for its Key Decisions; default HEAD"`
	State   string `json:"state,omitempty" jsonschema:"keep pending, accepted, rejected or unpromoted decisions"`
	Cursor  string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous result, to get the next page"`
	Limit   int    `json:"limit,omitempty" jsonschema:"decisions per page, 1 to 200 (default 50)"`
}

type DecisionOut struct {
	ID         string       `json:"id" jsonschema:"K- and 8 hex digits of the decision's text"`
	Text       string       `json:"text"`
	State      string       `json:"state" jsonschema:"pending, accepted, rejected, or unpromoted (in a checkpoint, not in the knowledge graph yet)"`
	Provenance []Provenance `json:"provenance" jsonschema:"where it was written: the commit that added it to the session, and each session commit it was promoted from"`
	Supersedes []string     `json:"supersedes,omitempty"`
	Graph      *Provenance  `json:"graph,omitempty" jsonschema:"the knowledge repository commit its state was read from"`
}

type DecisionsOut struct {
	Decisions []DecisionOut `json:"decisions"`
	Total     int           `json:"total"`
	Paging
}

func (s *Server) decisions(_ context.Context, in DecisionsIn) (DecisionsOut, error) {
	out := DecisionsOut{Decisions: []DecisionOut{}}
	limit, err := limitOf(in.Limit, 50, 200)
	if err != nil {
		return out, err
	}
	off, err := offsetOf(in.Cursor)
	if err != nil {
		return out, err
	}
	res, err := s.history.Decisions(history.DecisionsQuery{Session: in.Session, Rev: in.Rev, State: in.State})
	if err != nil {
		return out, err
	}
	var list []DecisionOut
	for _, d := range res.Decisions {
		o := DecisionOut{ID: d.ID, Text: clip(d.Text, 2000), State: d.State, Provenance: []Provenance{}, Supersedes: d.Supersedes}
		for _, p := range d.Provenance {
			o.Provenance = append(o.Provenance, provenance(p))
		}
		if d.Graph != nil {
			g := provenance(*d.Graph)
			o.Graph = &g
		}
		list = append(list, o)
	}
	out.Total = len(list)
	out.Decisions, out.Paging = page(list, off, limit, "decisions")
	return out, nil
}
