package delta

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/internal/golden"
	"github.com/ckpt-dev/ckpt/sections"
)

const (
	deltaCorpus     = "../testdata/corpus"
	deltaClaudeCode = deltaCorpus + "/transcripts/claude-code.jsonl"
	deltaGeneric    = deltaCorpus + "/transcripts/generic.jsonl"
	deltaDailyLog   = deltaCorpus + "/logs/2026-04-01.md"
	deltaSix        = deltaCorpus + "/six/checkpoint.md"
)

// deltaGolden compares got with testdata/delta/name, or rewrites the file under -update.
func deltaGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "delta", name), got)
}

func deltaTime(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// deltaCopy copies src into a temporary directory and returns the copy's path.
func deltaCopy(t *testing.T, src string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func deltaAppend(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func deltaSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func deltaTexts(es []entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Text)
	}
	return out
}

func deltaDump(r transcriptRead) []byte {
	var b bytes.Buffer
	for _, e := range r.Entries {
		fmt.Fprintf(&b, "entry %s %s\n", e.Time.Format(time.RFC3339Nano), e.Text)
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "warning %s\n", w)
	}
	fmt.Fprintf(&b, "next %d\nrestarted %t\n", r.Next, r.Restarted)
	return b.Bytes()
}

func TestReadTranscriptGolden(t *testing.T) {
	tests := []struct {
		name, path   string
		entries      int
		warnings     []string
		contains     []string // in some entry
		lacks        []string // in no entry
		longestRunes int
	}{
		{
			name:     "claude code",
			path:     deltaClaudeCode,
			entries:  6,
			warnings: []string{deltaClaudeCode + ":8: skipped malformed line"},
			contains: []string{
				"user: Implement the SPARSE trigger in checkpoint_manager.py",
				"assistant: I'll start by reading checkpoint_manager.py. [tool: Read]",
			},
			lacks:        []string{"The user wants", "def check_sparse", "Session persistence phase 2"},
			longestRunes: maxRunes,
		},
		{
			// Claude Code's noise, in real shapes: a subagent run with its agent id and one
			// without, /compact and /model as typed, their output and caveat, the compaction
			// summary, a message that only quotes the markup.
			name:    "claude noise",
			path:    "testdata/delta/claude-noise.jsonl",
			entries: 10,
			contains: []string{
				"subagent a3f9c01: Find every code path that writes invoice_ledger (4 messages)",
				"subagent: Run the shadow-read diff for 2026-05-19 and report the row count (2 messages)",
				"user: /compact",
				"user: /model opus",
				"summary: This session is being continued",
				"user: Why does the doc show <command-name>/compact</command-name> in the hook example?",
			},
			lacks: []string{"Caveat:", "Compacted.", "Set model to", "[tool: Grep]", "Diff: 0 rows", "user: This session", "<command-message>"},
		},
		{
			name:     "generic",
			path:     deltaGeneric,
			entries:  3,
			contains: []string{"tool: workspace_watchdog.py verify: 3 files changed", "user: Update AGENTS.md with the HEARTBEAT config"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := readTranscript(tc.path, 0, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			deltaGolden(t, strings.ReplaceAll(tc.name, " ", "-")+".golden", deltaDump(r))
			if len(r.Entries) != tc.entries {
				t.Errorf("got %d entries, want %d:\n%s", len(r.Entries), tc.entries, strings.Join(deltaTexts(r.Entries), "\n"))
			}
			if strings.Join(r.Warnings, "\n") != strings.Join(tc.warnings, "\n") {
				t.Errorf("warnings %q, want %q", r.Warnings, tc.warnings)
			}
			all := strings.Join(deltaTexts(r.Entries), "\n")
			for _, s := range tc.contains {
				if !strings.Contains(all, s) {
					t.Errorf("no entry holds %q", s)
				}
			}
			for _, s := range tc.lacks {
				if strings.Contains(all, s) {
					t.Errorf("an entry holds %q", s)
				}
			}
			longest := ""
			for _, e := range r.Entries {
				if utf8.RuneCountInString(e.Text) > utf8.RuneCountInString(longest) {
					longest = e.Text
				}
			}
			if tc.longestRunes > 0 && (utf8.RuneCountInString(longest) != tc.longestRunes || !strings.HasSuffix(longest, "…")) {
				t.Errorf("longest entry has %d runes, want %d ending in …: %q", utf8.RuneCountInString(longest), tc.longestRunes, longest)
			}
			if size := deltaSize(t, tc.path); r.Next != size || r.Restarted {
				t.Errorf("next %d restarted %t, want %d false", r.Next, r.Restarted, size)
			}
		})
	}
}

func TestReadTranscriptSince(t *testing.T) {
	tests := []struct {
		name, path, since string
		want              int
	}{
		{"zero since reads all", deltaClaudeCode, "", 6},
		{"checkpoint time", deltaClaudeCode, "2026-04-01T22:00:00Z", 3},
		{"strictly after", deltaClaudeCode, "2026-04-01T21:47:03.5Z", 4},
		{"after everything", deltaClaudeCode, "2026-04-02T00:00:00Z", 0},
		{"generic strictly after", deltaGeneric, "2026-04-01T21:55:00Z", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var since time.Time
			if tc.since != "" {
				since = deltaTime(t, tc.since)
			}
			r, err := readTranscript(tc.path, 0, since)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Entries) != tc.want {
				t.Fatalf("got %d entries, want %d: %q", len(r.Entries), tc.want, deltaTexts(r.Entries))
			}
			for _, e := range r.Entries {
				if !e.Time.After(since) {
					t.Errorf("entry at %s is not after %s", e.Time, since)
				}
			}
		})
	}
}

