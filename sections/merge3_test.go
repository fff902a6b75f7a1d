package sections

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var updateMerge3 = flag.Bool("update-merge3", false, "rewrite the want part of testdata/merge3/*.txt")

var (
	sixOrder    = []ID{"🎯", "📋", "✅", "🔑", "📡", "⚠️"}
	elevenOrder = []ID{"§1", "§2", "§3", "§4", "§5", "§6", "§7", "§8", "§9", "§10", "§11"}
	ckptNewest  = []string{"last_updated", "session_id", "delta_since_last"}
)

// TestMerge3Exact pins the whole result for small inputs.
func TestMerge3Exact(t *testing.T) {
	for _, tc := range []struct {
		name               string
		base, ours, theirs string
		opts               MergeOptions
		want               string
		status             MergeStatus
		conflicts          string // "id kind start-end", comma separated
		outcomes           string // "id=outcome", comma separated, in Sections order
	}{
		{
			name: "different lines of the preamble",
			base: "a\nb\nc\n", ours: "A\nb\nc\n", theirs: "a\nb\nC\n",
			want: "A\nb\nC\n", status: MergeMerged,
			outcomes: "preamble=merged",
		},
		{
			name: "adjacent lines both apply",
			base: "a\nb\nc\nd\n", ours: "a\nB\nc\nd\n", theirs: "a\nb\nC\nd\n",
			want: "a\nB\nC\nd\n", status: MergeMerged,
		},
		{
			name: "insertion before the other side's change",
			base: "a\nb\nc\n", ours: "a\nnew\nb\nc\n", theirs: "a\nB\nc\n",
			want: "a\nnew\nB\nc\n", status: MergeMerged,
		},
		{
			name: "same deletion on both sides",
			base: "a\nb\nc\n", ours: "a\nc\nx\n", theirs: "y\na\nc\n",
			want: "y\na\nc\nx\n", status: MergeMerged,
		},
		{
			name: "insertions at the same place conflict",
			base: "a\nb\n", ours: "a\no\nb\n", theirs: "a\nt\nb\n",
			want:   "a\n<<<<<<< ours\no\n=======\nt\n>>>>>>> theirs\nb\n",
			status: MergeConflict, conflicts: "preamble content 2-6",
		},
		{
			name: "shared lines stay outside the markers",
			base: "a\nb\n", ours: "a\nx\no\ny\nb\n", theirs: "a\nx\nt\ny\nb\n",
			want:   "a\nx\n<<<<<<< ours\no\n=======\nt\n>>>>>>> theirs\ny\nb\n",
			status: MergeConflict, conflicts: "preamble content 3-7",
		},
		{
			name: "deleted against changed line",
			base: "a\nb\nc\n", ours: "a\nc\n", theirs: "a\nB\nc\n",
			want:   "a\n<<<<<<< ours\n=======\nB\n>>>>>>> theirs\nc\n",
			status: MergeConflict, conflicts: "preamble content 2-5",
		},
		{
			name: "labels",
			base: "a\n", ours: "o\n", theirs: "t\n",
			opts:   MergeOptions{OursLabel: "HEAD", TheirsLabel: "origin/main"},
			want:   "<<<<<<< HEAD\no\n=======\nt\n>>>>>>> origin/main\n",
			status: MergeConflict, conflicts: "preamble content 1-5",
		},
		{
			name:     "sections changed on different sides",
			base:     "# T\n## A\na\n## B\nb\n",
			ours:     "# T\n## A\na2\n## B\nb\n",
			theirs:   "# T\n## A\na\n## B\nb2\n",
			want:     "# T\n## A\na2\n## B\nb2\n",
			status:   MergeMerged,
			outcomes: "preamble=unchanged,a=ours,b=theirs",
		},
		{
			name:      "conflict inside a section",
			base:      "## A\nx\n## B\nb\n",
			ours:      "## A\no\n## B\nb\n",
			theirs:    "## A\nt\n## B\nb2\n",
			want:      "## A\n<<<<<<< ours\no\n=======\nt\n>>>>>>> theirs\n## B\nb2\n",
			status:    MergeConflict,
			conflicts: "a content 2-6",
			outcomes:  "preamble=unchanged,a=conflict,b=theirs",
		},
		{
			name:      "heading changed differently keeps ours",
			base:      "## 🎯 Task\nx\ny\n",
			ours:      "## 🎯 Task A\nX\ny\n",
			theirs:    "## 🎯 Task B\nx\nY\n",
			want:      "## 🎯 Task A\nX\nY\n",
			status:    MergeConflict,
			conflicts: "🎯 heading 1-1",
		},
		{
			name:     "heading changed on one side",
			base:     "## 🎯 Task\nx\ny\n",
			ours:     "## 🎯 Task\nX\ny\n",
			theirs:   "## 🎯 Current Task\nx\nY\n",
			want:     "## 🎯 Current Task\nX\nY\n",
			status:   MergeMerged,
			outcomes: "preamble=unchanged,🎯=merged",
		},
		{
			name:      "directive changed differently",
			base:      "## §1 A\n_d_\nx\ny\n",
			ours:      "## §1 A\n_ours_\nX\ny\n",
			theirs:    "## §1 A\n_theirs_\nx\nY\n",
			want:      "## §1 A\n_ours_\nX\nY\n",
			status:    MergeConflict,
			conflicts: "§1 directive 2-2",
		},
		{
			name:      "directive dropped by ours and changed by theirs",
			base:      "## §1 A\n_d_\nx\ny\n",
			ours:      "## §1 A\nX\ny\n",
			theirs:    "## §1 A\n_theirs_\nx\nY\n",
			want:      "## §1 A\n_theirs_\nX\nY\n",
			status:    MergeConflict,
			conflicts: "§1 directive 2-2",
		},
		{
			name:     "deleted on one side, unchanged on the other",
			base:     "## A\na\n## B\nb\n",
			ours:     "## B\nb\n",
			theirs:   "## A\na\n## B\nb2\n",
			want:     "## B\nb2\n",
			status:   MergeMerged,
			outcomes: "preamble=unchanged,b=theirs,a=removed",
		},
		{
			name:      "modify/delete keeps the modified section",
			base:      "## A\na\n## B\nb\n",
			ours:      "## A\na2\n## B\nb\n",
			theirs:    "## B\nb2\n",
			want:      "## A\na2\n## B\nb2\n",
			status:    MergeConflict,
			conflicts: "a modify/delete 1-2",
			outcomes:  "preamble=unchanged,a=conflict,b=theirs",
		},
		{
			name:     "deleted on both sides",
			base:     "## A\na\n## B\nb\n",
			ours:     "## B\nb2\n",
			theirs:   "## B\nb\n",
			want:     "## B\nb2\n",
			status:   MergeClean,
			outcomes: "preamble=unchanged,b=ours,a=removed",
		},
		{
			name:     "different sections added on both sides",
			base:     "## A\na\n## C\nc\n",
			ours:     "## A\na\n## X\nx\n## C\nc\n",
			theirs:   "## A\na\n## C\nc\n## Y\ny\n",
			want:     "## A\na\n## X\nx\n## C\nc\n## Y\ny\n",
			status:   MergeMerged,
			outcomes: "preamble=unchanged,a=unchanged,x=added,c=unchanged,y=added",
		},
		{
			name:   "added section placed by the template order",
			base:   "## §1 A\na\n## §3 C\nc\n",
			ours:   "## §1 A\na\n## §3 C\nc\n## §4 D\nd\n",
			theirs: "## §1 A\na\n## §3 C\nc\n## §2 B\nb\n",
			opts:   MergeOptions{Order: elevenOrder},
			want:   "## §1 A\na\n## §2 B\nb\n## §3 C\nc\n## §4 D\nd\n",
			status: MergeMerged,
		},
		{
			// Theirs changed no structure: its own placement stands.
			name:   "added section where the only side that added it put it",
			base:   "## §1 A\na\n## §3 C\nc\n",
			ours:   "## §1 A\na2\n## §3 C\nc\n",
			theirs: "## §1 A\na\n## §3 C\nc\n## §2 B\nb\n",
			opts:   MergeOptions{Order: elevenOrder},
			want:   "## §1 A\na2\n## §3 C\nc\n## §2 B\nb\n",
			status: MergeMerged,
		},
		{
			name:     "same section added on both sides keeps both bodies",
			base:     "## A\na\n",
			ours:     "## A\na\n## N\n- o1\n- both\n\n",
			theirs:   "## A\na\n## N\n- t1\n- both\n- t2\n\n",
			want:     "## A\na\n## N\n- o1\n- t1\n- both\n- t2\n\n",
			status:   MergeMerged,
			outcomes: "preamble=unchanged,a=unchanged,n=merged",
		},
		{
			name:   "moved by ours, edited by theirs",
			base:   "## A\na\n## B\nb\n## C\nc\n",
			ours:   "## C\nc\n## A\na\n## B\nb\n",
			theirs: "## A\na\n## B\nb2\n## C\nc\n",
			want:   "## C\nc\n## A\na\n## B\nb2\n",
			status: MergeMerged,
		},
		{
			name:     "sections with the same id match in turn",
			base:     "## N\n1\n## N\n2\n",
			ours:     "## N\n1o\n## N\n2\n",
			theirs:   "## N\n1\n## N\n2t\n",
			want:     "## N\n1o\n## N\n2t\n",
			status:   MergeMerged,
			outcomes: "preamble=unchanged,n=ours,n=theirs",
		},
		{
			name:   "empty base: the same file added on both sides",
			base:   "",
			ours:   "# T\n## A\n- o\n",
			theirs: "# T\n## A\n- t\n## B\nb\n",
			want:   "# T\n## A\n- o\n- t\n## B\nb\n",
			status: MergeMerged,
		},
		{
			name: "crlf markers",
			base: "a\r\nb\r\n", ours: "o\r\nb\r\n", theirs: "t\r\nb\r\n",
			want:      "<<<<<<< ours\r\no\r\n=======\r\nt\r\n>>>>>>> theirs\r\nb\r\n",
			status:    MergeConflict,
			conflicts: "preamble content 1-5",
		},
		{
			name: "a changed line ending survives",
			base: "a\nb\nc\n", ours: "a\r\nb\nc\n", theirs: "a\nb\nC\n",
			want:   "a\r\nb\nC\n",
			status: MergeMerged,
		},
		{
			name: "no final newline: appended after the last line",
			base: "a\nb", ours: "A\nb", theirs: "a\nb\nc",
			want:   "A\nb\nc",
			status: MergeMerged,
		},
		{
			name:   "no final newline: section placed after it",
			base:   "## §1 A\na\n## §3 C\nc",
			ours:   "## §1 A\na\n## §2 B\nb\n## §3 C\nc2",
			theirs: "## §1 A\na2\n## §3 C\nc\n## §4 D\nd",
			opts:   MergeOptions{Order: elevenOrder},
			want:   "## §1 A\na2\n## §2 B\nb\n## §3 C\nc2\n## §4 D\nd",
			status: MergeMerged,
		},
		{
			name:      "no final newline inside a conflict",
			base:      "a",
			ours:      "o",
			theirs:    "t",
			want:      "<<<<<<< ours\no\n=======\nt\n>>>>>>> theirs\n",
			status:    MergeConflict,
			conflicts: "preamble content 1-5",
		},
		{
			name:   "newest last_updated wins",
			base:   "_last_updated: 2026-04-01T22:00Z_\n## A\na\n## B\nb\n",
			ours:   "_last_updated: 2026-04-01T22:30Z_\n## A\na2\n## B\nb\n",
			theirs: "_last_updated: 2026-04-01T23:10Z_\n## A\na\n## B\nb2\n",
			opts:   MergeOptions{NewestWins: ckptNewest},
			want:   "_last_updated: 2026-04-01T23:10Z_\n## A\na2\n## B\nb2\n",
			status: MergeMerged,
		},
		{
			name:   "newest wins only for the listed keys",
			base:   "_last_updated: 2026-04-01T22:00Z_\n",
			ours:   "_last_updated: 2026-04-01T22:30Z_\n",
			theirs: "_last_updated: 2026-04-01T23:10Z_\n",
			want:   "<<<<<<< ours\n_last_updated: 2026-04-01T22:30Z_\n=======\n_last_updated: 2026-04-01T23:10Z_\n>>>>>>> theirs\n",
			status: MergeConflict, conflicts: "preamble content 1-5",
		},
		{
			name:   "delta_since_last compares its end, session_id prefers ours",
			base:   "_session_id: s0_\n_delta_since_last: 2026-04-01T21:00Z → 2026-04-01T22:00Z_\nx\n",
			ours:   "_session_id: s1_\n_delta_since_last: 2026-04-01T23:00Z → 2026-04-01T23:05Z_\nx\n",
			theirs: "_session_id: s2_\n_delta_since_last: 2026-04-01T21:00Z → 2026-04-01T23:30Z_\nX\n",
			opts:   MergeOptions{NewestWins: ckptNewest},
			want:   "_session_id: s1_\n_delta_since_last: 2026-04-01T21:00Z → 2026-04-01T23:30Z_\nX\n",
			status: MergeMerged,
		},
		{
			name:   "newest wins copies the winning line as it is",
			base:   "_last_updated: 2026-04-01T22:00Z_\r\na\r\nb\r\n",
			ours:   "_last_updated: 2026-04-01T22:30Z_\r\nA\r\nb\r\n",
			theirs: "_last_updated:  2026-04-01T23:10Z _\r\na\r\nB\r\n",
			opts:   MergeOptions{NewestWins: ckptNewest},
			want:   "_last_updated:  2026-04-01T23:10Z _\r\nA\r\nB\r\n",
			status: MergeMerged,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Merge3([]byte(tc.base), []byte(tc.ours), []byte(tc.theirs), tc.opts)
			if string(r.Content) != tc.want {
				t.Errorf("content:\n%q\nwant:\n%q", r.Content, tc.want)
			}
			if r.Status != tc.status {
				t.Errorf("status = %v, want %v", r.Status, tc.status)
			}
			if got := conflictsString(r.Conflicts); got != tc.conflicts {
				t.Errorf("conflicts = %q, want %q", got, tc.conflicts)
			}
			if tc.outcomes != "" {
				if got := outcomesString(r.Sections); got != tc.outcomes {
					t.Errorf("outcomes = %q, want %q", got, tc.outcomes)
				}
			}
			checkMarkers(t, r, tc.opts, []byte(tc.base), []byte(tc.ours), []byte(tc.theirs))
		})
	}
}

