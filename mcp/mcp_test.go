package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/mcp"
)

var readTools = []string{"ckpt_blame", "ckpt_decisions", "ckpt_diff", "ckpt_log", "ckpt_search", "ckpt_sessions", "ckpt_show"}

func toolNames(t *testing.T, cs *sdk.ClientSession) map[string]*sdk.Tool {
	t.Helper()
	out := map[string]*sdk.Tool{}
	for tl, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out[tl.Name] = tl
	}
	return out
}

func TestToolsList(t *testing.T) {
	f := store(t)
	for _, tc := range []struct {
		name  string
		args  []string
		tools []string
	}{
		{"read-only by default", nil, readTools},
		{"notes allowed", []string{"--allow-notes"}, append(slices.Clone(readTools), "ckpt_note")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := f.server(t, tc.args...)
			got := toolNames(t, cs)
			var names []string
			for n, tl := range got {
				names = append(names, n)
				if tl.InputSchema == nil || tl.OutputSchema == nil || tl.Description == "" {
					t.Errorf("%s: schemas or description missing", n)
				}
				if n != "ckpt_note" && (tl.Annotations == nil || !tl.Annotations.ReadOnlyHint) {
					t.Errorf("%s: not marked read-only", n)
				}
			}
			slices.Sort(names)
			want := slices.Sorted(slices.Values(tc.tools))
			if !slices.Equal(names, want) {
				t.Fatalf("tools %v, want %v", names, want)
			}
			// Arguments carry the agreed names.
			schema, _ := got["ckpt_diff"].InputSchema.(map[string]any)
			props, _ := schema["properties"].(map[string]any)
			for _, arg := range []string{"session", "section", "from", "to", "cursor", "limit"} {
				if props[arg] == nil {
					t.Errorf("ckpt_diff lacks argument %q: %v", arg, props)
				}
			}
		})
	}
}

