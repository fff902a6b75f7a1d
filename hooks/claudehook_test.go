package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/internal/config"
	"github.com/ckpt-dev/ckpt/repo"
	ckptsync "github.com/ckpt-dev/ckpt/sync"
)

func TestProjectSessionID(t *testing.T) {
	for _, tc := range []struct {
		project string
		keyed   bool
		want    string
	}{
		{"/home/u/app", false, "app"},
		{"/home/u/my app", false, "my-app"},
		{"/home/u/.dotfiles", false, "dotfiles"},
		{"/home/u/x.lock", false, "x"},
		{"/home/u/a..b", false, "a.b"},
		{"/home/u/проект", false, "project"},
		{"/", false, "project"},
		{"/home/u/app", true, "app-"},
	} {
		got := string(ProjectSessionID(tc.project, tc.keyed))
		if !strings.HasPrefix(got, tc.want) || (!tc.keyed && got != tc.want) {
			t.Errorf("ProjectSessionID(%q, %v) = %q, want %q", tc.project, tc.keyed, got, tc.want)
		}
		if _, err := repo.ParseSessionID(got); err != nil {
			t.Errorf("ProjectSessionID(%q) = %q: %v", tc.project, got, err)
		}
	}
	a, b := ProjectSessionID("/home/u/app", true), ProjectSessionID("/srv/app", true)
	if a == b || len(a) != len("app-")+8 {
		t.Errorf("keyed ids of two checkouts called app: %q, %q", a, b)
	}
	if long := ProjectSessionID("/p/"+strings.Repeat("x", 300), true); len(long) > 128 {
		t.Errorf("keyed id of a long name is %d bytes", len(long))
	}
}

// newRunner is a Runner over a fresh store.
func newRunner(t *testing.T) *Runner {
	t.Helper()
	opts := repo.DefaultOptions()
	opts.Fsync = false
	opts.Author = repo.Signature{Name: "t", Email: "t@example.com"}
	opts.Now = func() time.Time { return time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC) }
	cp := checkpoint.New(repo.NewStore(t.TempDir(), opts), &config.Config{})
	return NewRunner(cp, ckptsync.New(cp))
}