func conflictsString(cs []Conflict) string {
	var s []string
	for _, c := range cs {
		s = append(s, fmt.Sprintf("%s %s %d-%d", c.Section, c.Kind, c.StartLine, c.EndLine))
	}
	return strings.Join(s, ",")
}

func outcomesString(ss []SectionMerge) string {
	var s []string
	for _, x := range ss {
		s = append(s, fmt.Sprintf("%s=%s", x.ID, x.Outcome))
	}
	return strings.Join(s, ",")
}

// checkMarkers holds the result to the conflict contract: the lines a content conflict
// reports are its marker lines, and no marker line appears anywhere else unless an input
// had it.
func checkMarkers(t *testing.T, r MergeResult, o MergeOptions, in ...[]byte) {
	t.Helper()
	had := map[string]bool{}
	for _, b := range in {
		for _, l := range lineKeys(splitLines(b)) {
			had[l] = true
		}
	}
	ls := lineKeys(splitLines(r.Content))
	start, end := "<<<<<<< "+orDefault(o.OursLabel, "ours"), ">>>>>>> "+orDefault(o.TheirsLabel, "theirs")
	marked := map[int]bool{}
	for _, c := range r.Conflicts {
		if c.StartLine < 1 || c.EndLine < c.StartLine || c.EndLine > len(ls) {
			t.Errorf("conflict %+v outside the %d result lines", c, len(ls))
			continue
		}
		if c.Kind != ConflictContent {
			continue
		}
		if ls[c.StartLine-1] != start || ls[c.EndLine-1] != end {
			t.Errorf("conflict %+v: lines %q … %q are not its markers", c, ls[c.StartLine-1], ls[c.EndLine-1])
		}
		marked[c.StartLine], marked[c.EndLine] = true, true
	}
	for i, l := range ls {
		if (l == start || l == end) && !marked[i+1] && !had[l] {
			t.Errorf("line %d: marker %q not reported as a conflict", i+1, l)
		}
	}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// edit changes a checkpoint the way a test case wants; it fails the test when the line it
// works on is not there, so that a case never passes because its edit did nothing.
type edit func(t *testing.T, src []byte) []byte

// lineIndex finds a line that must be there exactly once.
func lineIndex(t *testing.T, ls [][]byte, line string) int {
	t.Helper()
	at := -1
	for i, l := range ls {
		if lineKey(l) == line {
			if at >= 0 {
				t.Fatalf("line %q is there twice", line)
			}
			at = i
		}
	}
	if at < 0 {
		t.Fatalf("no line %q", line)
	}
	return at
}

// replace swaps a whole line for another, keeping its line ending.
func replace(old, new string) edit {
	return func(t *testing.T, src []byte) []byte {
		t.Helper()
		ls := splitLines(src)
		i := lineIndex(t, ls, old)
		ls[i] = append([]byte(new), ls[i][len(lineKey(ls[i])):]...)
		return bytes.Join(ls, nil)
	}
}

// insert adds lines after a line, with the document's line ending.
func insert(after string, lines ...string) edit {
	return func(t *testing.T, src []byte) []byte {
		t.Helper()
		ls := splitLines(src)
		i := lineIndex(t, ls, after)
		var add [][]byte
		for _, l := range lines {
			add = append(add, []byte(l+EOL(src)))
		}
		return bytes.Join(slices.Insert(ls, i+1, add...), nil)
	}
}

// drop deletes lines from the first to the last, inclusive.
func drop(first, last string) edit {
	return func(t *testing.T, src []byte) []byte {
		t.Helper()
		ls := splitLines(src)
		i, j := lineIndex(t, ls, first), lineIndex(t, ls, last)
		return bytes.Join(slices.Delete(ls, i, j+1), nil)
	}
}

// appendLines adds lines at the end, ending a last line that lacked its ending first.
func appendLines(lines ...string) edit {
	return func(t *testing.T, src []byte) []byte {
		if len(src) > 0 && src[len(src)-1] != '\n' {
			src = append(src, EOL(src)...)
		}
		for _, l := range lines {
			src = append(src, l+EOL(src)...)
		}
		return src
	}
}

func edits(es ...edit) edit {
	return func(t *testing.T, src []byte) []byte {
		t.Helper()
		for _, e := range es {
			src = e(t, src)
		}
		return src
	}
}

func crlf(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")) }

// resultConflict is a content conflict as found in the result: the lines of each side.
type resultConflict struct {
	id           ID
	ours, theirs string
}

func contentConflicts(r MergeResult) []resultConflict {
	ls := lineKeys(splitLines(r.Content))
	var out []resultConflict
	for _, c := range r.Conflicts {
		if c.Kind != ConflictContent {
			continue
		}
		block := ls[c.StartLine : c.EndLine-1]
		mid := slices.Index(block, "=======")
		out = append(out, resultConflict{c.Section, strings.Join(block[:mid], "|"), strings.Join(block[mid+1:], "|")})
	}
	return out
}

// TestMerge3Corpus merges realistic edits of the corpus checkpoints.
func TestMerge3Corpus(t *testing.T) {
	const (
		sixTask  = "Implement Phase 2 of session persistence in `checkpoint_manager.py`: SPARSE/FULL triggers and Circuit Breaker protection."
		sixP0    = "- [ ] (P0) Implement the SPARSE trigger logic in checkpoint_manager.py"
		sixP2    = "- [ ] (P2) End-to-end tests"
		sixXX    = "- Use xxhash instead of md5 for file hashing: 10-20x faster"
		sixCron  = "- Drop the Signal Trap approach in favour of a cron job backup (more reliable)"
		sixDone  = "- [x] Basic structure of checkpoint_manager.py (21:45)"
		sixWhen  = "_last_updated: 2026-04-01T22:00Z_"
		sixDelta = "_delta_since_last: 2026-04-01T21:45Z → 2026-04-01T22:00Z_"
		el5      = "正在实现 sections.Parse 的字节级往返。"
		el2      = "为 sections 包编写往返测试。"
		el9      = "- 分支 `feat/sync-merge`，`--seed 2718281 --shard 1/3`"
		elT3     = "  - 🔵 T3 保留斜体指令行"
		elT4     = "- 🔵 T4 notes 合并"
		el9dir   = "_运行时状态（分支、进程等）_"
	)
	for _, tc := range []struct {
		name          string
		file          string
		crlf, noFinal bool
		ours, theirs  edit
		status        MergeStatus
		has, hasNot   []string // whole lines of the result
		conflicts     []resultConflict
		kinds         string // kinds of all conflicts, comma separated
		outcomes      map[ID]Outcome
	}{
		{
			name:     "six: edits to different sections",
			file:     "six/checkpoint.md",
			ours:     replace(sixTask, "Implement Phase 3: the `--sparse` flag and DSN postgres://ckpt@localhost:5432/ckpt."),
			theirs:   insert(sixXX, "- Keep receipts append-only (`ticks.jsonl`)"),
			status:   MergeMerged,
			has:      []string{"Implement Phase 3: the `--sparse` flag and DSN postgres://ckpt@localhost:5432/ckpt.", sixXX, "- Keep receipts append-only (`ticks.jsonl`)", sixCron},
			hasNot:   []string{sixTask},
			outcomes: map[ID]Outcome{"🎯": OutcomeOurs, "🔑": OutcomeTheirs, "📋": OutcomeUnchanged, PreambleID: OutcomeUnchanged},
		},
		{
			name:     "six: edits to different lines of one section",
			file:     "six/checkpoint.md",
			ours:     replace(sixP0, "- [x] (P0) Implement the SPARSE trigger logic in checkpoint_manager.py"),
			theirs:   replace(sixP2, "- [ ] (P2) End-to-end tests with `go test -race ./...`"),
			status:   MergeMerged,
			has:      []string{"- [x] (P0) Implement the SPARSE trigger logic in checkpoint_manager.py", "- [ ] (P2) End-to-end tests with `go test -race ./...`", "- [ ] (P1) Add Circuit Breaker degradation"},
			hasNot:   []string{sixP0, sixP2},
			outcomes: map[ID]Outcome{"📋": OutcomeMerged},
		},
		{
			name:      "six: the same line changed differently",
			file:      "six/checkpoint.md",
			ours:      edits(replace(sixTask, "Ours: ship SPARSE first."), insert(sixDone, "- [x] ours done")),
			theirs:    edits(replace(sixTask, "Theirs: ship FULL first."), replace(sixCron, "- Cron backup every 5 min")),
			status:    MergeConflict,
			has:       []string{"- [x] ours done", "- Cron backup every 5 min", "### 🎯 Current Task"},
			hasNot:    []string{sixTask, sixCron},
			conflicts: []resultConflict{{"🎯", "Ours: ship SPARSE first.", "Theirs: ship FULL first."}},
			kinds:     "content",
			outcomes:  map[ID]Outcome{"🎯": OutcomeConflict, "✅": OutcomeOurs, "🔑": OutcomeTheirs},
		},
		{
			name:      "six crlf: the same line changed differently",
			file:      "six/checkpoint.md",
			crlf:      true,
			ours:      edits(replace(sixTask, "Ours: ship SPARSE first."), insert(sixDone, "- [x] ours done")),
			theirs:    edits(replace(sixTask, "Theirs: ship FULL first."), replace(sixCron, "- Cron backup every 5 min")),
			status:    MergeConflict,
			has:       []string{"- [x] ours done", "- Cron backup every 5 min"},
			conflicts: []resultConflict{{"🎯", "Ours: ship SPARSE first.", "Theirs: ship FULL first."}},
			kinds:     "content",
		},
		{
			name:     "six crlf: edits to different lines of one section",
			file:     "six/checkpoint.md",
			crlf:     true,
			ours:     replace(sixP0, "- [x] (P0) SPARSE done"),
			theirs:   insert(sixP2, "- [ ] (P3) Docs"),
			status:   MergeMerged,
			has:      []string{"- [x] (P0) SPARSE done", "- [ ] (P3) Docs"},
			outcomes: map[ID]Outcome{"📋": OutcomeMerged},
		},
		{
			name:   "six: _last_updated_ and _delta_since_last_ changed on both sides",
			file:   "six/checkpoint.md",
			ours:   edits(replace(sixWhen, "_last_updated: 2026-04-01T22:30Z_"), replace(sixDelta, "_delta_since_last: 2026-04-01T22:00Z → 2026-04-01T22:30Z_"), insert(sixDone, "- [x] ours done")),
			theirs: edits(replace(sixWhen, "_last_updated: 2026-04-01T23:10Z_"), replace(sixDelta, "_delta_since_last: 2026-04-01T22:00Z → 2026-04-01T23:10Z_"), insert(sixXX, "- theirs decided")),
			status: MergeMerged,
			has:    []string{"_last_updated: 2026-04-01T23:10Z_", "_delta_since_last: 2026-04-01T22:00Z → 2026-04-01T23:10Z_", "- [x] ours done", "- theirs decided"},
			hasNot: []string{"_last_updated: 2026-04-01T22:30Z_", sixWhen, "_delta_since_last: 2026-04-01T22:00Z → 2026-04-01T22:30Z_"},
		},
		{
			name:     "six: sections added on both sides",
			file:     "six/checkpoint.md",
			ours:     insert(sixCron, "", "### 🧪 Experiments", "- try zstd"),
			theirs:   insert("**[2026-04-01T21:55Z]** Called `checkpoint_manager.py check-sparse`, SPARSE checkpoint triggered", "", "### 📎 Links", "- https://example.com/spec"),
			status:   MergeMerged,
			has:      []string{"### 🧪 Experiments", "- try zstd", "### 📎 Links", "- https://example.com/spec"},
			outcomes: map[ID]Outcome{"🧪": OutcomeAdded, "📎": OutcomeAdded},
		},
		{
			name:     "six: the same section added on both sides",
			file:     "six/checkpoint.md",
			ours:     insert(sixCron, "", "### 🧪 Experiments", "- try zstd", "- measure `xxhash`"),
			theirs:   insert(sixCron, "", "### 🧪 Experiments", "- try lz4", "- measure `xxhash`"),
			status:   MergeMerged,
			has:      []string{"### 🧪 Experiments", "- try zstd", "- try lz4", "- measure `xxhash`"},
			outcomes: map[ID]Outcome{"🧪": OutcomeMerged},
		},
		{
			name:     "six: deleted on one side, added on the other",
			file:     "six/checkpoint.md",
			ours:     drop("### 📡 Recovered Delta", "**[2026-04-01T21:55Z]** Called `checkpoint_manager.py check-sparse`, SPARSE checkpoint triggered"),
			theirs:   insert(sixCron, "", "### 🧪 Experiments", "- try zstd"),
			status:   MergeMerged,
			has:      []string{"### 🧪 Experiments", "- try zstd", "### ⚠️ Notes & Blockers"},
			hasNot:   []string{"### 📡 Recovered Delta", sixDelta},
			outcomes: map[ID]Outcome{"📡": OutcomeRemoved, "🧪": OutcomeAdded},
		},
		{
			name:     "six: modified on one side, deleted on the other",
			file:     "six/checkpoint.md",
			ours:     drop("### 🔑 Key Decisions", sixCron),
			theirs:   insert(sixXX, "- theirs decided"),
			status:   MergeConflict,
			has:      []string{"### 🔑 Key Decisions", sixXX, "- theirs decided", sixCron},
			kinds:    "modify/delete",
			outcomes: map[ID]Outcome{"🔑": OutcomeConflict},
		},
		{
			name:    "six no final newline: an added line after the last line",
			file:    "six/checkpoint.md",
			noFinal: true,
			ours:    appendLines("_(end)_"),
			theirs:  replace("- **注意事项**：after the Circuit Breaker degrades, recovery is manual", "- **注意事项**：recovery is automatic"),
			status:  MergeMerged,
			has:     []string{"---", "_(end)_", "- **注意事项**：recovery is automatic"},
		},
		{
			name:     "eleven: edits to different sections",
			file:     "eleven/checkpoint.md",
			ours:     replace(el2, "为 sections 包编写三方合并测试，命令 `go test -run Merge ./sections/`。"),
			theirs:   insert(el9, "- 进程 `ckpt cron tick` pid 4242"),
			status:   MergeMerged,
			has:      []string{"为 sections 包编写三方合并测试，命令 `go test -run Merge ./sections/`。", "- 进程 `ckpt cron tick` pid 4242", el9},
			hasNot:   []string{el2},
			outcomes: map[ID]Outcome{"§2": OutcomeOurs, "§9": OutcomeTheirs, "§11": OutcomeUnchanged},
		},
		{
			name:     "eleven: edits to different lines of §4",
			file:     "eleven/checkpoint.md",
			ours:     replace(elT3, "  - ✅ T3 保留斜体指令行"),
			theirs:   insert(elT4, "  - 🔵 T5 合并驱动"),
			status:   MergeMerged,
			has:      []string{"  - ✅ T3 保留斜体指令行", "  - 🔵 T5 合并驱动", elT4},
			hasNot:   []string{elT3},
			outcomes: map[ID]Outcome{"§4": OutcomeMerged},
		},
		{
			name:      "eleven: the same line changed differently",
			file:      "eleven/checkpoint.md",
			ours:      replace(el5, "正在实现 Merge3。"),
			theirs:    edits(insert(el5, "- 分支 `feat/secrets`"), replace(el5, "正在实现 secrets 扫描。")),
			status:    MergeConflict,
			conflicts: []resultConflict{{"§5", "正在实现 Merge3。", "正在实现 secrets 扫描。|- 分支 `feat/secrets`"}},
			kinds:     "content",
		},
		{
			name:     "eleven: a directive line changed on both sides",
			file:     "eleven/checkpoint.md",
			ours:     edits(insert(el9dir, "- ours 进程 4242"), replace(el9dir, "_运行时状态_")),
			theirs:   replace(el9dir, "_运行时状态（分支）_"),
			status:   MergeConflict,
			has:      []string{"_运行时状态_", "- ours 进程 4242", el9},
			hasNot:   []string{el9dir, "_运行时状态（分支）_"},
			kinds:    "directive",
			outcomes: map[ID]Outcome{"§9": OutcomeConflict},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := corpus(t, tc.file)
			if tc.noFinal {
				base = bytes.TrimRight(base, "\n")
			}
			if tc.crlf {
				base = crlf(base)
			}
			ours, theirs := tc.ours(t, bytes.Clone(base)), tc.theirs(t, bytes.Clone(base))
			opts := MergeOptions{Order: sixOrder, NewestWins: ckptNewest}
			if strings.HasPrefix(tc.file, "eleven") {
				opts.Order = elevenOrder
			}
			r := Merge3(base, ours, theirs, opts)
			if r.Status != tc.status {
				t.Errorf("status = %v, want %v", r.Status, tc.status)
			}
			got := lineKeys(splitLines(r.Content))
			for _, l := range tc.has {
				if !slices.Contains(got, l) {
					t.Errorf("result lacks line %q", l)
				}
			}
			for _, l := range tc.hasNot {
				if slices.Contains(got, l) {
					t.Errorf("result has line %q", l)
				}
			}
			if cs := contentConflicts(r); !slices.Equal(cs, tc.conflicts) {
				t.Errorf("content conflicts = %q, want %q", cs, tc.conflicts)
			}
			var kinds []string
			for _, c := range r.Conflicts {
				kinds = append(kinds, string(c.Kind))
			}
			if got := strings.Join(kinds, ","); got != tc.kinds {
				t.Errorf("conflict kinds = %q, want %q", got, tc.kinds)
			}
			for id, want := range tc.outcomes {
				i := slices.IndexFunc(r.Sections, func(s SectionMerge) bool { return s.ID == id })
				if i < 0 || r.Sections[i].Outcome != want {
					t.Errorf("section %s: outcome %v, want %v", id, r.Sections, want)
				}
			}
			checkMarkers(t, r, opts)
			if tc.crlf && regexp.MustCompile(`[^\r]\n`).Match(r.Content) {
				t.Errorf("crlf input gave a bare line feed:\n%q", r.Content)
			}
			// Nothing lost: every line that only one side has (and the base lacks) is kept.
			bl := lineKeys(splitLines(base))
			for _, side := range [][]byte{ours, theirs} {
				for _, l := range lineKeys(splitLines(side)) {
					if !slices.Contains(bl, l) && !slices.Contains(got, l) && !slices.Contains(tc.hasNot, l) {
						t.Errorf("added line %q lost", l)
					}
				}
			}
			checkParses(t, r, opts)
		})
	}
}

// checkParses asserts that a result without conflicts reads back with the same heading
// level and no stray heading: every section of the result is a section of an input.
func checkParses(t *testing.T, r MergeResult, o MergeOptions) {
	t.Helper()
	d := Parse(r.Content, Options{Level: o.Level})
	var want []ID
	for _, s := range r.Sections {
		if s.ID != PreambleID && s.Outcome != OutcomeRemoved {
			want = append(want, s.ID)
		}
	}
	if got := d.IDs(); !slices.Equal(got, want) {
		t.Errorf("result sections %q, reported %q", got, want)
	}
}

// TestMerge3ManyChanges holds the line merge to exact diffs: a side that changed many
// lines does not swallow the other side's change to a line in between (lcs alone gives up
// on exactness past 50 changes, which turned this into one big conflict).
func TestMerge3ManyChanges(t *testing.T) {
	var base []string
	for i := range 400 {
		base = append(base, fmt.Sprintf("- [ ] item %d", i))
	}
	ours, theirs, want := slices.Clone(base), slices.Clone(base), slices.Clone(base)
	for i := 0; i < len(base); i += 3 {
		ours[i] = fmt.Sprintf("- [x] item %d", i)
		want[i] = ours[i]
	}
	for _, i := range []int{100, 200, 301} {
		theirs[i] = fmt.Sprintf("- [ ] item %d (theirs)", i)
		want[i] = theirs[i]
	}
	join := func(ls []string) []byte { return []byte("## 📋 Task Stack\n" + strings.Join(ls, "\n") + "\n") }
	r := Merge3(join(base), join(ours), join(theirs), MergeOptions{})
	if r.Status != MergeMerged || !bytes.Equal(r.Content, join(want)) {
		t.Errorf("status %v, conflicts %v; result differs from the combined edits", r.Status, r.Conflicts)
	}
}

// TestMerge3LeavesInputsAlone passes inputs that share one array, as subslices of a
// caller's buffer do: nothing past an input's end may be written.
func TestMerge3LeavesInputsAlone(t *testing.T) {
	// The HTML line sends Parse to goldmark, whose code block parser appends a line feed
	// to a last line that lacks one, in place.
	buf := []byte("<p>\n\n## A\na\n## B\n\n    codeXYZ\n")
	keep := bytes.Clone(buf)
	base, theirs := buf, buf[:bytes.IndexByte(buf, 'X')] // theirs ends in code, without a line ending
	Merge3(base, []byte("<p>\n\n## A\na2\n## B\n\n    codeXYZ\n"), theirs, MergeOptions{NewestWins: ckptNewest})
	if !bytes.Equal(buf, keep) {
		t.Errorf("input buffer now %q, was %q", buf, keep)
	}
}

// TestMerge3Err checks the typed error of a conflicted merge.
func TestMerge3Err(t *testing.T) {
	r := Merge3([]byte("## A\na\n## B\nb\n"), []byte("## A\no\n## B\no\n"), []byte("## A\nt\n## B\nt\n"), MergeOptions{})
	err := r.Err()
	var ce *ConflictError
	if !errors.As(err, &ce) || len(ce.Conflicts) != 2 {
		t.Fatalf("err = %v, want a *ConflictError with 2 conflicts", err)
	}
	if got, want := err.Error(), "merge conflict in a, b"; got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
	if err := Merge3([]byte("a\n"), []byte("b\n"), []byte("a\n"), MergeOptions{}).Err(); err != nil {
		t.Errorf("clean merge: err = %v", err)
	}
	if got := MergeConflict.String() + MergeMerged.String() + MergeClean.String(); got != "conflictmergedclean" {
		t.Errorf("status names = %q", got)
	}
}

// TestMerge3Fixtures runs testdata/merge3/*.txt: parts "-- base --", "-- ours --",
// "-- theirs --" and "-- want --" (the result, then a line "== status" and one line per
// conflict). -update-merge3 rewrites the want part.
func TestMerge3Fixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "merge3", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			names, parts := splitFixture(src)
			for _, need := range []string{"base", "ours", "theirs", "want"} {
				if _, ok := parts[need]; !ok {
					t.Fatalf("no part %q", need)
				}
			}
			opts := MergeOptions{NewestWins: ckptNewest}
			if strings.Contains(string(parts["base"]), "## §1") {
				opts.Order = elevenOrder
			} else {
				opts.Order = sixOrder
			}
			r := Merge3(parts["base"], parts["ours"], parts["theirs"], opts)
			got := append(bytes.Clone(r.Content), "== "+r.Status.String()+"\n"...)
			for _, c := range r.Conflicts {
				got = fmt.Appendf(got, "== %s %s %d-%d\n", c.Section, c.Kind, c.StartLine, c.EndLine)
			}
			if *updateMerge3 {
				parts["want"] = got
				if err := os.WriteFile(file, joinFixture(names, parts), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if !bytes.Equal(got, parts["want"]) {
				t.Errorf("result:\n%s\nwant:\n%s", got, parts["want"])
			}
			checkMarkers(t, r, opts)
		})
	}
}

