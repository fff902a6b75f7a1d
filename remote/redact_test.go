package remote

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/internal/config"
	"github.com/ckpt-dev/ckpt/internal/gittest"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/secrets"
)

// Token-shaped values are built at run time, so that the repository holds none.
var (
	testToken  = "gh" + "p_" + "dnXRIL3rAVgd5mFVj7nsCuYKt8c8ubKKPDHI"
	testToken2 = "gh" + "p_" + "Q2w9Er7Ty5Ui3Op1As8Df6Gh4Jk2Lz0Xc5Vb"
	testWeak   = "hunt" + "er2"
)

var markerPattern = regexp.MustCompile(`^\[REDACTED:[a-z0-9-]+:[0-9a-f]{8}\]$`)

func TestRedactMarker(t *testing.T) {
	m := redactMarker("github-token", testToken)
	if !markerPattern.MatchString(m) || !strings.HasPrefix(m, "[REDACTED:github-token:") {
		t.Fatalf("marker %q", m)
	}
	// The first 8 hex digits of the value's SHA-256: stable across runs and machines.
	if got := redactMarker("generic-password", "hunter2"); got != "[REDACTED:generic-password:f52fbd32]" {
		t.Errorf("marker of a known value = %q", got)
	}
	if redactMarker("github-token", testToken) != m {
		t.Error("one secret, two markers")
	}
	if redactMarker("github-token", testToken2) == m {
		t.Error("two secrets, one marker")
	}
	if strings.Contains(m, testToken[4:12]) {
		t.Error("the marker shows part of the secret")
	}
	// A marker is not a finding itself: redacted text scans clean.
	for _, rule := range secrets.Rules() {
		if fs := secrets.Scan([]byte("token = "+redactMarker(rule.ID, testToken)+"\n"), 0, nil); len(fs) > 0 {
			t.Errorf("marker of %s is a finding: %+v", rule.ID, fs)
		}
	}
}

