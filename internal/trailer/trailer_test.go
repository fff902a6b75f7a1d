package trailer

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ckpt-dev/ckpt/internal/gittest"
)

const gitHelp = "# Please enter the commit message for your changes. Lines starting\n" +
	"# with '#' will be ignored, and an empty message aborts the commit.\n" +
	"#\n# On branch main\n# Changes to be committed:\n#\tmodified:   a.txt\n#\n"

const verboseTail = scissors + "\n" +
	"# Do not modify or remove the line above.\n# Everything below it will be ignored.\n" +
	"diff --git a/a.txt b/a.txt\n+Key: value in a diff\n+\n"

func TestAddTrailer(t *testing.T) {
	const key = "Ckpt-Checkpoint"
	tests := []struct {
		name, msg, value, want string
	}{
		{name: "empty message", msg: "", value: "s1@abc1234", want: ""},
		{name: "blank lines only", msg: "\n\n", value: "s1@abc1234", want: "\n\n"},
		{name: "comments only (editor still to open)", msg: "\n" + gitHelp, value: "s1@abc1234",
			want: "\n" + gitHelp},
		{name: "comments and scissors only", msg: "\n" + gitHelp + verboseTail, value: "s1@abc1234",
			want: "\n" + gitHelp + verboseTail},
		{name: "subject only", msg: "Fix the parser\n", value: "s1@abc1234",
			want: "Fix the parser\n\nCkpt-Checkpoint: s1@abc1234\n"},
		{name: "subject without final newline", msg: "Fix the parser", value: "s1@abc1234",
			want: "Fix the parser\n\nCkpt-Checkpoint: s1@abc1234\n"},
		{name: "a lone trailer-like subject is a subject", msg: "Signed-off-by: A <a@x>\n", value: "s1@abc1234",
			want: "Signed-off-by: A <a@x>\n\nCkpt-Checkpoint: s1@abc1234\n"},
		{name: "subject and body", msg: "Fix the parser\n\nIt broke on tabs.\nNow it does not.\n", value: "s1@abc1234",
			want: "Fix the parser\n\nIt broke on tabs.\nNow it does not.\n\nCkpt-Checkpoint: s1@abc1234\n"},
		{name: "body ending in prose with a colon", msg: "Fix\n\nSee: the docs for why\nand more prose\n", value: "s1@abc1234",
			want: "Fix\n\nSee: the docs for why\nand more prose\n\nCkpt-Checkpoint: s1@abc1234\n"},
		{name: "URL is not a trailer", msg: "Fix\n\nhttps://example.com/issue/1\n", value: "s1@abc1234",
			want: "Fix\n\nhttps://example.com/issue/1\n\nCkpt-Checkpoint: s1@abc1234\n"},
		{name: "existing Signed-off-by block", msg: "Fix\n\nBody.\n\nSigned-off-by: A <a@x>\n", value: "s1@abc1234",
			want: "Fix\n\nBody.\n\nSigned-off-by: A <a@x>\nCkpt-Checkpoint: s1@abc1234\n"},
		{name: "several trailers with a continuation", msg: "Fix\n\nCo-authored-by: B <b@x>\nReviewed-by: C\n  <c@x>\n", value: "s1@abc1234",
			want: "Fix\n\nCo-authored-by: B <b@x>\nReviewed-by: C\n  <c@x>\nCkpt-Checkpoint: s1@abc1234\n"},
		{name: "mixed block with a git trailer counts", msg: "Fix\n\nBody\n\n(cherry picked from commit abc)\nnote\nSigned-off-by: A <a@x>\n", value: "s1@abc1234",
			want: "Fix\n\nBody\n\n(cherry picked from commit abc)\nnote\nSigned-off-by: A <a@x>\nCkpt-Checkpoint: s1@abc1234\n"},
		{name: "mostly prose without a git trailer is not a block", msg: "Fix\n\nwords\nmore words\nKey: v\n", value: "s1@abc1234",
			want: "Fix\n\nwords\nmore words\nKey: v\n\nCkpt-Checkpoint: s1@abc1234\n"},
		{name: "before git's comments", msg: "Fix\n" + gitHelp, value: "s1@abc1234",
			want: "Fix\n\nCkpt-Checkpoint: s1@abc1234\n" + gitHelp},
		{name: "before comments after a blank line", msg: "Fix\n\n" + gitHelp, value: "s1@abc1234",
			want: "Fix\n\nCkpt-Checkpoint: s1@abc1234\n\n" + gitHelp},
		{name: "trailer block then comments", msg: "Fix\n\nSigned-off-by: A <a@x>\n\n" + gitHelp, value: "s1@abc1234",
			want: "Fix\n\nSigned-off-by: A <a@x>\nCkpt-Checkpoint: s1@abc1234\n\n" + gitHelp},
		{name: "scissors: the diff below is untouched", msg: "Fix\n\nSigned-off-by: A <a@x>\n" + gitHelp + verboseTail, value: "s1@abc1234",
			want: "Fix\n\nSigned-off-by: A <a@x>\nCkpt-Checkpoint: s1@abc1234\n" + gitHelp + verboseTail},
		{name: "amend: same trailer is not repeated", msg: "Fix\n\nCkpt-Checkpoint: s1@abc1234\n" + gitHelp, value: "s1@abc1234",
			want: "Fix\n\nCkpt-Checkpoint: s1@abc1234\n" + gitHelp},
		{name: "amend: key in other case is the same trailer", msg: "Fix\n\nckpt-checkpoint: s1@abc1234\n", value: "s1@abc1234",
			want: "Fix\n\nCkpt-Checkpoint: s1@abc1234\n"},
		{name: "amend: newer checkpoint of the session replaces the older in place", msg: "Fix\n\nCkpt-Checkpoint: s1@abc1234\nSigned-off-by: A <a@x>\n", value: "s1@def5678",
			want: "Fix\n\nCkpt-Checkpoint: s1@def5678\nSigned-off-by: A <a@x>\n"},
		{name: "another session gets its own trailer", msg: "Fix\n\nCkpt-Checkpoint: s1@abc1234\n", value: "s2@def5678",
			want: "Fix\n\nCkpt-Checkpoint: s1@abc1234\nCkpt-Checkpoint: s2@def5678\n"},
		{name: "session prefix must match whole", msg: "Fix\n\nCkpt-Checkpoint: s1x@abc1234\n", value: "s1@def5678",
			want: "Fix\n\nCkpt-Checkpoint: s1x@abc1234\nCkpt-Checkpoint: s1@def5678\n"},
		{name: "duplicates of the session collapse into one", msg: "Fix\n\nCkpt-Checkpoint: s1@aaa\nCkpt-Checkpoint: s1@bbb\n", value: "s1@ccc",
			want: "Fix\n\nCkpt-Checkpoint: s1@ccc\n"},
		{name: "other key with the same value is kept", msg: "Fix\n\nSee-also: s1@abc1234\n", value: "s1@abc1234",
			want: "Fix\n\nSee-also: s1@abc1234\nCkpt-Checkpoint: s1@abc1234\n"},
		{name: "trailer in the body is not the block", msg: "Fix\n\nCkpt-Checkpoint: s1@old\n\nMore prose.\n", value: "s1@new",
			want: "Fix\n\nCkpt-Checkpoint: s1@old\n\nMore prose.\n\nCkpt-Checkpoint: s1@new\n"},
		{name: "comment inside the trailer block", msg: "Fix\n\nSigned-off-by: A <a@x>\n# a note\nAcked-by: B\n", value: "s1@abc1234",
			want: "Fix\n\nSigned-off-by: A <a@x>\n# a note\nAcked-by: B\nCkpt-Checkpoint: s1@abc1234\n"},
		{name: "comment lines before the subject", msg: "# template hint\nFix\n", value: "s1@abc1234",
			want: "# template hint\nFix\n\nCkpt-Checkpoint: s1@abc1234\n"},
		{name: "scissors-like line that is not exact stays content", msg: "Fix\n\n# ----- >8 -----\n", value: "s1@abc1234",
			want: "Fix\n\nCkpt-Checkpoint: s1@abc1234\n\n# ----- >8 -----\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Add(tc.msg, key, tc.value)
			if got != tc.want {
				t.Errorf("Add(%q)\n got %q\nwant %q", tc.msg, got, tc.want)
			}
			if again := Add(got, key, tc.value); again != got {
				t.Errorf("not idempotent:\n got %q\nwant %q", again, got)
			}
		})
	}
}