var fixtureHeader = regexp.MustCompile(`(?m)^-- (\w+) --\n`)

func splitFixture(src []byte) ([]string, map[string][]byte) {
	parts := map[string][]byte{}
	var names []string
	locs := fixtureHeader.FindAllSubmatchIndex(src, -1)
	parts[""] = src[:0]
	if len(locs) > 0 {
		parts[""] = src[:locs[0][0]]
	}
	names = append(names, "")
	for i, l := range locs {
		end := len(src)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		name := string(src[l[2]:l[3]])
		names = append(names, name)
		parts[name] = src[l[1]:end]
	}
	return names, parts
}

func joinFixture(names []string, parts map[string][]byte) []byte {
	var out []byte
	for _, n := range names {
		if n != "" {
			out = append(out, "-- "+n+" --\n"...)
		}
		out = append(out, parts[n]...)
	}
	return out
}

// mergeSeeds are inputs worth keeping for every fuzz target: the corpus and the edge cases
// of line endings, ids and markers.
func mergeSeeds() [][3][]byte {
	var seeds [][3][]byte
	for _, name := range []string{"six/checkpoint.md", "eleven/checkpoint.md"} {
		if b, err := os.ReadFile(filepath.Join("..", "..", "shared", "corpus", name)); err == nil {
			seeds = append(seeds, [3][]byte{b, b, b}, [3][]byte{b, crlf(b), bytes.TrimRight(b, "\n")})
		}
	}
	for _, s := range [][3]string{
		{"## A\na\n## B\nb", "## A\na2\n## B\nb\n## C\nc", "## B\nb2"},
		{"## N\n1\n## N\n2\n", "## N\n2\n", "## N\n1\n## N\n1\n## N\n2\n"},
		{"a\r\nb\r\n", "a\nb\n", "a\r\nB\r\n"},
		{"<<<<<<< ours\n=======\n>>>>>>> theirs\n", "", "x"},
		{"## A\n```\n## B\n```\n", "## A\n```\n## B\n", "## A\n## B\n```\n"},
		{"_last_updated: 2026-04-01T22:00Z_\n## A\n_d_\n", "_last_updated: 2026-04-01T23:00Z_\n## A\n", "_last_updated: x_\n## A\n_e_\n"},
	} {
		seeds = append(seeds, [3][]byte{[]byte(s[0]), []byte(s[1]), []byte(s[2])})
	}
	return seeds
}