func TestReadTranscriptResume(t *testing.T) {
	path := deltaCopy(t, deltaClaudeCode)
	first, err := readTranscript(path, 0, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	grown := `{"ts":"2026-04-01T22:10:00Z","role":"user","content":"new one"}` + "\n"
	bad := "{broken\n"
	deltaAppend(t, path, grown+bad+`{"ts":"2026-04-01T22:11:00Z","role":"assistant","content":"new two"}`+"\n")

	second, err := readTranscript(path, first.Next, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(deltaTexts(second.Entries), "|"); got != "user: new one|assistant: new two" {
		t.Errorf("resumed entries %q", got)
	}
	wantWarn := fmt.Sprintf("%s: byte %d: skipped malformed line", path, first.Next+int64(len(grown)))
	if len(second.Warnings) != 1 || second.Warnings[0] != wantWarn {
		t.Errorf("warnings %q, want %q", second.Warnings, wantWarn)
	}
	if second.Restarted || second.Next != deltaSize(t, path) {
		t.Errorf("next %d restarted %t, want %d false", second.Next, second.Restarted, deltaSize(t, path))
	}

	third, err := readTranscript(path, second.Next, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(third.Entries) != 0 || len(third.Warnings) != 0 || third.Next != second.Next {
		t.Errorf("read at the end: %d entries, %q, next %d", len(third.Entries), third.Warnings, third.Next)
	}
}

func TestReadTranscriptIncompleteLine(t *testing.T) {
	done := `{"ts":"2026-04-01T22:10:00Z","role":"user","content":"complete"}` + "\n"
	half := `{"ts":"2026-04-01T22:11:00Z","role":"assi`
	path := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(path, []byte(done+half), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := readTranscript(path, 0, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Entries) != 1 || len(r.Warnings) != 0 || r.Next != int64(len(done)) {
		t.Fatalf("got %q %q next %d, want the complete line only and next %d", deltaTexts(r.Entries), r.Warnings, r.Next, len(done))
	}

	again, err := readTranscript(path, r.Next, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Entries) != 0 || len(again.Warnings) != 0 || again.Next != r.Next {
		t.Fatalf("a half line was consumed: %q %q next %d", deltaTexts(again.Entries), again.Warnings, again.Next)
	}

	deltaAppend(t, path, `stant","content":"finished"}`+"\n")
	last, err := readTranscript(path, again.Next, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(deltaTexts(last.Entries), "|"); got != "assistant: finished" || len(last.Warnings) != 0 {
		t.Errorf("completed line read as %q %q", got, last.Warnings)
	}
	if last.Next != deltaSize(t, path) {
		t.Errorf("next %d, want %d", last.Next, deltaSize(t, path))
	}
}

func TestReadTranscriptRestarted(t *testing.T) {
	line := func(min int, text string) string {
		return fmt.Sprintf(`{"ts":"2026-04-01T22:%02d:00Z","role":"user","content":%q}`+"\n", min, text)
	}
	old := line(1, "one") + line(2, "two") + line(3, "three")
	tests := []struct {
		name      string
		now       string
		offset    int64
		want      string
		restarted bool
	}{
		{"truncated", line(9, "fresh") + "oops\n", int64(len(old)), "user: fresh", true},
		{"replaced by a longer file", line(7, "replaced one") + line(8, "replaced two") + line(9, "x"), int64(len(line(1, "one"))), "user: replaced one|user: replaced two|user: x", true},
		{"unchanged at the end", old, int64(len(old)), "", false},
		{"grown", old + line(4, "four"), int64(len(old)), "user: four", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.jsonl")
			if err := os.WriteFile(path, []byte(tc.now), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := readTranscript(path, tc.offset, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(deltaTexts(r.Entries), "|"); got != tc.want || r.Restarted != tc.restarted {
				t.Errorf("got %q restarted %t, want %q %t", got, r.Restarted, tc.want, tc.restarted)
			}
			if r.Next != int64(len(tc.now)) {
				t.Errorf("next %d, want %d", r.Next, len(tc.now))
			}
			// A restarted read counts lines from the start again.
			for _, w := range r.Warnings {
				if !strings.HasPrefix(w, path+":2: ") {
					t.Errorf("warning %q does not name line 2", w)
				}
			}
		})
	}
	if _, err := readTranscript(filepath.Join(t.TempDir(), "missing.jsonl"), 0, time.Time{}); err == nil {
		t.Error("a missing transcript is not an error")
	}
	if _, err := readTranscript(deltaGeneric, -1, time.Time{}); err == nil {
		t.Error("a negative offset is not an error")
	}
}

func TestReadTranscriptLines(t *testing.T) {
	tests := []struct {
		name, line string
		want       string // entry text; "" for none
		bad        bool
	}{
		{"blank line", "   \n", "", false},
		{"not json", "not json {{{\n", "", true},
		{"json array", "[1,2]\n", "", true},
		{"null", "null\n", "", true},
		{"empty object", "{}\n", "", true},
		{"summary", `{"type":"summary","summary":"s"}`, "", false},
		{"user without message", `{"type":"user","timestamp":"2026-04-01T22:00:00Z"}`, "", true},
		{"bad timestamp", `{"type":"user","timestamp":"yesterday","message":{"role":"user","content":"x"}}`, "", true},
		{"missing timestamp", `{"type":"user","message":{"role":"user","content":"x"}}`, "", true},
		{"content not text", `{"type":"user","timestamp":"2026-04-01T22:00:00Z","message":{"content":42}}`, "", true},
		{"string content", `{"type":"user","timestamp":"2026-04-01T22:00:00Z","message":{"role":"user","content":"  hi\nthere "}}`, "user: hi there", false},
		{"tool results only", `{"type":"user","timestamp":"2026-04-01T22:00:00Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"out"}]}}`, "", false},
		{"tool call only", `{"type":"assistant","timestamp":"2026-04-01T22:00:00Z","message":{"content":[{"type":"tool_use","id":"t","name":"Bash","input":{"command":"ls"}}]}}`, "assistant: [tool: Bash]", false},
		{"thinking only", `{"type":"assistant","timestamp":"2026-04-01T22:00:00Z","message":{"content":[{"type":"thinking","thinking":"hmm"}]}}`, "", false},
		{"blocks in order", `{"type":"assistant","timestamp":"2026-04-01T22:00:00Z","message":{"content":[{"type":"tool_use","name":"Grep"},{"type":"text","text":"found it"},{"type":"tool_use","name":"Edit"}]}}`, "assistant: [tool: Grep] found it [tool: Edit]", false},
		{"harness notice", `{"type":"user","isMeta":true,"timestamp":"2026-04-01T22:00:00Z","message":{"role":"user","content":"Caveat: local command"}}`, "", false},
		{"command as typed", `{"type":"user","timestamp":"2026-04-01T22:00:00Z","message":{"role":"user","content":"<command-name>/compact</command-name>\n<command-message>compact</command-message>\n<command-args></command-args>"}}`, "user: /compact", false},
		{"command with args, name without slash", `{"type":"user","timestamp":"2026-04-01T22:00:00Z","message":{"role":"user","content":"<command-message>review</command-message><command-name>review</command-name><command-args>PR 4410</command-args>"}}`, "user: /review PR 4410", false},
		{"command in a text block", `{"type":"user","timestamp":"2026-04-01T22:00:00Z","message":{"role":"user","content":[{"type":"text","text":"<command-name>/clear</command-name>"}]}}`, "user: /clear", false},
		{"command on a system line", `{"type":"system","subtype":"local_command","timestamp":"2026-04-01T22:00:00Z","content":"<command-name>/model</command-name><command-args>opus</command-args>"}`, "user: /model opus", false},
		{"command output", `{"type":"user","timestamp":"2026-04-01T22:00:00Z","message":{"role":"user","content":"<local-command-stdout>Compacted.</local-command-stdout>"}}`, "", false},
		{"command output on a system line", `{"type":"system","subtype":"local_command","timestamp":"2026-04-01T22:00:00Z","content":"<local-command-stdout></local-command-stdout>"}`, "", false},
		{"other system line", `{"type":"system","subtype":"compact_boundary","timestamp":"2026-04-01T22:00:00Z","content":"Conversation compacted"}`, "", false},
		{"markup quoted in a message", `{"type":"user","timestamp":"2026-04-01T22:00:00Z","message":{"role":"user","content":"what does <command-name> hold?"}}`, "user: what does <command-name> hold?", false},
		{"markup then text", `{"type":"user","timestamp":"2026-04-01T22:00:00Z","message":{"role":"user","content":"<command-name>/x</command-name> and more"}}`, "user: <command-name>/x</command-name> and more", false},
		{"compaction summary", `{"type":"user","isCompactSummary":true,"timestamp":"2026-04-01T22:00:00Z","message":{"role":"user","content":"This session is being continued"}}`, "summary: This session is being continued", false},
		{"generic ts", `{"ts":"2026-04-01T22:00:00Z","role":"tool","content":"done"}`, "tool: done", false},
		{"generic timestamp key", `{"timestamp":"2026-04-01T22:00Z","role":"user","content":"hi"}`, "user: hi", false},
		{"generic unix seconds", `{"ts":1775080800,"role":"user","content":"hi"}`, "user: hi", false},
		{"generic unix milliseconds", `{"ts":1775080800000,"role":"user","content":"hi"}`, "user: hi", false},
		{"generic without time", `{"role":"user","content":"hi"}`, "", true},
		{"generic empty content", `{"ts":"2026-04-01T22:00:00Z","role":"user","content":""}`, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, ok, bad := parseTranscriptLine([]byte(tc.line))
			if e.sidechain {
				t.Errorf("a main conversation line marked as a subagent's")
			}
			if bad != tc.bad {
				t.Errorf("malformed = %t, want %t", bad, tc.bad)
			}
			got := ""
			if ok {
				got = e.Text
				if want := deltaTime(t, "2026-04-01T22:00:00Z"); !e.Time.Equal(want) {
					t.Errorf("time %s, want %s", e.Time, want)
				}
			}
			if got != tc.want {
				t.Errorf("entry %q, want %q", got, tc.want)
			}
		})
	}
}

func TestReadDailyLog(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, path, since string
		want              []string // "HH:MM text", on 2026-04-01 unless dated
		warnings          []string
		err               string
	}{
		{
			name: "corpus",
			path: deltaDailyLog,
			want: []string{
				"2026-04-01T21:40Z session started on branch feat/sparse",
				"2026-04-01T21:50Z ran workspace_watchdog.py verify: 3 files changed",
				"2026-04-01T21:55Z checkpoint_manager.py check-sparse triggered a SPARSE checkpoint",
				"2026-04-01T22:00Z user asked to update AGENTS.md HEARTBEAT config",
			},
		},
		{
			name:  "corpus since",
			path:  deltaDailyLog,
			since: "2026-04-01T21:50:00Z",
			want: []string{
				"2026-04-01T21:55Z checkpoint_manager.py check-sparse triggered a SPARSE checkpoint",
				"2026-04-01T22:00Z user asked to update AGENTS.md HEARTBEAT config",
			},
		},
		{
			name: "date from heading, crlf, other lines ignored",
			path: write("today.md", "# 2026-04-02 Thursday\r\n\r\nsome prose\r\n- 9:05 early start\r\n- no time here\r\n-  10:00 two spaces\r\n"),
			want: []string{"2026-04-02T09:05Z early start"},
		},
		{
			name:     "impossible time",
			path:     write("2026-04-03.md", "- 24:00 too late\n- 23:59 fine\n"),
			want:     []string{"2026-04-03T23:59Z fine"},
			warnings: []string{filepath.Join(dir, "2026-04-03.md") + ":1: bad time 24:00"},
		},
		{
			name: "no date",
			path: write("notes.md", "- 21:40 something\n"),
			err:  filepath.Join(dir, "notes.md") + ": no date",
		},
		{
			name: "missing file",
			path: filepath.Join(dir, "2026-04-09.md"),
			err:  "read daily log " + filepath.Join(dir, "2026-04-09.md"),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var since time.Time
			if tc.since != "" {
				since = deltaTime(t, tc.since)
			}
			es, warns, err := readDailyLog(tc.path, since)
			if tc.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
					t.Fatalf("error %v, want one starting %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range es {
				got = append(got, checkpoint.FormatTime(e.Time)+" "+e.Text)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("entries\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if strings.Join(warns, "\n") != strings.Join(tc.warnings, "\n") {
				t.Errorf("warnings %q, want %q", warns, tc.warnings)
			}
		})
	}
}

func TestFormatDeltaEntry(t *testing.T) {
	at := deltaTime(t, "2026-04-01T21:50:41.9Z")
	ascii := func(n int) string { return strings.Repeat("a", n) }
	han := strings.Repeat("记得测试", 150) // 600 runes of 3 bytes each
	tests := []struct {
		name string
		e    entry
		want string
	}{
		{"plain", entry{at, "user: hi"}, "**[2026-04-01T21:50Z]** user: hi"},
		{"other zone", entry{at.In(time.FixedZone("CEST", 2*3600)), "x"}, "**[2026-04-01T21:50Z]** x"},
		{"newlines and runs of space", entry{at, " line one\r\n\n\tline  two \u00a0 end\n"}, "**[2026-04-01T21:50Z]** line one line two end"},
		{"control characters", entry{at, "a\x00\x1b[31mb"}, "**[2026-04-01T21:50Z]** a [31mb"},
		{"empty text", entry{at, " \n "}, "**[2026-04-01T21:50Z]**"},
		{"exactly 500", entry{at, ascii(500)}, "**[2026-04-01T21:50Z]** " + ascii(500)},
		{"501 cut", entry{at, ascii(501)}, "**[2026-04-01T21:50Z]** " + ascii(499) + "…"},
		{"chinese cut at 500 runes", entry{at, han}, "**[2026-04-01T21:50Z]** " + string([]rune(han)[:499]) + "…"},
		{"cut counts collapsed space", entry{at, ascii(498) + "\n\n\n" + ascii(10)}, "**[2026-04-01T21:50Z]** " + ascii(498) + " " + "…"},
		{"invalid utf-8", entry{at, "ok\xff\xfeend"}, "**[2026-04-01T21:50Z]** ok\uFFFD\uFFFDend"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := formatEntry(tc.e)
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
			text := strings.TrimPrefix(strings.TrimPrefix(got, "**[2026-04-01T21:50Z]**"), " ")
			if n := utf8.RuneCountInString(text); n > maxRunes || !utf8.ValidString(got) || strings.ContainsAny(got, "\r\n") {
				t.Errorf("text of %d runes, valid %t, one line %t", n, utf8.ValidString(got), !strings.ContainsAny(got, "\r\n"))
			}
		})
	}
}

const deltaHeading = "### 📡 Recovered Delta\n"

func TestUpdateDeltaSection(t *testing.T) {
	const (
		meta0 = "_delta_since_last: 2026-04-01T21:45Z → 2026-04-01T22:00Z_"
		meta1 = "_delta_since_last: 2026-04-01T22:00Z → 2026-04-01T22:10Z_"
		e50   = "**[2026-04-01T21:50Z]** Ran `workspace_watchdog.py verify`, 3 files changed..."
		e55   = "**[2026-04-01T21:55Z]** Called `checkpoint_manager.py check-sparse`, SPARSE checkpoint triggered"
	)
	corpus := meta0 + "\n\n" + e50 + "\n" + e55 + "\n\n"
	from, to := deltaTime(t, "2026-04-01T22:00:00Z"), deltaTime(t, "2026-04-01T22:10:00Z")
	at := func(s string) time.Time { return deltaTime(t, "2026-04-01T"+s+"Z") }
	numbered := func(n int) []entry {
		var es []entry
		for i := 1; i <= n; i++ {
			es = append(es, entry{at(fmt.Sprintf("22:%02d:00", i)), fmt.Sprintf("entry %d", i)})
		}
		return es
	}
	entryLine := func(i int) string { return fmt.Sprintf("**[2026-04-01T22:%02dZ]** entry %d\n", i, i) }
	// fiveFit is the section with entries 1 to 5; three fit in its size less two lines.
	fiveFit := deltaHeading + meta1 + "\n\n" + entryLine(1) + entryLine(2) + entryLine(3) + entryLine(4) + entryLine(5) + "\n"
	threeFit := deltaHeading + meta1 + "\n\n" + entryLine(3) + entryLine(4) + entryLine(5) + "\n"

	tests := []struct {
		name               string
		heading, directive string
		body               string
		entries            []entry
		from, to           time.Time
		limit              int
		want               string // the whole section
	}{
		{
			name:    "add to the corpus section in time order",
			body:    corpus,
			entries: []entry{{at("22:03:30"), "user: Also update AGENTS.md"}, {at("21:52:10"), "assistant: ran the tests"}},
			limit:   sectionLimit,
			want: deltaHeading + meta1 + "\n\n" + e50 + "\n" + "**[2026-04-01T21:52Z]** assistant: ran the tests\n" + e55 + "\n" +
				"**[2026-04-01T22:03Z]** user: Also update AGENTS.md\n\n",
		},
		{
			name: "same line is not added twice",
			body: corpus,
			entries: []entry{
				{at("21:50:30"), "Ran `workspace_watchdog.py verify`, 3 files changed..."},
				{at("22:01:00"), "twice"}, {at("22:01:59"), "twice"},
			},
			limit: sectionLimit,
			want:  deltaHeading + meta1 + "\n\n" + e50 + "\n" + e55 + "\n" + "**[2026-04-01T22:01Z]** twice\n\n",
		},
		{
			name:  "nothing new leaves the section as it was",
			body:  corpus,
			from:  at("21:45:00"),
			to:    at("22:00:00"),
			limit: sectionLimit,
			want:  deltaHeading + corpus,
		},
		{
			name:    "limit that fits all",
			body:    meta0 + "\n\n",
			entries: numbered(5),
			limit:   len(fiveFit),
			want:    fiveFit,
		},
		{
			name:    "limit drops the oldest",
			body:    meta0 + "\n\n" + entryLine(1) + entryLine(2) + "\n",
			entries: numbered(5)[2:],
			limit:   len(fiveFit) - 1,
			want:    deltaHeading + meta1 + "\n\n" + entryLine(2) + entryLine(3) + entryLine(4) + entryLine(5) + "\n",
		},
		{
			name:    "limit drops old and new entries alike",
			body:    meta0 + "\n\n" + entryLine(4) + "\n",
			entries: []entry{numbered(5)[4], numbered(5)[0], numbered(5)[2], numbered(5)[1]},
			limit:   len(threeFit),
			want:    threeFit,
		},
		{
			name:    "limit smaller than the heading",
			body:    corpus,
			entries: numbered(2),
			limit:   10,
			want:    deltaHeading + meta1 + "\n\n",
		},
		{
			name:    "no limit",
			body:    meta0 + "\n\n",
			entries: numbered(5),
			limit:   0,
			want:    fiveFit,
		},
		{
			name:    "missing meta line is inserted",
			body:    "\n",
			entries: numbered(1),
			limit:   sectionLimit,
			want:    deltaHeading + meta1 + "\n\n" + entryLine(1) + "\n",
		},
		{
			name:  "missing meta line in an empty section",
			body:  "\n",
			limit: sectionLimit,
			want:  deltaHeading + meta1 + "\n\n",
		},
		{
			name:    "meta line moves under the heading, other lines stay before the entries",
			body:    "see checkpoint-delta.md for older entries\n" + meta0 + "\n\n" + entryLine(1) + "_a note_\n\n",
			entries: numbered(2)[1:],
			limit:   sectionLimit,
			want:    deltaHeading + meta1 + "\n\nsee checkpoint-delta.md for older entries\n_a note_\n\n" + entryLine(1) + entryLine(2) + "\n",
		},
		{
			name:      "directive stays",
			directive: "_what came after the checkpoint_\n",
			body:      meta0 + "\n\n",
			entries:   numbered(1),
			limit:     sectionLimit,
			want:      deltaHeading + "_what came after the checkpoint_\n" + meta1 + "\n\n" + entryLine(1) + "\n",
		},
		{
			name:    "crlf stays crlf",
			heading: strings.Replace(deltaHeading, "\n", "\r\n", 1),
			body:    strings.ReplaceAll(corpus, "\n", "\r\n"),
			entries: numbered(1),
			limit:   sectionLimit,
			want:    strings.ReplaceAll(deltaHeading+meta1+"\n\n"+e50+"\n"+e55+"\n"+entryLine(1)+"\n", "\n", "\r\n"),
		},
		{
			name:    "no final newline",
			heading: strings.TrimSuffix(deltaHeading, "\n"),
			entries: numbered(1),
			limit:   sectionLimit,
			want:    deltaHeading + meta1 + "\n\n" + strings.TrimSuffix(entryLine(1), "\n"),
		},
		{
			name:    "closing rule stays last",
			body:    meta0 + "\n\n" + entryLine(1) + "\n---\n",
			entries: numbered(2)[1:],
			limit:   sectionLimit,
			want:    deltaHeading + meta1 + "\n\n" + entryLine(1) + entryLine(2) + "\n---\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			heading := tc.heading
			if heading == "" {
				heading = deltaHeading
			}
			f, tt := tc.from, tc.to
			if f.IsZero() {
				f, tt = from, to
			}
			sec := sections.Section{ID: "📡", Line: 27, Heading: []byte(heading), Body: []byte(tc.body)}
			if tc.directive != "" {
				sec.Directive = []byte(tc.directive)
			}
			before := string(sec.Bytes())
			got := updateSection(sec, tc.entries, f, tt, tc.limit)
			if string(got.Bytes()) != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got.Bytes(), tc.want)
			}
			if tc.limit > 0 && got.Len() > tc.limit && len(deltaHeading)+len(meta1)+2 <= tc.limit {
				t.Errorf("section is %d bytes, over the limit %d", got.Len(), tc.limit)
			}
			if got.ID != sec.ID || got.Line != sec.Line {
				t.Errorf("id %q line %d, want %q %d", got.ID, got.Line, sec.ID, sec.Line)
			}
			if string(sec.Bytes()) != before {
				t.Error("the input section was changed")
			}
		})
	}
}