// TestAddTrailerAgreesWithGit checks the placement against git interpret-trailers on
// messages where git's rules are unambiguous.
func TestAddTrailerAgreesWithGit(t *testing.T) {
	msgs := []string{
		"Fix the parser\n",
		"Fix the parser\n\nIt broke on tabs.\n",
		"Fix\n\nBody.\n\nSigned-off-by: A <a@x>\n",
		"Fix\n\nCo-authored-by: B <b@x>\nReviewed-by: C\n  <c@x>\n",
		// Not "https://…" as a last paragraph: git takes it for a trailer and rewrites it
		// to "https: //…"; AddTrailer leaves the URL alone.
		"Fix\n\nwords\nmore words\nKey: v\n",
	}
	for i, msg := range msgs {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "msg")
			if err := os.WriteFile(f, []byte(msg), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := exec.LookPath("git"); err != nil {
				t.Skip("git is not installed")
			}
			cmd := exec.Command("git", "interpret-trailers", "--trailer", "Ckpt-Checkpoint: s1@abc1234", f)
			cmd.Env = gittest.Env(t)
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			if got := Add(msg, "Ckpt-Checkpoint", "s1@abc1234"); got != string(out) {
				t.Errorf("AddTrailer %q, git %q", got, out)
			}
		})
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name, msg string
		want      []Trailer
	}{
		{"checkpoint commit", "checkpoint(write): update 🎯\n\nCkpt-Session: alpha\nCkpt-Trigger: write\nCkpt-Sections: 🎯,📡\n",
			[]Trailer{{"Ckpt-Session", "alpha"}, {"Ckpt-Trigger", "write"}, {"Ckpt-Sections", "🎯,📡"}}},
		{"empty value", "checkpoint(redact): x\n\nBody.\n\nCkpt-Trigger: redact\nCkpt-Sections: \n",
			[]Trailer{{"Ckpt-Trigger", "redact"}, {"Ckpt-Sections", ""}}},
		{"no final newline", "s\n\nKey: v", []Trailer{{"Key", "v"}}},
		{"subject only", "Key: v\n", nil},
		{"prose last", "s\n\nKey: v\n\nJust words.\n", nil},
		{"a URL is not a trailer", "s\n\nhttps://example.com/x\n", nil},
		{"continuation", "s\n\nReviewed-by: C\n  <c@x>\nKey: v\n", []Trailer{{"Reviewed-by", "C <c@x>"}, {"Key", "v"}}},
		{"mostly prose with a sign-off", "s\n\nwords\nmore\nSigned-off-by: A <a@x>\n", []Trailer{{"Signed-off-by", "A <a@x>"}}},
		{"empty", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Parse(tc.msg)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("Parse(%q) = %q, want %q", tc.msg, got, tc.want)
			}
		})
	}
	if v := Value(Parse("s\n\nckpt-trigger: x\n"), "Ckpt-Trigger"); v != "x" {
		t.Errorf("Value = %q", v)
	}
}