func FuzzMerge3Identity(f *testing.F) {
	for _, s := range mergeSeeds() {
		f.Add(s[0], s[1], uint8(0))
	}
	f.Fuzz(func(t *testing.T, b, x []byte, level uint8) {
		o := MergeOptions{Level: int(level % 7)}
		for _, tc := range []struct {
			name               string
			base, ours, theirs []byte
		}{
			{"merge(x, x, x)", x, x, x},
			{"merge(b, x, b)", b, x, b},
			{"merge(b, b, x)", b, b, x},
			{"merge(b, x, x)", b, x, x},
		} {
			// merge3 has no identity shortcuts: the section and line machinery must get
			// there on its own.
			if r := merge3(tc.base, tc.ours, tc.theirs, o); !bytes.Equal(r.Content, x) || r.Status != MergeClean {
				t.Fatalf("%s = %q (%v), want x = %q", tc.name, r.Content, r.Status, x)
			}
			o := o
			o.NewestWins = ckptNewest
			if r := Merge3(tc.base, tc.ours, tc.theirs, o); !bytes.Equal(r.Content, x) || r.Status != MergeClean || len(r.Conflicts) > 0 {
				t.Fatalf("Merge3 %s = %q (%v), want x = %q", tc.name, r.Content, r.Status, x)
			}
		}
	})
}