func TestTools(t *testing.T) {
	f := store(t)
	cs := f.server(t)

	var ss mcp.SessionsOut
	mustCall(t, cs, "ckpt_sessions", nil, &ss)
	if ss.Total != 3 || ss.Sessions[0].ID != "alpha" || ss.Sessions[0].Head != f.c[5] || ss.Sessions[2].Template != "eleven-en" {
		t.Fatalf("sessions %+v", ss)
	}
	mustCall(t, cs, "ckpt_sessions", map[string]any{"query": "ELE"}, &ss)
	if ss.Total != 1 || ss.Sessions[0].ID != "eleven" {
		t.Fatalf("sessions matching ELE %+v", ss)
	}

	var log mcp.LogOut
	mustCall(t, cs, "ckpt_log", map[string]any{"session": "alpha", "section": "Key Decisions"}, &log)
	var got []string
	for _, c := range log.Commits {
		got = append(got, c.Commit)
		if c.Session != "alpha" || c.Time == "" || len(c.Files) == 0 {
			t.Errorf("commit without provenance or files: %+v", c)
		}
	}
	if want := []string{f.c[4], f.c[3], f.c[1], f.c[0]}; !slices.Equal(got, want) || log.NextCursor != "" {
		t.Fatalf("log of 🔑: %v next %q, want %v", got, log.NextCursor, want)
	}
	mustCall(t, cs, "ckpt_log", map[string]any{"session": "alpha", "trigger": "full"}, &log)
	if len(log.Commits) != 1 || !log.Commits[0].Full || log.Commits[0].Commit != f.c[4] {
		t.Fatalf("full checkpoints %+v", log.Commits)
	}
	mustCall(t, cs, "ckpt_log", map[string]any{"session": "alpha", "since": "2026-04-01T22:04Z", "until": "2026-04-01T22:05:00Z"}, &log)
	if len(log.Commits) != 2 || log.Commits[0].Commit != f.c[5] {
		t.Fatalf("log since/until %+v", log.Commits)
	}

	var show mcp.ShowOut
	mustCall(t, cs, "ckpt_show", map[string]any{"session": "alpha", "rev": "before-compact", "section": "🔑"}, &show)
	if show.Commit != f.c[3] || show.Heading != "### 🔑 Key Decisions" || !strings.Contains(show.Content, "D2") || strings.Contains(show.Content, "D3") || show.Section != "🔑" {
		t.Fatalf("show before-compact %+v", show)
	}
	mustCall(t, cs, "ckpt_show", map[string]any{"session": "alpha", "rev": "2026-04-01T22:01:30Z", "section": "1"}, &show)
	if show.Commit != f.c[1] || !strings.Contains(show.Content, "Task A") {
		t.Fatalf("show at a time %+v", show)
	}
	mustCall(t, cs, "ckpt_show", map[string]any{"session": "alpha", "file": "notes.md"}, &show)
	if show.File != "notes.md" || !strings.HasPrefix(show.Content, "# Notes") || show.NextCursor != "" {
		t.Fatalf("show notes %+v", show)
	}

	var diff mcp.DiffOut
	mustCall(t, cs, "ckpt_diff", map[string]any{"session": "alpha", "from": f.c[1], "to": f.c[3]}, &diff)
	var secs []string
	for _, ch := range diff.Changes {
		secs = append(secs, ch.Section+":"+ch.Status)
	}
	if !slices.Contains(secs, "🔑:changed") || !slices.Contains(secs, "📋:changed") || diff.From == nil || diff.From.Commit != f.c[1] || diff.To.Commit != f.c[3] {
		t.Fatalf("diff %v from %+v to %+v", secs, diff.From, diff.To)
	}
	mustCall(t, cs, "ckpt_diff", map[string]any{"session": "alpha", "from": f.c[2], "to": f.c[3], "section": "🔑"}, &diff)
	if len(diff.Changes) != 1 || !strings.Contains(diff.Changes[0].Diff, "+- D2: keep notes append-only") {
		t.Fatalf("diff of 🔑 %+v", diff.Changes)
	}

	var blame mcp.BlameOut
	mustCall(t, cs, "ckpt_blame", map[string]any{"session": "alpha", "section": "🔑"}, &blame)
	want := map[string]string{"- D1: use xxhash": f.c[1], "- D2: keep notes append-only": f.c[3], "- D3: blame walks first parents": f.c[4]}
	if len(blame.Lines) != 3 || blame.Commit != f.c[5] || blame.Section != "🔑" {
		t.Fatalf("blame %+v", blame)
	}
	for _, l := range blame.Lines {
		if want[l.Text] != l.Commit || l.Time == "" {
			t.Errorf("blame line %+v, want commit %s", l, want[l.Text])
		}
		if l.Text == "- D3: blame walks first parents" && !l.Full {
			t.Errorf("D3 came with the full sync: %+v", l)
		}
	}

	var found mcp.SearchOut
	mustCall(t, cs, "ckpt_search", map[string]any{"query": "xxhash", "session": "alpha"}, &found)
	if found.Total == 0 || !found.Hits[0].Current || found.Hits[0].Session != "alpha" || found.Hits[0].Section != "🔑" {
		t.Fatalf("search %+v", found)
	}
	mustCall(t, cs, "ckpt_search", map[string]any{"query": `"Task A"`, "history": true}, &found)
	if found.Total != 1 || found.Hits[0].Current || found.Hits[0].Commit != f.c[1] {
		t.Fatalf("search history %+v", found)
	}

	var ds mcp.DecisionsOut
	mustCall(t, cs, "ckpt_decisions", map[string]any{"session": "alpha"}, &ds)
	var states []string
	for _, d := range ds.Decisions {
		states = append(states, d.Text+"="+d.State)
		if len(d.Provenance) == 0 || d.Provenance[0].Session != "alpha" || d.Provenance[0].Commit == "" {
			t.Errorf("decision without provenance %+v", d)
		}
	}
	if want := []string{"D1: use xxhash=pending", "D2: keep notes append-only=pending", "D3: blame walks first parents=pending"}; !slices.Equal(states, want) {
		t.Fatalf("decisions %v, want %v", states, want)
	}
	mustCall(t, cs, "ckpt_decisions", map[string]any{"state": "accepted"}, &ds)
	if ds.Total != 0 {
		t.Fatalf("accepted decisions %+v", ds)
	}
}

