package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/hooks"
	"github.com/ckpt-dev/ckpt/internal/hint"
	"github.com/ckpt-dev/ckpt/internal/home"
	"github.com/ckpt-dev/ckpt/templates"
)

func hookCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:   "hook",
		Usage:  "run as a git or agent hook (installed by ckpt hooks install)",
		Hidden: false,
		Description: `What the installed hooks call. They never fail your commit or your agent: an error is
one line on standard error and exit 0, unless hooks.strict = true in config.toml.

Examples:
  ckpt hook git pre-commit
  ckpt hook git prepare-commit-msg MSGFILE [SOURCE [SHA]]
  ckpt hook git commit-msg MSGFILE
  ckpt hook claude PreCompact < payload.json   (also Stop, SessionStart, SessionEnd)`,
		Subcommands: []*cli.Command{
			{
				Name: "git", Usage: "git hook: pre-commit, prepare-commit-msg or commit-msg", ArgsUsage: "HOOK [ARGS…]",
				Description: `pre-commit takes a checkpoint of each session bound to the repository (sparse,
full when notes are pending); prepare-commit-msg and commit-msg add a Ckpt-Checkpoint:
<session>@<hash> trailer per session to the commit message. git runs them from the top
of the work tree.

Examples:
  ckpt hook git pre-commit
  ckpt hook git prepare-commit-msg .git/COMMIT_EDITMSG message
  ckpt hook git commit-msg .git/COMMIT_EDITMSG`,
				SkipFlagParsing: true,
				Action:          func(c *cli.Context) error { return runGitHook(c, env) },
			},
			{
				Name: "claude", Usage: "Claude Code hook", ArgsUsage: "EVENT",
				Description: `Reads the hook's JSON on standard input. The ckpt session is the Claude Code
session (created on first use): PreCompact takes a full checkpoint, Stop and SessionEnd
a sparse one, SessionStart after a compaction or resume prints the checkpoint back as
context.

Examples:
  ckpt hook claude PreCompact < payload.json
  echo '{"session_id":"abc","source":"compact","cwd":"'"$PWD"'"}' | ckpt hook claude SessionStart`,
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
	if args[0] == "--help" || args[0] == "-h" { // flags are the hook's, but not this one
		return cli.ShowCommandHelp(c.Lineage()[1], c.Command.Name)
	}
	a, err := open(c, env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "ckpt: warning: %v\n", err)
		return nil
	}
	top, err := env.Getwd() // git runs hooks at the top of the work tree
	if err != nil {
		return a.hookFailure(err)
	}
	rn := hooks.NewRunner(a.svc, a.sync)
	switch args[0] {
	case "pre-commit":
		outs, err := rn.PreCommit(top)
		if err != nil {
			return a.hookFailure(err)
		}
		if printPreCommit(env, outs) && a.cfg.Hooks.Strict {
			return hint.New(errors.New("commit blocked: a bound session's checkpoint fails check (hooks.strict = true)"), "fix it (ckpt check -s ID), or commit with --no-verify")
		}
		return nil
	case "prepare-commit-msg", "commit-msg":
		if len(args) < 2 {
			return a.hookFailure(fmt.Errorf("%s: no message file", args[0]))
		}
		msgFile := absIn(top, args[1])
		if args[0] == "commit-msg" {
			return a.hookFailure(rn.CommitMsg(msgFile))
		}
		return a.hookFailure(rn.PrepareCommitMsg(top, msgFile))
	default:
		return a.hookFailure(fmt.Errorf("unknown git hook %q (ckpt handles pre-commit, prepare-commit-msg and commit-msg)", args[0]))
	}
}

// printPreCommit says on standard error what pre-commit did to each session, and reports
// whether a checkpoint failed check.
func printPreCommit(env *Env, outs []hooks.Outcome) (rejected bool) {
	for _, o := range outs {
		switch o.Result {
		case "ok", "nothing":
			fmt.Fprintf(env.Stderr, "ckpt: %s: %s checkpoint (%s)\n", o.Session, o.Action, o.Reason)
		case "rejected":
			for _, f := range o.Findings {
				fmt.Fprintf(env.Stderr, "ckpt: %s: %s\n", o.Session, f)
			}
			rejected = true
			fmt.Fprintf(env.Stderr, "ckpt: warning: %s: the checkpoint fails check; not taken\n", o.Session)
		default:
			fmt.Fprintf(env.Stderr, "ckpt: warning: %s: %s checkpoint not taken: %s\n", o.Session, o.Action, o.Error)
		}
		if o.Tripped {
			fmt.Fprintf(env.Stderr, "ckpt: warning: %s: breaker open after repeated failures; sparse checkpoints only until ckpt breaker reset -s %s\n", o.Session, o.Session)
		}
	}
	return rejected
}

func runClaudeHook(c *cli.Context, env *Env) error {
	if c.NArg() != 1 {
		return usageError("hook claude needs the event: PreCompact, Stop, SessionStart or SessionEnd")
	}
	input, err := io.ReadAll(env.Stdin)
	if err != nil {
		fmt.Fprintf(env.Stderr, "ckpt: warning: read hook input: %v\n", err)
		return nil
	}
	p, perr := hooks.ParseClaudePayload(input)
	if perr == nil && p.Cwd != "" && c.String("home") == "" && env.Getenv("CKPT_HOME") == "" {
		// The store is found from the agent's project, not from wherever the hook runs.
		if env, err = inProject(env, &p); err != nil {
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
	cwd, _ := env.Getwd()
	res, err := hooks.NewRunner(a.svc, a.sync).Claude(c.Args().First(), p, tmpl, home.GitTop(cwd))
	if err != nil {
		return a.hookFailure(err)
	}
	return a.printClaude(res)
}

// inProject is env working in the agent's project directory, the payload's cwd; a relative
// transcript path is taken from there too.
func inProject(env *Env, p *hooks.ClaudePayload) (*Env, error) {
	if fi, err := os.Stat(p.Cwd); err != nil || !fi.IsDir() {
		if err == nil {
			err = errors.New("not a directory")
		}
		return env, err
	}
	if p.TranscriptPath != "" {
		p.TranscriptPath = absIn(p.Cwd, p.TranscriptPath)
	}
	return env.in(p.Cwd), nil
}

// printClaude says what an agent hook did, and gives the checkpoint back to the agent as
// context on SessionStart.
func (a *app) printClaude(res hooks.ClaudeResult) error {
	env := a.env
	if res.Created {
		fmt.Fprintf(env.Stderr, "ckpt: created session %s for this Claude Code session\n", res.Session)
	}
	if o := res.Outcome; o != nil {
		for _, w := range o.Warnings {
			fmt.Fprintf(env.Stderr, "ckpt: warning: %s\n", w)
		}
		if o.Result != "ok" && o.Result != "nothing" {
			if err := a.hookFailure(fmt.Errorf("%s: %s checkpoint not taken: %s", o.Session, o.Action, o.Error)); err != nil {
				return err
			}
		}
	}
	if res.Context == "" {
		return nil
	}
	out := map[string]any{"hookSpecificOutput": map[string]string{
		"hookEventName":     "SessionStart",
		"additionalContext": "The checkpoint of this session (ckpt session " + res.Session + "), as it was before the compaction:\n\n" + res.Context,
	}}
	enc := json.NewEncoder(env.Stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}
