package main

import (
	"encoding/json"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofrs/flock"
	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"ckpt": func() { os.Exit(Main(os.Args[1:], stdEnv())) },
	})
}

// TestScripts runs the testscript suite in testdata/script: the real CLI against real git,
// one script per command and per bug fixed.
func TestScripts(t *testing.T) {
	corpus, err := filepath.Abs(filepath.Join("..", "..", "testdata", "corpus"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			home := filepath.Join(env.WorkDir, "home")
			if err := os.MkdirAll(home, 0o755); err != nil {
				return err
			}
			env.Setenv("HOME", home)
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
			env.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, ".gitconfig"))
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("GIT_AUTHOR_NAME", "Test User")
			env.Setenv("GIT_AUTHOR_EMAIL", "user@example.com")
			env.Setenv("GIT_COMMITTER_NAME", "Test User")
			env.Setenv("GIT_COMMITTER_EMAIL", "user@example.com")
			env.Setenv("CKPT_HOME", filepath.Join(env.WorkDir, "store"))
			env.Setenv("CKPT_NOW", "2026-04-01T22:30:00Z")
			env.Setenv("CKPT_AUTHOR_NAME", "ckpt test")
			env.Setenv("CKPT_AUTHOR_EMAIL", "ckpt@example.com")
			env.Setenv("CKPT_LOCK_TIMEOUT", "5s")
			env.Setenv("CORPUS", corpus)
			env.Setenv("CKPT_SRC", src) // the module's top: its .pre-commit-hooks.yaml
			env.Setenv("NO_COLOR", "")
			return os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[init]\n\tdefaultBranch = main\n"), 0o644)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"holdlock":      cmdHoldLock,
			"holdtick":      cmdHoldTick,
			"claudepayload": cmdClaudePayload,
			"httpgit":       cmdHTTPGit,
		},
	})
}

// cmdHoldLock takes a session's lock (as another ckpt would) until the script ends:
// holdlock SESSION [shared].
func cmdHoldLock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: holdlock SESSION [shared]")
	}
	path := filepath.Join(ts.Getenv("CKPT_HOME"), "state", "locks", args[0]+".lock")
	ts.Check(os.MkdirAll(filepath.Dir(path), 0o755))
	fl := flock.New(path)
	var ok bool
	var err error
	if len(args) > 1 && args[1] == "shared" {
		ok, err = fl.TryRLock()
	} else {
		ok, err = fl.TryLock()
	}
	ts.Check(err)
	if !ok {
		ts.Fatalf("lock %s is taken", path)
	}
	ts.Defer(func() { _ = fl.Unlock() })
}

// cmdHoldTick holds the cron tick lock, as a running tick would, until the script ends.
func cmdHoldTick(ts *testscript.TestScript, neg bool, args []string) {
	path := filepath.Join(ts.Getenv("CKPT_HOME"), "state", "tick.lock")
	ts.Check(os.MkdirAll(filepath.Dir(path), 0o755))
	fl := flock.New(path)
	ok, err := fl.TryLock()
	ts.Check(err)
	if !ok {
		ts.Fatalf("tick lock is taken")
	}
	ts.Defer(func() { _ = fl.Unlock() })
}

// cmdClaudePayload writes the JSON a Claude Code hook gets on standard input, as the hooks
// reference documents it: claudepayload FILE EVENT key=value… (session_id, transcript_path,
// cwd, source, trigger, reason, stop_hook_active=true).
func cmdClaudePayload(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: claudepayload FILE EVENT key=value...")
	}
	p := map[string]any{"hook_event_name": args[1], "permission_mode": "default"}
	for _, kv := range args[2:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			ts.Fatalf("claudepayload: %q is not key=value", kv)
		}
		p[k] = v
		if v == "true" || v == "false" {
			p[k] = v == "true"
		}
	}
	b, err := json.Marshal(p)
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), append(b, '\n'), 0o644))
}

// cmdHTTPGit serves the bare repositories under DIR over git's smart HTTP protocol (git
// http-backend under net/http/cgi, as a team's server runs it), behind basic auth with one
// user, until the script ends; $HTTPGIT is its URL: httpgit DIR USER PASSWORD. Every
// request is logged to $WORK/http.log, the refused ones as "401".
func cmdHTTPGit(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: httpgit DIR USER PASSWORD")
	}
	out, err := exec.Command("git", "--exec-path").Output()
	ts.Check(err)
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		ts.Fatalf("no git http-backend: %v", err)
	}
	root, user, pass := ts.MkAbs(args[0]), args[1], args[2]
	log, err := os.OpenFile(ts.MkAbs("http.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	ts.Check(err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || u != user || p != pass {
			_, _ = log.WriteString("401 " + r.Method + " " + r.URL.Path + "\n")
			w.Header().Set("WWW-Authenticate", `Basic realm="ckpt test"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		_, _ = log.WriteString("200 " + r.Method + " " + r.URL.Path + "\n")
		h := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER=" + u}}
		h.ServeHTTP(w, r)
	}))
	ts.Defer(func() { srv.Close(); _ = log.Close() })
	ts.Setenv("HTTPGIT", srv.URL)
}