// TestUpdateDeltaSectionCorpus runs a sync's delta step on the corpus: the six checkpoint
// gets what the transcript and the daily log hold after its _last_updated.
func TestUpdateDeltaSectionCorpus(t *testing.T) {
	src, err := os.ReadFile(deltaSix)
	if err != nil {
		t.Fatal(err)
	}
	doc := sections.Parse(src, sections.Options{Level: 3})
	v, ok := doc.MetaValue("last_updated")
	if !ok {
		t.Fatal("no _last_updated_ in the corpus checkpoint")
	}
	since, err := time.Parse(checkpoint.TimeFormat, v)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := readTranscript(deltaClaudeCode, 0, since)
	if err != nil {
		t.Fatal(err)
	}
	logged, _, err := readDailyLog(deltaDailyLog, since)
	if err != nil {
		t.Fatal(err)
	}
	entries := append(tr.Entries, logged...)
	if len(entries) != 3 {
		t.Fatalf("got %d entries after %s, want 3: %q", len(entries), v, deltaTexts(entries))
	}
	i := doc.Index("📡")
	if i < 0 {
		t.Fatal("no 📡 section in the corpus checkpoint")
	}
	old := sections.Parse(src, sections.Options{Level: 3})
	doc.Sections[i] = updateSection(doc.Sections[i], entries, since, deltaTime(t, "2026-04-01T22:07:00Z"), sectionLimit)
	out := doc.Render()
	deltaGolden(t, "six-updated.md", out)

	again := sections.Parse(out, sections.Options{Level: 3})
	if len(again.Sections) != len(old.Sections) {
		t.Fatalf("%d sections after the update, want %d", len(again.Sections), len(old.Sections))
	}
	for j := range old.Sections {
		if j != i && !bytes.Equal(again.Sections[j].Bytes(), old.Sections[j].Bytes()) {
			t.Errorf("section %s changed", old.Sections[j].ID)
		}
	}
	if got, _ := again.MetaValue("delta_since_last"); got != "2026-04-01T22:00Z → 2026-04-01T22:07Z" {
		t.Errorf("_delta_since_last_ is %q", got)
	}
	if n := again.Sections[i].Len(); n > sectionLimit {
		t.Errorf("📡 is %d bytes, over %d", n, sectionLimit)
	}
}