func TestResources(t *testing.T) {
	f := store(t)
	cs := f.server(t)
	ctx := context.Background()
	var templates []string
	for rt, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		templates = append(templates, rt.URITemplate)
	}
	if !slices.Equal(templates, []string{"ckpt://{session}/{+path}"}) {
		t.Fatalf("templates %v", templates)
	}
	for _, tc := range []struct {
		uri, contains, not, commit string
	}{
		{"ckpt://alpha/checkpoint.md", "Task B", "", f.c[5]},
		{"ckpt://alpha/checkpoint.md@HEAD~4", "Task A", "D2", f.c[1]},
		{"ckpt://alpha/checkpoint.md@before-compact#%F0%9F%94%91", "D2", "Task", f.c[3]},
		{"ckpt://alpha/checkpoint.md@" + f.c[3][:7] + "#Key%20Decisions", "D2", "D3", f.c[3]},
		{"ckpt://alpha/notes.md", "# Notes", "", f.c[5]},
	} {
		res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: tc.uri})
		if err != nil {
			t.Fatalf("%s: %v", tc.uri, err)
		}
		c := res.Contents[0]
		if !strings.Contains(c.Text, tc.contains) || tc.not != "" && strings.Contains(c.Text, tc.not) || c.Meta["commit"] != tc.commit || c.Meta["session"] != "alpha" {
			t.Errorf("%s: meta %v text:\n%s", tc.uri, c.Meta, c.Text)
		}
	}
	// A file larger than a resource may be is cut, and says how to read on.
	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "ckpt://big/checkpoint.md"})
	if err != nil {
		t.Fatal(err)
	}
	if txt := res.Contents[0].Text; len(txt) > 65<<10 || !strings.Contains(txt, "… truncated, ") || !strings.Contains(txt, "ckpt_show") {
		t.Fatalf("big resource: %d bytes, ends %q", len(txt), txt[max(0, len(txt)-200):])
	}
	for _, uri := range []string{"ckpt://ghost/checkpoint.md", "ckpt://alpha/checkpoint.md@nope", "ckpt://alpha/secrets.txt", "ckpt://alpha/checkpoint.md#nothing", "ckpt://alpha/%zz", "ckpt://alpha/../../etc/passwd"} {
		_, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err = %v, want one line", uri, err)
		}
	}
}