// FuzzMerge3KeepsAddedLines inserts a unique line into one section of base on one side and
// makes an unrelated edit on the other: the unique line must be in the result, conflict or
// not, and so must a line the other side added.
func FuzzMerge3KeepsAddedLines(f *testing.F) {
	for i, s := range mergeSeeds() {
		f.Add(s[0], uint16(i*7), uint16(i*13), uint8(i), i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, base []byte, at, other uint16, kind uint8, swap bool) {
		const mark, add = "ckpt-fuzz-ours-line", "ckpt-fuzz-theirs-line"
		if bytes.Contains(base, []byte("ckpt-fuzz")) {
			return
		}
		d := Parse(base, Options{})
		// Line ranges of the preamble and of each section, in base's lines.
		ls := splitLines(base)
		bounds := []int{0}
		n := len(splitLines(d.Preamble))
		for _, s := range d.Sections {
			bounds = append(bounds, n)
			n += len(splitLines(s.Bytes()))
		}
		bounds = append(bounds, len(ls))
		sec := int(at) % (len(bounds) - 1)
		lo, hi := bounds[sec], bounds[sec+1]
		if sec > 0 {
			lo++ // never above a heading
		}
		pos := lo + int(at/7)%(hi-lo+1)
		eol := EOL(base)
		withLine := func(ls [][]byte, i int, l string) [][]byte {
			ls = slices.Clone(ls)
			if i > 0 && !bytes.HasSuffix(ls[i-1], []byte("\n")) {
				ls[i-1] = append(bytes.Clone(ls[i-1]), eol...)
			}
			return slices.Insert(ls, i, []byte(l+eol))
		}
		ours := bytes.Join(withLine(ls, pos, mark), nil)

		// The other side edits another section when there is one (every other input; the
		// rest edit the same section, which takes the line merge), else another line.
		osec := int(other) % (len(bounds) - 1)
		if kind/3%2 == 1 {
			osec = sec
		} else if osec == sec && len(bounds) > 2 {
			osec = (osec + 1) % (len(bounds) - 1)
		}
		olo, ohi := bounds[osec], bounds[osec+1]
		if osec > 0 {
			olo++
		}
		opos := olo + int(other/3)%(ohi-olo+1)
		var theirs []byte
		switch {
		case kind%3 == 0 || opos == len(ls):
			theirs = bytes.Join(withLine(ls, opos, add), nil)
		case kind%3 == 1:
			theirs = bytes.Join(slices.Delete(slices.Clone(ls), opos, opos+1), nil)
		default:
			c := slices.Clone(ls)
			c[opos] = append([]byte(add), c[opos][len(lineKey(c[opos])):]...)
			theirs = bytes.Join(c, nil)
		}
		o := MergeOptions{NewestWins: ckptNewest}
		if swap {
			ours, theirs = theirs, ours
		}
		r := Merge3(base, ours, theirs, o)
		got := lineKeys(splitLines(r.Content))
		if !slices.Contains(got, mark) {
			t.Fatalf("line %q lost\nbase:   %q\nours:   %q\ntheirs: %q\nresult: %q", mark, base, ours, theirs, r.Content)
		}
		if kind%3 != 1 && !slices.Contains(got, add) {
			t.Fatalf("line %q lost\nbase:   %q\nours:   %q\ntheirs: %q\nresult: %q", add, base, ours, theirs, r.Content)
		}
	})
}