// TestClaudeSession: which session a conversation of a project writes to.
func TestClaudeSession(t *testing.T) {
	project := filepath.Join(t.TempDir(), "app")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	type step struct {
		name    string
		setup   func(rn *Runner)
		o       ClaudeOptions
		want    string
		exists  bool
		created bool
	}
	init := func(id string, bound bool) func(rn *Runner) {
		return func(rn *Runner) {
			r, _, err := rn.CP.InitSession(repo.SessionID(id), "six", "", nil)
			if err != nil {
				t.Fatal(err)
			}
			b := ""
			if bound {
				b = project
			}
			if err := rn.Bind(r, b, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	base := ClaudeOptions{Project: project, Template: "six"}
	with := func(f func(o *ClaudeOptions)) ClaudeOptions { o := base; f(&o); return o }
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"nothing yet: the project's name, to be made", []step{
			{o: base, want: "app"},
		}},
		{"the one session bound to the project", []step{
			{setup: init("mine", true), o: base, want: "mine", exists: true},
		}},
		{"an unbound session is not the project's", []step{
			{setup: init("mine", false), o: base, want: "app"},
		}},
		{"the project's name wins among several", []step{
			{setup: init("zeta", true)},
			{setup: init("app", true), o: base, want: "app", exists: true},
		}},
		{"an archived one is skipped, and its name taken", []step{
			{setup: func(rn *Runner) { init("app", true)(rn); _ = Archive(rn.home(), "app") }, o: base, want: "app-2"},
		}},
		{"named by -s, CKPT_SESSION or config", []step{
			{setup: init("mine", true), o: with(func(o *ClaudeOptions) { o.Session = "other" }), want: "other"},
		}},
		{"per conversation", []step{
			{setup: init("mine", true), o: with(func(o *ClaudeOptions) { o.PerConversation = true }), want: "conv-1"},
		}},
		{"keyed by the project in the user store", []step{
			{o: with(func(o *ClaudeOptions) { o.Keyed = true }), want: "app-"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rn := newRunner(t)
			for _, s := range tc.steps {
				if s.setup != nil {
					s.setup(rn)
				}
				if s.want == "" {
					continue
				}
				id, exists, err := rn.ClaudeSession("conv-1", s.o)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(string(id), s.want) || (!s.o.Keyed && string(id) != s.want) || exists != s.exists {
					t.Errorf("ClaudeSession = %q, exists %v; want %q, %v", id, exists, s.want, s.exists)
				}
			}
		})
	}
}

// TestClaudeStartCreatesNothing: SessionStart never makes a session, whatever its source.
func TestClaudeStartCreatesNothing(t *testing.T) {
	rn := newRunner(t)
	o := ClaudeOptions{Project: t.TempDir(), Template: "six"}
	for _, src := range []string{"startup", "clear", "resume", "compact", ""} {
		res, err := rn.Claude("SessionStart", ClaudePayload{SessionID: "c1", Source: src}, o)
		if err != nil || res.Context != "" || res.Created {
			t.Errorf("SessionStart %q = %+v, %v", src, res, err)
		}
	}
	if ids, _ := rn.CP.Store.SessionIDs(); len(ids) != 0 {
		t.Errorf("sessions after start-ups: %v", ids)
	}
	if _, err := rn.Claude("Bogus", ClaudePayload{SessionID: "c1"}, o); err == nil {
		t.Error("an unknown event was accepted")
	}
}

func TestConversationValue(t *testing.T) {
	for _, tc := range []struct {
		p    ClaudePayload
		home string
		want string
	}{
		{ClaudePayload{SessionID: "c1", TranscriptPath: "/home/u/.claude/projects/-w/c1.jsonl"}, "/home/u", "c1 ~/.claude/projects/-w/c1.jsonl"},
		{ClaudePayload{SessionID: "c1", TranscriptPath: "/elsewhere/c1.jsonl"}, "/home/u", "c1 /elsewhere/c1.jsonl"},
		{ClaudePayload{SessionID: "c1", TranscriptPath: "/home/user2/t.jsonl"}, "/home/u", "c1 /home/user2/t.jsonl"},
		{ClaudePayload{SessionID: "c1"}, "/home/u", "c1"},
	} {
		if got := conversationValue(tc.p, tc.home); got != tc.want {
			t.Errorf("conversationValue(%+v) = %q, want %q", tc.p, got, tc.want)
		}
	}
	if _, err := ParseClaudePayload([]byte(`{"session_id":"c1\nCkpt-Session: x"}`)); err == nil {
		t.Error("a session_id with a line break was accepted: it would forge a trailer")
	}
}

func TestDirSignature(t *testing.T) {
	dir := t.TempDir()
	sig := func() string {
		t.Helper()
		s, err := DirSignature(dir)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	empty := sig()
	write(t, filepath.Join(dir, "MEMORY.md"), "# Memory\n", 0o644)
	one := sig()
	write(t, filepath.Join(dir, "notes.txt"), "not versioned\n", 0o644)
	if sig() != one {
		t.Error("a file that is not versioned changed the signature")
	}
	write(t, filepath.Join(dir, "MEMORY.md"), "# Memory, longer\n", 0o644)
	changed := sig()
	os.Remove(filepath.Join(dir, "MEMORY.md"))
	gone := sig()
	if one == empty || changed == one || gone != empty {
		t.Errorf("signatures: empty %s, one %s, changed %s, gone %s", empty, one, changed, gone)
	}
	if s, err := DirSignature(filepath.Join(dir, "missing")); err != nil || s != empty {
		t.Errorf("a missing directory: %q, %v", s, err)
	}
}

// TestInstallInstructions: the import line goes in and out of a CLAUDE.md byte for byte,
// whatever the file held, and a file ckpt did not write is never replaced.
func TestInstallInstructions(t *testing.T) {
	for _, tc := range []struct {
		name, before string // "" for no CLAUDE.md
	}{
		{"no CLAUDE.md", ""},
		{"team rules", "# Team\n\n- Run make test.\n"},
		{"no final newline", "# Team"},
		{"ends with a blank line", "# Team\n\n"},
		{"CRLF", "# Team\r\n- rule\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ci, err := ClaudeInstructionsPath("project", dir, "")
			if err != nil {
				t.Fatal(err)
			}
			if tc.before != "" {
				write(t, ci.Memory, tc.before, 0o600)
			}
			if changed, err := InstallInstructions(ci, "# Do this\n"); err != nil || !changed {
				t.Fatalf("install = %v, %v", changed, err)
			}
			mem := string(readFile(t, ci.Memory))
			if !strings.HasPrefix(mem, strings.TrimSuffix(tc.before, "\n")) || !strings.Contains(mem, "\n@.claude/ckpt.md\n") && mem != "@.claude/ckpt.md\n" {
				t.Errorf("CLAUDE.md after install: %q", mem)
			}
			if ok, err := StatusInstructions(ci); !ok || err != nil {
				t.Errorf("status = %v, %v", ok, err)
			}
			if changed, err := InstallInstructions(ci, "# Do this\n"); err != nil || changed {
				t.Errorf("second install = %v, %v", changed, err)
			}
			if changed, err := InstallInstructions(ci, "# Do that\n"); err != nil || !changed {
				t.Errorf("install with new text = %v, %v", changed, err)
			}
			if changed, err := UninstallInstructions(ci); err != nil || !changed {
				t.Fatalf("uninstall = %v, %v", changed, err)
			}
			if _, err := os.Stat(ci.File); !os.IsNotExist(err) {
				t.Errorf("%s is still there", ci.File)
			}
			after, err := os.ReadFile(ci.Memory)
			switch {
			case tc.before == "" && !os.IsNotExist(err):
				t.Errorf("a CLAUDE.md install made is still there: %q", after)
			case tc.before != "" && tc.before != "# Team" && string(after) != tc.before:
				t.Errorf("CLAUDE.md after uninstall = %q, want %q", after, tc.before)
			}
		})
	}
	dir := t.TempDir()
	ci, _ := ClaudeInstructionsPath("project", dir, "")
	write(t, ci.File, "mine\n", 0o644)
	if _, err := InstallInstructions(ci, "# Do this\n"); err == nil || !strings.Contains(err.Error(), "not written by ckpt") {
		t.Errorf("a file ckpt did not write: %v", err)
	}
	if _, err := UninstallInstructions(ci); err != nil || string(readFile(t, ci.File)) != "mine\n" {
		t.Errorf("uninstall touched a file that is not ckpt's: %v", err)
	}
}

// TestAgentPrompt: the instructions name the session's files and every section of its
// template, and say when to write.
func TestAgentPrompt(t *testing.T) {
	rn := newRunner(t)
	for _, tmpl := range []string{"six", "eleven", "eleven-en"} {
		r, _, err := rn.CP.InitSession(repo.SessionID("s-"+tmpl), tmpl, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		text, err := AgentPrompt(rn.CP, r, nil)
		if err != nil {
			t.Fatal(err)
		}
		tm, _ := rn.CP.LoadTemplate(tmpl)
		for _, s := range tm.Doc.Sections {
			if !strings.Contains(text, "`"+strings.TrimSpace(s.HeadingLine())+"`") {
				t.Errorf("%s: the instructions skip %q", tmpl, s.HeadingLine())
			}
		}
		for _, want := range []string{r.WorkPath("checkpoint.md"), r.WorkPath("notes.md"), "before you end your turn", "about to be compacted", "`[decision]`"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: the instructions lack %q", tmpl, want)
			}
		}
	}
}