// Every answer is bounded; following next_cursor gives back exactly the whole.
func TestPaging(t *testing.T) {
	f := store(t)
	cs := f.server(t)

	var all []string
	args := map[string]any{"session": "alpha", "limit": 2}
	for pages := 0; ; pages++ {
		var log mcp.LogOut
		mustCall(t, cs, "ckpt_log", args, &log)
		for _, c := range log.Commits {
			all = append(all, c.Commit)
		}
		if log.NextCursor == "" {
			if pages != 2 {
				t.Fatalf("%d pages", pages+1)
			}
			break
		}
		if !strings.Contains(log.Truncated, "truncated, more commits follow") {
			t.Fatalf("truncated %q", log.Truncated)
		}
		args["cursor"] = log.NextCursor
	}
	if want := []string{f.c[5], f.c[4], f.c[3], f.c[2], f.c[1], f.c[0]}; !slices.Equal(all, want) {
		t.Fatalf("paged log %v", all)
	}

	// show: the 200 KB checkpoint, 16 KB at a time by default, cut at line ends.
	var whole strings.Builder
	args = map[string]any{"session": "big"}
	first := true
	for {
		var show mcp.ShowOut
		mustCall(t, cs, "ckpt_show", args, &show)
		if len(show.Content) > 16<<10 || show.NextCursor != "" && !strings.HasSuffix(show.Content, "\n") {
			t.Fatalf("page of %d bytes ending %q", len(show.Content), show.Content[max(0, len(show.Content)-20):])
		}
		if first {
			if !strings.HasPrefix(show.Truncated, "truncated, ") || !strings.Contains(show.Truncated, " more bytes: call again with cursor") {
				t.Fatalf("truncated %q", show.Truncated)
			}
			first = false
		}
		whole.WriteString(show.Content)
		if show.NextCursor == "" {
			if whole.Len() != show.TotalBytes {
				t.Fatalf("read %d of %d bytes", whole.Len(), show.TotalBytes)
			}
			break
		}
		args["cursor"] = show.NextCursor
	}
	cp, err := os.ReadFile(filepath.Join(f.home, "sessions", "big", "checkpoint.md"))
	if err != nil {
		t.Fatal(err)
	}
	if whole.String() != string(cp) {
		t.Fatal("paged show differs from the checkpoint")
	}

	// diff: one 400 KB section diff, in pages of 4 KB.
	var diff strings.Builder
	args = map[string]any{"session": "big", "limit": 4096}
	for pages := 0; ; pages++ {
		var d mcp.DiffOut
		mustCall(t, cs, "ckpt_diff", args, &d)
		for _, ch := range d.Changes {
			if ch.Section == "⚠️" {
				if ch.Offset != diff.Len() {
					t.Fatalf("page %d starts at %d, have %d", pages, ch.Offset, diff.Len())
				}
				diff.WriteString(ch.Diff)
			}
			if len(ch.Diff) > 4096 {
				t.Fatalf("a page of %d bytes", len(ch.Diff))
			}
		}
		if d.NextCursor == "" {
			break
		}
		if pages > 500 {
			t.Fatal("diff never ends")
		}
		args["cursor"] = d.NextCursor
	}
	if !strings.Contains(diff.String(), "+- note 2499 (new)") || !strings.Contains(diff.String(), "-- note 0000 (old)") {
		t.Fatalf("paged diff incomplete (%d bytes)", diff.Len())
	}

	// blame, search, sessions, decisions page by count.
	var blame mcp.BlameOut
	mustCall(t, cs, "ckpt_blame", map[string]any{"session": "big", "section": "⚠️", "limit": 1000}, &blame)
	if blame.Total != 2500 || len(blame.Lines) == 0 || len(blame.Lines) > 500 || blame.NextCursor != "" && !strings.Contains(blame.Truncated, "more lines") {
		t.Fatalf("blame page: %d of %d lines, %q", len(blame.Lines), blame.Total, blame.Truncated)
	}
	lines := 0
	args = map[string]any{"session": "big", "section": "⚠️"}
	for {
		var b mcp.BlameOut
		mustCall(t, cs, "ckpt_blame", args, &b)
		for _, l := range b.Lines {
			if want := fmt.Sprintf("- note %04d (new)", lines); !strings.HasPrefix(l.Text, want) {
				t.Fatalf("line %d: %q, want %q", lines, l.Text, want)
			}
			lines++
		}
		if b.NextCursor == "" {
			break
		}
		args["cursor"] = b.NextCursor
	}
	if lines != 2500 {
		t.Fatalf("blamed %d lines", lines)
	}
	var found mcp.SearchOut
	mustCall(t, cs, "ckpt_search", map[string]any{"query": "staging", "session": "big", "limit": 7}, &found)
	if len(found.Hits) != 7 || found.Total != 2500 || found.NextCursor != "7" || !strings.Contains(found.Truncated, "2493 more hits") {
		t.Fatalf("search page: %d hits of %d, next %q, %q", len(found.Hits), found.Total, found.NextCursor, found.Truncated)
	}
	var next mcp.SearchOut
	mustCall(t, cs, "ckpt_search", map[string]any{"query": "staging", "session": "big", "limit": 7, "cursor": "7"}, &next)
	if next.Hits[0].Line != found.Hits[6].Line+1 {
		t.Fatalf("second page starts at line %d after %d", next.Hits[0].Line, found.Hits[6].Line)
	}
	var ss mcp.SessionsOut
	mustCall(t, cs, "ckpt_sessions", map[string]any{"limit": 2}, &ss)
	if len(ss.Sessions) != 2 || ss.NextCursor != "2" {
		t.Fatalf("sessions page %+v", ss)
	}
	var last mcp.SessionsOut
	mustCall(t, cs, "ckpt_sessions", map[string]any{"cursor": "2"}, &last)
	if ss = last; len(ss.Sessions) != 1 || ss.Sessions[0].ID != "eleven" || ss.NextCursor != "" {
		t.Fatalf("last sessions page %+v", ss)
	}
	var ds mcp.DecisionsOut
	mustCall(t, cs, "ckpt_decisions", map[string]any{"limit": 1}, &ds)
	if len(ds.Decisions) != 1 || ds.Total != 3 || ds.NextCursor != "1" {
		t.Fatalf("decisions page %+v", ds)
	}
}

