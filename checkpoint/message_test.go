package checkpoint

import (
	"testing"

	"github.com/ckpt-dev/ckpt/internal/trailer"
	"github.com/ckpt-dev/ckpt/sections"
)

// TestMessages holds each message ckpt writes to its format: the subject, a blank line, an
// optional body, the trailers; and the trailer parser reads back what was written.
func TestMessages(t *testing.T) {
	tests := []struct {
		name, got, want string
	}{
		{"checkpoint", commitMessage("alpha", TriggerWrite, "", "checkpoint(write): update Current Task", []sections.ID{"🎯", "📡"}, []string{File}),
			"checkpoint(write): update Current Task\n\nCkpt-Session: alpha\nCkpt-Trigger: write\nCkpt-Sections: 🎯,📡\n"},
		{"checkpoint with files", commitMessage("alpha", TriggerFull, "", "checkpoint(full): x", nil, []string{File, NotesFile}),
			"checkpoint(full): x\n\nCkpt-Session: alpha\nCkpt-Trigger: full\nCkpt-Sections: \nCkpt-Files: checkpoint.md,notes.md\n"},
		{"a hook's full sync", commitMessage("alpha", TriggerFull, ClaudeCause("PreCompact"), "checkpoint(full): x", []sections.ID{"§1"}, nil),
			"checkpoint(full): x\n\nCkpt-Session: alpha\nCkpt-Trigger: full\nCkpt-Cause: claude:PreCompact\nCkpt-Sections: §1\n"},
		{"a tick's sparse sync", commitMessage("alpha", TriggerSparse, CauseCron, "checkpoint(sparse): x", []sections.ID{"📡"}, nil),
			"checkpoint(sparse): x\n\nCkpt-Session: alpha\nCkpt-Trigger: sparse\nCkpt-Cause: cron\nCkpt-Sections: 📡\n"},
		{"rejected", rejectMessage("alpha", TriggerSparse, GitHookCause("pre-commit"), []sections.Finding{{Line: 3, Severity: sections.Error, Message: "heading changed"}, {Line: 9, Severity: sections.Warning, Message: "w"}}),
			"rejected(sparse): checkpoint failed check\n\ncheckpoint.md:3: error: heading changed\ncheckpoint.md:9: warning: w\n\nCkpt-Session: alpha\nCkpt-Trigger: sparse\nCkpt-Cause: hook:pre-commit\n"},
		{"merge", MergeMessage("alpha", "origin/alpha"),
			"checkpoint(merge): merge origin/alpha\n\nCkpt-Session: alpha\nCkpt-Trigger: merge\n"},
		{"body", Message{Subject: "s", Body: "b.", Trailers: []trailer.Trailer{{Key: KeyTrigger, Value: "manual"}}}.String(),
			"s\n\nb.\n\nCkpt-Trigger: manual\n"},
		{"subject keeps one line", Subject(TriggerManual, "first\nsecond"), "checkpoint(manual): first"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got  %q\nwant %q", tc.got, tc.want)
			}
		})
	}
	msg := commitMessage("alpha", TriggerWrite, "", "s", []sections.ID{"§1"}, nil)
	if ts := trailer.Parse(msg); trailer.Value(ts, KeyTrigger) != "write" || trailer.Value(ts, KeySections) != "§1" || trailer.Value(ts, KeySession) != "alpha" {
		t.Errorf("trailers of %q: %v", msg, ts)
	}
}

func TestParseTrigger(t *testing.T) {
	for _, tr := range Triggers {
		if got, err := ParseTrigger(string(tr)); err != nil || got != tr {
			t.Errorf("ParseTrigger(%q) = %q, %v", tr, got, err)
		}
	}
	if _, err := ParseTrigger("later"); err == nil {
		t.Error("ParseTrigger accepted an unknown trigger")
	}
}

