package main

import (
	"encoding/json"
	"os"
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
