package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/hooks"
	"github.com/ckpt-dev/ckpt/templates"
)

func hookCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:   "hook",
		Usage:  "run as a git or agent hook (installed by ckpt hooks install)",
		Hidden: false,
		Description: `What the installed hooks call. They never fail your commit or your agent: an error is
one line on standard error and exit 0, unless hooks.strict = true in config.toml.

  ckpt hook git pre-commit
  ckpt hook git prepare-commit-msg MSGFILE [SOURCE [SHA]]
  ckpt hook git commit-msg MSGFILE
  ckpt hook claude PreCompact|Stop|SessionStart|SessionEnd   (hook JSON on standard input)`,
		Subcommands: []*cli.Command{
			{
				Name: "git", Usage: "git hook: pre-commit or prepare-commit-msg", ArgsUsage: "HOOK [ARGS…]",
				SkipFlagParsing: true,
				Action:          func(c *cli.Context) error { return runGitHook(c, env) },
			},
			{
				Name: "claude", Usage: "Claude Code hook", ArgsUsage: "EVENT",
				Action: func(c *cli.Context) error { return runClaudeHook(c, env) },
			},
		},
	}
}

// hookFailure turns a hook's error into what the hook contract asks: a warning and exit 0,
// or, with hooks.strict, the error.
func (a *app) hookFailure(err error) error {
	if err == nil {
		return nil
	}
	if a.cfg.Hooks.Strict {
		return err
	}
	msg, _, _ := strings.Cut(err.Error(), "\n")
	fmt.Fprintf(a.env.Stderr, "ckpt: warning: %s\n", msg)
	return nil
}

func runGitHook(c *cli.Context, env *Env) error {
	args := c.Args().Slice()
	if len(args) == 0 {
		return usageError("hook git needs the hook name: pre-commit or prepare-commit-msg")
	}
	a, err := open(c, env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "ckpt: warning: %v\n", err)
		return nil
	}
	top, err := os.Getwd() // git runs hooks at the top of the work tree
	if err != nil {
		return a.hookFailure(err)
	}
	rn := hooks.NewRunner(a.svc)
	switch args[0] {
	case "pre-commit":
		outs, err := rn.PreCommit(top)
		if err != nil {
			return a.hookFailure(err)
		}
		blocked := false
		for _, o := range outs {
			switch o.Result {
			case "ok", "nothing":
				fmt.Fprintf(env.Stderr, "ckpt: %s: %s checkpoint (%s)\n", o.Session, o.Action, o.Reason)
			case "rejected":
				for _, f := range o.Findings {
					fmt.Fprintf(env.Stderr, "ckpt: %s: %s\n", o.Session, f)
				}
				blocked = true
				fmt.Fprintf(env.Stderr, "ckpt: warning: %s: the checkpoint fails check; not taken\n", o.Session)
			default:
				fmt.Fprintf(env.Stderr, "ckpt: warning: %s: %s checkpoint not taken: %s\n", o.Session, o.Action, o.Error)
			}
			if o.Tripped {
				fmt.Fprintf(env.Stderr, "ckpt: warning: %s: breaker open after repeated failures; sparse checkpoints only until ckpt breaker reset -s %s\n", o.Session, o.Session)
			}
		}
		if blocked && a.cfg.Hooks.Strict {
			return fmt.Errorf("commit blocked: a bound session's checkpoint fails check (hooks.strict = true)\nhint: fix it (ckpt check -s ID), or commit with --no-verify")
		}
		return nil
	case "prepare-commit-msg":
		if len(args) < 2 {
			return a.hookFailure(fmt.Errorf("prepare-commit-msg: no message file"))
		}
		msgFile := args[1]
		if !filepath.IsAbs(msgFile) {
			msgFile = filepath.Join(top, msgFile)
		}
		return a.hookFailure(rn.PrepareCommitMsg(top, msgFile))
	case "commit-msg":
		if len(args) < 2 {
			return a.hookFailure(fmt.Errorf("commit-msg: no message file"))
		}
		msgFile := args[1]
		if !filepath.IsAbs(msgFile) {
			msgFile = filepath.Join(top, msgFile)
		}
		return a.hookFailure(rn.CommitMsg(msgFile))
	default:
		return a.hookFailure(fmt.Errorf("unknown git hook %q (ckpt handles pre-commit, prepare-commit-msg and commit-msg)", args[0]))
	}
}

func runClaudeHook(c *cli.Context, env *Env) error {
	if c.NArg() != 1 {
		return usageError("hook claude needs the event: PreCompact, Stop, SessionStart or SessionEnd")
	}
	event := c.Args().First()
	input, err := io.ReadAll(env.Stdin)
	if err != nil {
		fmt.Fprintf(env.Stderr, "ckpt: warning: read hook input: %v\n", err)
		return nil
	}
	p, perr := hooks.ParseClaudePayload(input)
	if perr == nil && p.Cwd != "" && c.String("home") == "" && env.Getenv("CKPT_HOME") == "" {
		// The store is found from the agent's project, not from wherever the hook runs.
		if err := os.Chdir(p.Cwd); err != nil {
			fmt.Fprintf(env.Stderr, "ckpt: warning: %s: %v\n", p.Cwd, err)
			return nil
		}
	}
	a, err := open(c, env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "ckpt: warning: %v\n", err)
		return nil
	}
	if perr != nil {
		return a.hookFailure(perr)
	}
	tmpl := a.cfg.Hooks.Template
	if tmpl == "" {
		tmpl = templates.Default
	}
	cwd, _ := os.Getwd()
	workTree := gitTop(cwd)
	res, err := hooks.NewRunner(a.svc).Claude(event, p, tmpl, workTree)
	if err != nil {
		return a.hookFailure(err)
	}
	if res.Created {
		fmt.Fprintf(env.Stderr, "ckpt: created session %s for this Claude Code session\n", res.Session)
	}
	if o := res.Outcome; o != nil {
		for _, w := range o.Warnings {
			fmt.Fprintf(env.Stderr, "ckpt: warning: %s\n", w)
		}
	}
	if o := res.Outcome; o != nil && o.Result != "ok" && o.Result != "nothing" {
		if err := a.hookFailure(fmt.Errorf("%s: %s checkpoint not taken: %s", o.Session, o.Action, o.Error)); err != nil {
			return err
		}
	}
	if res.Context != "" {
		out := map[string]any{"hookSpecificOutput": map[string]string{
			"hookEventName":     "SessionStart",
			"additionalContext": "The checkpoint of this session (ckpt session " + res.Session + "), as it was before the compaction:\n\n" + res.Context,
		}}
		enc := json.NewEncoder(env.Stdout)
		enc.SetEscapeHTML(false)
		return enc.Encode(out)
	}
	return nil
}