func TestBadInput(t *testing.T) {
	f := store(t)
	cs := f.server(t)
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"unknown session", "ckpt_log", map[string]any{"session": "ghost"}, "ghost: no such session; ckpt_sessions lists the sessions"},
		{"invalid session", "ckpt_show", map[string]any{"session": "../../etc"}, "invalid session id"},
		{"bad revision", "ckpt_show", map[string]any{"session": "alpha", "rev": "nope"}, `"nope": unknown revision; a revision is a commit hash`},
		{"revision too old", "ckpt_show", map[string]any{"session": "alpha", "rev": "HEAD~99"}, "unknown revision"},
		{"time before history", "ckpt_blame", map[string]any{"session": "alpha", "section": "🔑", "rev": "2020-01-01"}, "has no commit that old"},
		{"section not in template", "ckpt_blame", map[string]any{"session": "alpha", "section": "nothing"}, `no section "nothing" in template six (sections: 🎯 📋 ✅ 🔑 📡 ⚠️)`},
		{"section number out of range", "ckpt_log", map[string]any{"session": "alpha", "section": "12"}, `no section "12"`},
		{"empty section", "ckpt_blame", map[string]any{"session": "alpha", "section": " "}, "section is empty"},
		{"missing session", "ckpt_log", map[string]any{}, "session"},
		{"wrong type", "ckpt_log", map[string]any{"session": "alpha", "limit": "ten"}, "limit"},
		{"unknown argument", "ckpt_log", map[string]any{"session": "alpha", "sesion": "x"}, "sesion"},
		{"negative limit", "ckpt_log", map[string]any{"session": "alpha", "limit": -3}, "limit -3: want a positive number"},
		{"bad log cursor", "ckpt_log", map[string]any{"session": "alpha", "cursor": "HEAD"}, `bad cursor "HEAD"`},
		{"bad show cursor", "ckpt_show", map[string]any{"session": "alpha", "cursor": "x1"}, `cursor "x1": pass back the next_cursor`},
		{"cursor past the end", "ckpt_show", map[string]any{"session": "alpha", "cursor": "99999999"}, "past the end"},
		{"bad diff cursor", "ckpt_diff", map[string]any{"session": "alpha", "cursor": "1:"}, "pass back the next_cursor"},
		{"bad time", "ckpt_log", map[string]any{"session": "alpha", "since": "yesterday"}, `time "yesterday": want RFC 3339`},
		{"no such file", "ckpt_show", map[string]any{"session": "alpha", "file": "checkpoint-none.md"}, "no such file"},
		{"not a session file", "ckpt_show", map[string]any{"session": "alpha", "file": "../../../etc/passwd"}, "not a checkpoint file name"},
		{"bad state", "ckpt_decisions", map[string]any{"state": "maybe"}, `state "maybe": want pending`},
		{"empty query", "ckpt_search", map[string]any{"query": "  "}, "query is empty"},
		{"search unknown section", "ckpt_search", map[string]any{"query": "x", "section": "nothing"}, "nothing"},
		{"note without --allow-notes", "ckpt_note", map[string]any{"session": "alpha", "text": "x"}, "ckpt_note"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args})
			msg := ""
			switch {
			case err != nil: // an unknown tool is a protocol error, not a tool error
				msg = err.Error()
			case !res.IsError:
				t.Fatalf("no error: %v", res.StructuredContent)
			default:
				msg = text(res)
			}
			if !strings.Contains(msg, tc.want) {
				t.Fatalf("error %q, want it to contain %q", msg, tc.want)
			}
			if strings.Contains(msg, "\n") || strings.Contains(msg, "goroutine") {
				t.Fatalf("error is not one line: %q", msg)
			}
		})
	}
	// The server is still there.
	if err := cs.Ping(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

// snapshot hashes every file under dir except the lock files, to prove nothing was written.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() || strings.HasPrefix(rel, filepath.Join("state", "locks")) || strings.HasPrefix(rel, filepath.Join("state", "search")) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Without --allow-notes nothing in the store changes, whatever is asked; the only files
// written are lock files and search's index cache (state/search).
func TestReadOnly(t *testing.T) {
	f := store(t)
	before := snapshot(t, f.home)
	cs := f.server(t)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"ckpt_sessions", nil},
		{"ckpt_log", map[string]any{"session": "alpha"}},
		{"ckpt_show", map[string]any{"session": "alpha", "rev": "before-compact"}},
		{"ckpt_diff", map[string]any{"session": "alpha", "from": "HEAD~3"}},
		{"ckpt_blame", map[string]any{"session": "alpha", "section": "📋"}},
		{"ckpt_search", map[string]any{"query": "xxhash", "history": true}},
		{"ckpt_decisions", map[string]any{"session": "alpha"}},
		{"ckpt_note", map[string]any{"session": "alpha", "text": "must not land"}},
	} {
		_, _ = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: c.tool, Arguments: c.args})
	}
	_ = cs.Close()
	after := snapshot(t, f.home)
	if len(before) != len(after) {
		t.Fatalf("files: %d before, %d after", len(before), len(after))
	}
	for p, h := range before {
		if after[p] != h {
			t.Errorf("%s changed", p)
		}
	}
}

