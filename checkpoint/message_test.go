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
		{"checkpoint with files", commitMessage("alpha", TriggerFull, "full", "checkpoint(full): x", nil, []string{File, NotesFile}),
			"checkpoint(full): x\n\nCkpt-Session: alpha\nCkpt-Trigger: full\nCkpt-Sections: \nCkpt-Files: checkpoint.md,notes.md\n"},
		{"a hook's full sync", commitMessage("alpha", TriggerHook, "full", "checkpoint(hook): x", []sections.ID{"§1"}, nil),
			"checkpoint(hook): x\n\nCkpt-Session: alpha\nCkpt-Trigger: hook\nCkpt-Mode: full\nCkpt-Sections: §1\n"},
		{"rejected", rejectMessage("alpha", TriggerHook, []sections.Finding{{Line: 3, Severity: sections.Error, Message: "heading changed"}, {Line: 9, Severity: sections.Warning, Message: "w"}}),
			"rejected(hook): checkpoint failed check\n\ncheckpoint.md:3: error: heading changed\ncheckpoint.md:9: warning: w\n\nCkpt-Session: alpha\nCkpt-Trigger: hook\n"},
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