// FuzzMerge3 merges arbitrary inputs: no panic, inputs untouched, and the result keeps its
// promises: every line comes from an input or is a marker, conflicts point at their
// markers, and the status says what happened.
func FuzzMerge3(f *testing.F) {
	for _, s := range mergeSeeds() {
		f.Add(s[0], s[1], s[2], uint8(0))
	}
	f.Fuzz(func(t *testing.T, base, ours, theirs []byte, level uint8) {
		in := [][]byte{bytes.Clone(base), bytes.Clone(ours), bytes.Clone(theirs)}
		o := MergeOptions{Level: int(level % 7), Order: sixOrder, NewestWins: ckptNewest}
		r := Merge3(base, ours, theirs, o)
		if !bytes.Equal(base, in[0]) || !bytes.Equal(ours, in[1]) || !bytes.Equal(theirs, in[2]) {
			t.Fatal("an input was modified")
		}
		// A line may gain or lose a line ending; its text is an input's, whole.
		known := map[string]bool{"<<<<<<< ours": true, "=======": true, ">>>>>>> theirs": true}
		for _, b := range in {
			for _, l := range splitLines(b) {
				known[trimEOL(l)] = true
			}
		}
		for i, l := range splitLines(r.Content) {
			if l := trimEOL(l); !known[l] {
				t.Fatalf("result line %d %q is in no input", i+1, l)
			}
		}
		checkMarkers(t, r, o, base, ours, theirs)
		if (r.Status == MergeConflict) != (len(r.Conflicts) > 0) {
			t.Fatalf("status %v with %d conflicts", r.Status, len(r.Conflicts))
		}
		oneSide := bytes.Equal(r.Content, ours) || bytes.Equal(r.Content, theirs)
		if r.Status != MergeConflict && (r.Status == MergeClean) != oneSide {
			t.Fatalf("status %v, but result is one side: %v", r.Status, oneSide)
		}
		for _, pair := range [][2][]byte{{base, ours}, {base, theirs}, {ours, theirs}} {
			checkLineDiff(t, lineKeys(splitLines(pair[0])), lineKeys(splitLines(pair[1])))
		}
		for i := 1; i < len(r.Conflicts); i++ {
			if r.Conflicts[i].StartLine <= r.Conflicts[i-1].EndLine {
				t.Fatalf("conflicts overlap or are out of order: %+v", r.Conflicts)
			}
		}
	})
}