func TestNote(t *testing.T) {
	f := store(t)
	cs := f.server(t, "--allow-notes")
	r, err := f.svc.Store.Open("alpha")
	if err != nil {
		t.Fatal(err)
	}
	headBefore, _ := r.Head()
	// An agent's own append, without a final newline, must not be glued to ours.
	f.appendNotes(r, "- [note] written by the agent")
	var out mcp.NoteOut
	mustCall(t, cs, "ckpt_note", map[string]any{"session": "alpha", "tag": "decision", "text": "D4: recall goes through MCP\nso the agent can ask\x07 itself"}, &out)
	if out.Entry != "- [decision] D4: recall goes through MCP\n  so the agent can ask  itself" || out.File != r.WorkPath(checkpoint.NotesFile) {
		t.Fatalf("note %+v", out)
	}
	notes, err := os.ReadFile(r.WorkPath(checkpoint.NotesFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(notes), "- [note] written by the agent\n- [decision] D4: recall goes through MCP\n  so the agent can ask  itself\n") {
		t.Fatalf("notes.md:\n%s", notes)
	}
	if h, _ := r.Head(); h != headBefore {
		t.Fatal("ckpt_note made a commit")
	}
	// The next full sync routes it like any other note.
	f.sync(r)
	cp, err := os.ReadFile(r.WorkPath(checkpoint.File))
	if err != nil || !bytes.Contains(cp, []byte("D4: recall goes through MCP")) {
		t.Fatalf("the note did not reach the checkpoint: %v\n%s", err, cp)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"session": "alpha", "text": "  \n "}, "text is empty"},
		{map[string]any{"session": "alpha", "text": "x", "tag": "De cision"}, `tag "De cision"`},
		{map[string]any{"session": "alpha", "text": strings.Repeat("x", 4001)}, "at most 4000"},
		{map[string]any{"session": "ghost", "text": "x"}, "no such session"},
	} {
		res := call(t, cs, "ckpt_note", tc.args, nil)
		if !res.IsError || !strings.Contains(text(res), tc.want) {
			t.Errorf("%v: %s, want %q", tc.args, text(res), tc.want)
		}
	}
	// A notes.md that is a symbolic link is not written through.
	other := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(other, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ep := filepath.Join(f.home, "sessions", "eleven", "notes.md")
	if err := os.Remove(ep); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, ep); err != nil {
		t.Fatal(err)
	}
	res := call(t, cs, "ckpt_note", map[string]any{"session": "eleven", "text": "x"}, nil)
	if b, _ := os.ReadFile(other); !res.IsError || string(b) != "keep\n" {
		t.Fatalf("wrote through a symlink: %s / %q", text(res), b)
	}
}