func FuzzUpdateDeltaSection(f *testing.F) {
	corpus, err := os.ReadFile(deltaSix)
	if err != nil {
		f.Fatal(err)
	}
	body := sections.Parse(corpus, sections.Options{Level: 3}).Section("📡").Body
	f.Add(deltaHeading, body, "user: hi", int64(1775080800), 2048)
	f.Add(deltaHeading, body, strings.Repeat("长", 700), int64(1775080800), 300)
	f.Add("### 📡 Recovered Delta\r\n", []byte("\r\n**[2026-04-01T21:50Z]** a\r\n\r\n---\r\n"), "x\ny", int64(0), 90)
	f.Add("### 📡", []byte(nil), "", int64(-5), 1)
	f.Add(deltaHeading, []byte("**[2026-04-01T21:50Z]**\n---\n_delta_since_last: x_\nnote\n\n \n"), "z", int64(1e9), 0)
	f.Add("\r", []byte(nil), "0", int64(1775080800), 2048) // a heading cut after its "\r"
	f.Add("\n", []byte("0\r\r"), "0", int64(0), -1)        // stray carriage returns
	f.Fuzz(func(t *testing.T, heading string, body []byte, text string, unix int64, limit int) {
		h, _, cut := strings.Cut(heading, "\n")
		if cut {
			h += "\n"
		} else {
			body = nil // a heading without a line ending ends the file
		}
		// Keep times within four-digit years, as FormatTime writes them.
		at := time.Unix(int64(uint64(unix)%(1<<34)), 0)
		from, to := time.Unix(1775080800, 0), time.Unix(1775081400, 0)
		sec := sections.Section{ID: "📡", Heading: []byte(h), Body: body}
		got := updateSection(sec, []entry{{at, text}}, from, to, limit)

		if got.HeadingLine() != sec.HeadingLine() {
			t.Fatalf("heading %q became %q", sec.HeadingLine(), got.HeadingLine())
		}
		meta := "_delta_since_last: " + checkpoint.FormatTime(from) + " → " + checkpoint.FormatTime(to) + "_"
		if !bytes.HasPrefix(got.Body, []byte(meta)) {
			t.Fatalf("body does not start with the meta line: %q", got.Body)
		}
		bare := updateSection(sec, nil, from, to, 1) // every entry dropped
		if limit > 0 && bare.Len() <= limit && got.Len() > limit {
			t.Fatalf("section of %d bytes over the limit %d (%d without entries)", got.Len(), limit, bare.Len())
		}
		line := formatEntry(entry{at, text})
		if limit <= 0 && !bytes.Contains(got.Body, []byte(line)) {
			t.Fatalf("entry %q missing without a limit: %q", line, got.Body)
		}
		if again := updateSection(got, nil, from, to, limit); !bytes.Equal(again.Bytes(), got.Bytes()) {
			t.Fatalf("not stable:\n%q\n%q", got.Bytes(), again.Bytes())
		}
	})
}