// checkLineDiff replays lineDiff(a, b) on a: the changes must be in order, within a and b,
// and give b.
func checkLineDiff(t *testing.T, a, b []string) {
	t.Helper()
	var got []string
	pa, pb := 0, 0
	for _, d := range lineDiff(a, b) {
		if d.Start < pa || d.End < d.Start || d.End > len(a) || d.ReplStart != pb+(d.Start-pa) || d.ReplEnd < d.ReplStart || d.ReplEnd > len(b) {
			t.Fatalf("lineDiff(%q, %q): bad change %+v after a[%d], b[%d]", a, b, d, pa, pb)
		}
		got = append(append(got, a[pa:d.Start]...), b[d.ReplStart:d.ReplEnd]...)
		pa, pb = d.End, d.ReplEnd
	}
	if got = append(got, a[pa:]...); !slices.Equal(got, b) {
		t.Fatalf("lineDiff(%q, %q) replays to %q", a, b, got)
	}
}

// BenchmarkMerge3 merges edits on both sides of a 200 KB checkpoint, some in the same
// section, so that the line merge runs on large sections.
func BenchmarkMerge3(b *testing.B) {
	base := bigCheckpoint(200 << 10)
	ls := splitLines(base)
	at := func(id ID, n int) int { // line index of the n-th body line of a section
		d := Parse(base, Options{})
		return d.Section(id).Line + n
	}
	set := func(ls [][]byte, i int, s string) [][]byte {
		ls = slices.Clone(ls)
		ls[i] = []byte(s + "\n")
		return ls
	}
	o, t := ls, ls
	o = set(o, at("🎯", 10), "- [x] ours changed the task")
	o = set(o, at("🔑", 20), "- ours decided")
	t = set(t, at("🔑", 400), "- theirs decided")
	t = set(t, at("⚠️", 5), "- theirs note")
	for i := range 40 { // scattered edits on both sides of one section
		o = set(o, at("📋", 3+i*10), "- [x] ours "+strconv.Itoa(i))
		t = set(t, at("📋", 8+i*10), "- [x] theirs "+strconv.Itoa(i))
	}
	ours, theirs := bytes.Join(o, nil), bytes.Join(t, nil)
	opts := MergeOptions{Order: sixOrder, NewestWins: ckptNewest}
	if r := Merge3(base, ours, theirs, opts); r.Status != MergeMerged {
		b.Fatalf("status = %v, conflicts %v", r.Status, r.Conflicts)
	}
	b.SetBytes(int64(len(base)))
	b.ReportAllocs()
	for b.Loop() {
		Merge3(base, ours, theirs, opts)
	}
}