// Reading takes the shared lock: a reader beside it does not block; a writer's exclusive
// lock makes the call wait, then fail with one sentence, and the server carries on.
func TestLocks(t *testing.T) {
	f := store(t)
	cs := f.server(t)
	unlock, err := f.svc.Store.Lock("alpha", false)
	if err != nil {
		t.Fatal(err)
	}
	mustCall(t, cs, "ckpt_log", map[string]any{"session": "alpha", "limit": 1}, nil)
	unlock()
	unlock, err = f.svc.Store.Lock("alpha", true)
	if err != nil {
		t.Fatal(err)
	}
	res := call(t, cs, "ckpt_blame", map[string]any{"session": "alpha", "section": "🔑"}, nil)
	unlock()
	if !res.IsError || !strings.Contains(text(res), "busy") || !strings.Contains(text(res), "try again") {
		t.Fatalf("under a writer's lock: %s", text(res))
	}
	mustCall(t, cs, "ckpt_blame", map[string]any{"session": "alpha", "section": "🔑"}, nil)
}

// A client that goes away in the middle of a call: the server neither dies of SIGPIPE nor
// hangs, releases its locks, and leaves every repository valid.
func TestClientDisconnectsMidCall(t *testing.T) {
	f := store(t)
	for _, tc := range []struct {
		name  string
		calls int
	}{
		{"one call", 1},
		{"many calls in flight", 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(ckptBin, "--home", f.home, "mcp")
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			w := bufio.NewWriter(stdin)
			w.WriteString(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
			w.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
			w.Flush()
			// Wait for the answer to initialize, so the calls below are surely being served.
			if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
				t.Fatal(err)
			}
			for i := range tc.calls {
				w.WriteString(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i+2) + `,"method":"tools/call","params":{"name":"ckpt_show","arguments":{"session":"big"}}}` + "\n")
				w.WriteString(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1000) + `,"method":"tools/call","params":{"name":"ckpt_blame","arguments":{"session":"big","section":"⚠️"}}}` + "\n")
			}
			w.Flush()
			// Go away: stop reading answers and close the pipe the server writes to.
			stdout.Close()
			stdin.Close()
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
						t.Fatalf("server killed by %v\n%s", ws.Signal(), stderr.String())
					}
				}
				if err != nil {
					t.Fatalf("server: %v\n%s", err, stderr.String())
				}
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatal("server did not end after its client went away")
			}
			// Its locks are gone: a writer gets in at once.
			f.svc.Store.Opts.LockTimeout = 100 * time.Millisecond
			unlock, err := f.svc.Store.Lock("big", true)
			if err != nil {
				t.Fatalf("lock after the server ended: %v", err)
			}
			unlock()
			fsck := exec.Command("git", "-C", filepath.Join(f.home, "sessions", "big"), "fsck", "--full", "--strict")
			if out, err := fsck.CombinedOutput(); err != nil {
				t.Fatalf("git fsck: %v\n%s", err, out)
			}
		})
	}
}

// A client that cancels a call (or times out) gets its answer or the cancellation; the
// server answers the next call.
func TestCancelledCall(t *testing.T) {
	f := store(t)
	cs := f.server(t)
	for range 5 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		_, _ = cs.CallTool(ctx, &sdk.CallToolParams{Name: "ckpt_blame", Arguments: map[string]any{"session": "big", "section": "⚠️"}})
		cancel()
	}
	var show mcp.ShowOut
	mustCall(t, cs, "ckpt_show", map[string]any{"session": "alpha", "section": "🎯"}, &show)
	if !strings.Contains(show.Content, "Task B") {
		t.Fatalf("after cancelled calls: %+v", show)
	}
}