// TestReadTaken reads the three forms a history may hold: what ckpt writes now, the hook and
// cron triggers with Ckpt-Mode, and those triggers alone.
func TestReadTaken(t *testing.T) {
	for _, tc := range []struct {
		name, msg string
		want      Taken
		sparse    bool
	}{
		{"sparse by cron", "Ckpt-Trigger: sparse\nCkpt-Cause: cron\nCkpt-Sections: 📡\n", Taken{TriggerSparse, "cron"}, true},
		{"full by PreCompact", "Ckpt-Trigger: full\nCkpt-Cause: claude:PreCompact\nCkpt-Sections: 🔑\n", Taken{TriggerFull, "claude:PreCompact"}, false},
		{"sparse by hand", "Ckpt-Trigger: sparse\nCkpt-Sections: 📡\n", Taken{TriggerSparse, ""}, true},
		{"hook with mode sparse", "Ckpt-Trigger: hook\nCkpt-Mode: sparse\nCkpt-Sections: 📡,🔑\n", Taken{TriggerSparse, "hook"}, true},
		{"cron with mode full", "Ckpt-Trigger: cron\nCkpt-Mode: full\nCkpt-Sections: 📡\n", Taken{TriggerFull, "cron"}, false},
		{"cron alone, delta only", "Ckpt-Trigger: cron\nCkpt-Sections: 📡\n", Taken{TriggerSparse, "cron"}, true},
		{"cron alone, nothing but metadata", "Ckpt-Trigger: cron\nCkpt-Sections: \n", Taken{TriggerSparse, "cron"}, true},
		{"hook alone, a notes entry routed", "Ckpt-Trigger: hook\nCkpt-Sections: 📡,🔑\nCkpt-Files: checkpoint.md,notes.md\n", Taken{TriggerFull, "hook"}, false},
		{"hook alone, notes reset", "Ckpt-Trigger: hook\nCkpt-Sections: 📡\nCkpt-Files: checkpoint.md,notes.md\n", Taken{TriggerFull, "hook"}, false},
		{"write", "Ckpt-Trigger: write\nCkpt-Sections: 🎯\n", Taken{TriggerWrite, ""}, false},
		{"no trailers", "", Taken{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := trailer.Parse("subject\n\n" + tc.msg)
			got := ReadTaken(func(k string) string { return trailer.Value(ts, k) })
			if got != tc.want || got.Sparse() != tc.sparse {
				t.Errorf("ReadTaken = %+v (sparse %v), want %+v (sparse %v)", got, got.Sparse(), tc.want, tc.sparse)
			}
		})
	}
}

func TestTakenMatches(t *testing.T) {
	pre := Taken{TriggerFull, ClaudeCause("PreCompact")}
	tick := Taken{TriggerSparse, CauseCron}
	git := Taken{TriggerSparse, GitHookCause("pre-commit")}
	old := Taken{TriggerFull, CauseHook}
	for _, tc := range []struct {
		t      Taken
		filter string
		want   bool
	}{
		{pre, "full", true}, {pre, "hook", true}, {pre, "claude:PreCompact", true}, {pre, "sparse", false}, {pre, "cron", false},
		{tick, "sparse", true}, {tick, "cron", true}, {tick, "hook", false},
		{git, "hook", true}, {git, "hook:pre-commit", true}, {git, "claude:Stop", false},
		{old, "hook", true}, {old, "full", true},
		{Taken{TriggerWrite, ""}, "write", true}, {Taken{TriggerWrite, ""}, "", false},
	} {
		if got := tc.t.Matches(tc.filter); got != tc.want {
			t.Errorf("%+v.Matches(%q) = %v, want %v", tc.t, tc.filter, got, tc.want)
		}
	}
}

func TestParseCause(t *testing.T) {
	for _, ok := range []string{"cron", "hook:pre-commit", "claude:PreCompact", "claude:SessionEnd"} {
		if _, err := ParseCause(ok); err != nil {
			t.Errorf("ParseCause(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "Cron", "hook:", "a b", "hook:x\nCkpt-Trigger: full", ":x"} {
		if _, err := ParseCause(bad); err == nil {
			t.Errorf("ParseCause(%q) accepted it", bad)
		}
	}
}

// TestConversationTrailer: an agent hook's commits name the conversation and transcript
// after ckpt's other trailers, and the parser reads the value back whole.
func TestConversationTrailer(t *testing.T) {
	msg := withConversation(commitMessage("proj", TriggerSparse, "claude:Stop", "checkpoint(sparse): x", []sections.ID{"📡"}, nil), "ece6c795 ~/.claude/projects/-w-proj/ece6c795.jsonl")
	want := "checkpoint(sparse): x\n\nCkpt-Session: proj\nCkpt-Trigger: sparse\nCkpt-Cause: claude:Stop\nCkpt-Sections: 📡\nCkpt-Conversation: ece6c795 ~/.claude/projects/-w-proj/ece6c795.jsonl\n"
	if msg != want {
		t.Errorf("got  %q\nwant %q", msg, want)
	}
	if v := trailer.Value(trailer.Parse(msg), KeyConversation); v != "ece6c795 ~/.claude/projects/-w-proj/ece6c795.jsonl" {
		t.Errorf("read back %q", v)
	}
	if got := withConversation("s\n", ""); got != "s\n" {
		t.Errorf("no conversation: %q", got)
	}
}