// deltaBenchTranscript writes a Claude Code transcript of about size bytes: turns of a user
// request, an assistant reply with thinking, text and a tool call, a large tool result and
// a short assistant summary.
func deltaBenchTranscript(b *testing.B, size int64) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "transcript.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	t0 := time.Date(2026, 4, 1, 8, 0, 0, 0, time.UTC)
	output := strings.Repeat("func check_sparse(path string) error {\n\treturn nil\n}\n", 70)
	var written int64
	enc := func(v any) {
		line, err := json.Marshal(v)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := w.Write(append(line, '\n'))
		written += int64(n)
	}
	type obj = map[string]any
	for i := 0; written < size; i++ {
		at := func(k int) string { return t0.Add(time.Duration(4*i+k) * time.Second).Format(time.RFC3339Nano) }
		base := func(typ string, k int) obj {
			return obj{"type": typ, "uuid": fmt.Sprintf("%s-%d-%d", typ, i, k), "sessionId": "ece6c795-b427-439f-8244-cfdeac8f3b55",
				"timestamp": at(k), "cwd": "/home/dev/proj", "version": "2.1.0", "gitBranch": "feat/sparse"}
		}
		u := base("user", 0)
		u["message"] = obj{"role": "user", "content": fmt.Sprintf("Step %d: run the sparse checkpoint tests again and fix what fails in checkpoint_manager.py", i)}
		enc(u)
		a := base("assistant", 1)
		a["message"] = obj{"role": "assistant", "model": "some-model", "content": []obj{
			{"type": "thinking", "thinking": strings.Repeat("The test run shows the trigger fires too early. ", 8), "signature": strings.Repeat("c2ln", 40)},
			{"type": "text", "text": fmt.Sprintf("Running the tests for step %d; the SPARSE trigger should fire after 15 minutes of silence, not 5.", i)},
			{"type": "tool_use", "id": fmt.Sprintf("toolu_%d", i), "name": "Bash", "input": obj{"command": "go test ./...", "description": "run the tests"}},
		}}
		enc(a)
		r := base("user", 2)
		r["message"] = obj{"role": "user", "content": []obj{{"type": "tool_result", "tool_use_id": fmt.Sprintf("toolu_%d", i), "content": output}}}
		enc(r)
		s := base("assistant", 3)
		s["message"] = obj{"role": "assistant", "content": []obj{{"type": "text", "text": "Tests pass; the trigger now waits 15 minutes."}}}
		enc(s)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

const deltaBenchSize = 50 << 20

// BenchmarkReadTranscriptTail is a sparse sync: a 50 MB transcript that grew by 100 KB.
func BenchmarkReadTranscriptTail(b *testing.B) {
	path := deltaBenchTranscript(b, deltaBenchSize)
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	fi, err := f.Stat()
	if err != nil {
		b.Fatal(err)
	}
	// Resume where an earlier read stopped: right after a line ending.
	buf := make([]byte, 64<<10)
	off := fi.Size() - 100<<10
	n, _ := f.ReadAt(buf, off)
	nl := bytes.IndexByte(buf[:n], '\n')
	f.Close()
	if nl < 0 {
		b.Fatal("no line ending in the tail")
	}
	off += int64(nl) + 1
	b.SetBytes(fi.Size() - off)
	b.ReportAllocs()
	for b.Loop() {
		r, err := readTranscript(path, off, time.Time{})
		if err != nil || r.Restarted || len(r.Entries) == 0 {
			b.Fatalf("read: %v restarted %t, %d entries", err, r.Restarted, len(r.Entries))
		}
	}
}

// BenchmarkReadTranscriptFull reads the same 50 MB transcript from the start, for comparison.
func BenchmarkReadTranscriptFull(b *testing.B) {
	path := deltaBenchTranscript(b, deltaBenchSize)
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	for b.Loop() {
		r, err := readTranscript(path, 0, time.Time{})
		if err != nil || len(r.Entries) == 0 {
			b.Fatalf("read: %v, %d entries", err, len(r.Entries))
		}
	}
}

// TestReadTranscriptBounds reads with a small size bound (and a deadline): the read stops
// after the last complete line inside the bound and says so, the next read goes on from
// there, and a line longer than the whole bound is skipped rather than read forever.
func TestReadTranscriptBounds(t *testing.T) {
	line := func(min int, text string) string {
		return fmt.Sprintf(`{"ts":"2026-04-01T22:%02d:00Z","role":"user","content":%q}`+"\n", min, text)
	}
	a, b, c := line(1, "one"), line(2, "two"), line(3, "three")
	huge := `{"ts":"2026-04-01T22:04:00Z","role":"user","content":"` + strings.Repeat("x", 300) + `"}` + "\n"
	future := time.Now().Add(time.Hour)
	for _, tc := range []struct {
		name      string
		content   string
		offset    int64
		limit     int64
		deadline  time.Time
		want      string
		next      int64
		truncated bool
		warning   string
	}{
		{"everything inside the bound", a + b, 0, 1000, future, "user: one|user: two", int64(len(a + b)), false, ""},
		{"cut after a complete line", a + b + c, 0, int64(len(a) + len(b)/2), future, "user: one", int64(len(a)), true, "read 0 MiB past byte 0; the next sync reads on"},
		{"resumed from the cut", a + b + c, int64(len(a)), int64(len(b) + len(c)), future, "user: two|user: three", int64(len(a + b + c)), false, ""},
		{"a line longer than the bound is skipped", a + huge + c, int64(len(a)), 100, future, "", int64(len(a + huge)), true, fmt.Sprintf("byte %d: skipped a line longer than 0 MiB", len(a))},
		{"an unfinished line longer than the bound waits", a + strings.TrimSuffix(huge, "\n"), int64(len(a)), 100, future, "", int64(len(a)), true, "read 0 MiB past byte"},
		{"past the deadline", a + b, 0, 1000, time.Now().Add(-time.Second), "", 0, true, "read stopped at byte 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.jsonl")
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := readTranscriptBounded(path, tc.offset, time.Time{}, tc.limit, tc.deadline)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(deltaTexts(r.Entries), "|"); got != tc.want || r.Next != tc.next || r.Truncated != tc.truncated {
				t.Errorf("got %q next %d truncated %t, want %q %d %t", got, r.Next, r.Truncated, tc.want, tc.next, tc.truncated)
			}
			if tc.warning == "" && len(r.Warnings) > 0 || tc.warning != "" && (len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], tc.warning)) {
				t.Errorf("warnings %q, want one with %q", r.Warnings, tc.warning)
			}
		})
	}
}