func TestRedactText(t *testing.T) {
	mk := redactMarker
	for _, tc := range []struct {
		name, in, want string
		allow          []string
	}{
		{"nothing", "# Notes\n\n- nothing here\n", "# Notes\n\n- nothing here\n", nil},
		{"token", "- deploy with " + testToken + "\n", "- deploy with " + mk("github-token", testToken) + "\n", nil},
		{"every occurrence, one marker", testToken + " and " + testToken + "\n",
			mk("github-token", testToken) + " and " + mk("github-token", testToken) + "\n", nil},
		{"the value elsewhere than the scan saw it", "password = " + testWeak + "\nthe old one was " + testWeak + "x\n",
			"password = " + mk("generic-password", testWeak) + "\nthe old one was " + mk("generic-password", testWeak) + "x\n", nil},
		{"two secrets", testToken + "\n" + testToken2 + "\n", mk("github-token", testToken) + "\n" + mk("github-token", testToken2) + "\n", nil},
		{"url password keeps the url", "postgres://app:" + testWeak + "zz@db/app\n", "postgres://app:" + mk("url-credentials", testWeak+"zz") + "@db/app\n", nil},
		{"allowlisted value stays", "- " + testToken + "\n", "- " + testToken + "\n", []string{testToken}},
		{"crlf kept", "password = " + testWeak + "\r\n", "password = " + mk("generic-password", testWeak) + "\r\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestService(t, &config.Config{})
			s.cp.Config.Secrets.Allow = tc.allow
			got, _ := s.redactText([]byte(tc.in))
			if string(got) != tc.want {
				t.Errorf("redactText(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
			again, found := s.redactText(got)
			if string(again) != string(got) || len(found) > 0 {
				t.Errorf("not idempotent: %q, %v", again, found)
			}
		})
	}
}

// A short secret whose text is also in a marker written for a longer one must not break
// that marker: every value is replaced in one pass.
func TestRedactTextOnePass(t *testing.T) {
	s := newTestService(t, &config.Config{})
	long := redactMarker("github-token", testToken)
	hash := long[len(long)-9 : len(long)-1]
	in := "- " + testToken + "\n- api_key=" + hash + "\n"
	got, found := s.redactText([]byte(in))
	if len(found) != 2 || found[1].Value != hash {
		t.Fatalf("setup: want the token and the hash found, got %+v", found)
	}
	if !strings.Contains(string(got), long) {
		t.Errorf("marker broken: %q", got)
	}
}

func TestRedactSession(t *testing.T) {
	s := newTestService(t, &config.Config{})
	r := s.session(t, "alpha", "six", nil, nil)
	write := func(notes string) {
		t.Helper()
		if _, err := s.Write(r, checkpoint.NotesFile, []byte(notes), checkpoint.CommitOptions{Trigger: checkpoint.TriggerWrite}); err != nil {
			t.Fatal(err)
		}
	}
	write("# Notes\n\n- deploy with " + testToken + "\n")
	write("# Notes\n\n- deployed\n")
	before, _ := r.Head()

	rep, err := s.Redact(r, RedactOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Total() != 1 || rep.Commits != 2 || rep.Commit != "" {
		t.Fatalf("dry run: %+v", rep)
	}
	if h, _ := r.Head(); h != before {
		t.Fatal("a dry run moved main")
	}

	rep, err = s.Redact(r, RedactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.KindList() != "github-token:1" || rep.Commit == "" {
		t.Fatalf("report %+v", rep)
	}
	ci, err := r.CommitInfo(mustHead(t, r))
	if err != nil {
		t.Fatal(err)
	}
	if ci.Trailer(checkpoint.KeyTrigger) != string(checkpoint.TriggerRedact) || ci.Trailer(checkpoint.KeyRedacted) != "github-token:1" || strings.Contains(ci.Message, testToken) {
		t.Errorf("redact commit message:\n%s", ci.Message)
	}
	if got := gittest.Git(t, r.Dir, "show", "HEAD~2:notes.md"); got != "# Notes\n\n- deploy with "+redactMarker("github-token", testToken)+"\n" {
		t.Errorf("old version: %q", got)
	}
	if all := gittest.Git(t, r.Dir, "cat-file", "--batch-all-objects", "--batch"); strings.Contains(all, testToken) {
		t.Error("the token is still in an object")
	}
	gittest.Fsck(t, r.Dir)
	gittest.Clean(t, r.Dir)

	// Nothing left: nothing happens.
	head := mustHead(t, r)
	rep, err = s.Redact(r, RedactOptions{})
	if err != nil || rep.Total() != 0 || mustHead(t, r) != head {
		t.Fatalf("second redaction: %+v %v", rep, err)
	}
}

func mustHead(t *testing.T, r *repo.Repo) repo.Hash {
	t.Helper()
	h, err := r.Head()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestSecretFindingsCache(t *testing.T) {
	s := newTestService(t, &config.Config{})
	r := s.session(t, "alpha", "six", nil, nil)
	find := func() []SecretFinding {
		t.Helper()
		fs, err := s.SecretFindings(r)
		if err != nil {
			t.Fatal(err)
		}
		return fs
	}
	if fs := find(); len(fs) != 0 {
		t.Fatalf("new session: %+v", fs)
	}
	// A commit after the cached head: scanned on top of the cache.
	if _, err := s.Write(r, checkpoint.NotesFile, []byte("# Notes\n\n- deploy with "+testToken+"\n"), checkpoint.CommitOptions{Trigger: checkpoint.TriggerWrite}); err != nil {
		t.Fatal(err)
	}
	fs := find()
	if len(fs) != 1 || fs[0].Rule != "github-token" || fs[0].File != checkpoint.NotesFile || fs[0].Commit == "" {
		t.Fatalf("after a commit: %+v", fs)
	}
	if again := find(); len(again) != 1 {
		t.Fatalf("from the cache: %+v", again)
	}
	// On disk, not committed: a finding without a commit.
	if err := os.WriteFile(r.WorkPath(checkpoint.NotesFile), []byte("# Notes\n\n- "+testToken2+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if fs := find(); len(fs) != 2 || fs[1].Commit != "" {
		t.Fatalf("on disk: %+v", fs)
	}
	// Another allowlist is another scan.
	s.cp.Config.Secrets.Allow = []string{"rule:github-token"}
	if fs := find(); len(fs) != 0 {
		t.Fatalf("allowed: %+v", fs)
	}
}

// Bytes on disk that check rejects are kept: in the rejected write and on disk, both
// redacted, never replaced by HEAD's version.
func TestRedactKeepsRejectedDiskBytes(t *testing.T) {
	s := newTestService(t, &config.Config{})
	r := s.session(t, "alpha", "six", nil, nil)
	if _, err := s.Write(r, checkpoint.NotesFile, []byte("# Notes\n\n- "+testToken+"\n"), checkpoint.CommitOptions{Trigger: checkpoint.TriggerWrite}); err != nil {
		t.Fatal(err)
	}
	cp, err := os.ReadFile(r.WorkPath(checkpoint.File))
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(cp), "### 🎯 Current Task", "### 🎯 Task", 1) + "\n- agent line with " + testToken2 + "\n"
	if err := os.WriteFile(r.WorkPath(checkpoint.File), []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Redact(r, RedactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rejected == "" || rep.Total() != 2 {
		t.Fatalf("report %+v", rep)
	}
	want := strings.Replace(bad, testToken2, redactMarker("github-token", testToken2), 1)
	if got, _ := os.ReadFile(r.WorkPath(checkpoint.File)); string(got) != want {
		t.Errorf("disk:\n%s\nwant\n%s", got, want)
	}
	if got := gittest.Git(t, r.Dir, "show", rep.Rejected+":checkpoint.md"); !strings.Contains(got, "### 🎯 Task\n") || !strings.Contains(got, redactMarker("github-token", testToken2)) {
		t.Errorf("rejected write:\n%s", got)
	}
	if all := gittest.Git(t, r.Dir, "cat-file", "--batch-all-objects", "--batch"); strings.Contains(all, testToken) || strings.Contains(all, testToken2) {
		t.Error("a token is still in an object")
	}
	gittest.Fsck(t, r.Dir)
}