// TestReadTranscriptRefusesNonRegular: a directory or a device is refused at once with
// errNotRegular, and a missing file is fs.ErrNotExist.
func TestReadTranscriptRefusesNonRegular(t *testing.T) {
	paths := []string{t.TempDir()}
	if fi, err := os.Stat(os.DevNull); err == nil && !fi.Mode().IsRegular() {
		paths = append(paths, os.DevNull)
	}
	for _, p := range paths {
		if _, err := readTranscript(p, 0, time.Time{}); !errors.Is(err, errNotRegular) || !strings.HasPrefix(err.Error(), p+": not a regular file") {
			t.Errorf("ReadTranscript(%s) = %v, want %v", p, err, errNotRegular)
		}
	}
	missing := filepath.Join(t.TempDir(), "gone.jsonl")
	if _, err := readTranscript(missing, 0, time.Time{}); !errors.Is(err, fs.ErrNotExist) || err.Error() != missing+": no such transcript" {
		t.Errorf("missing: %v", err)
	}
}

// TestSubagentRunAcrossReads: a subagent run that a sync cut in two is summarised by each
// read, as one entry each, under its agent id; lines of two runs interleaved stay apart.
func TestSubagentRunAcrossReads(t *testing.T) {
	side := func(agent, parent, uuid string, min int, text string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		return fmt.Sprintf(`{"parentUuid":%s,"isSidechain":true,"agentId":%q,"type":"assistant","uuid":%q,"timestamp":"2026-05-20T09:%02d:00Z","message":{"role":"assistant","content":%q}}`+"\n", p, agent, uuid, min, text)
	}
	path := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(path, []byte(side("a1", "", "x1", 1, "audit refunds.go")+side("b2", "", "y1", 2, "audit ledger.go")+side("a1", "x1", "x2", 3, "refunds ok")), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := readTranscript(path, 0, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(deltaTexts(r.Entries), "\n"); got != "subagent a1: audit refunds.go (2 messages)\nsubagent b2: audit ledger.go (1 message)" {
		t.Errorf("first read:\n%s", got)
	}
	deltaAppend(t, path, side("b2", "y1", "y2", 4, "ledger ok"))
	r, err = readTranscript(path, r.Next, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(deltaTexts(r.Entries), "\n"); got != "subagent b2: ledger ok (1 message)" {
		t.Errorf("second read:\n%s", got)
	}
}
