package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
  ckpt hook git prepare-commit-msg --checkpoint MSGFILE   (the pre-commit framework's)
  ckpt hook git commit-msg MSGFILE
  ckpt hook claude PreCompact < payload.json   (also Stop, SessionStart, SessionEnd)`,
		Subcommands: []*cli.Command{
			{
				Name: "git", Usage: "git hook: pre-commit, prepare-commit-msg or commit-msg", ArgsUsage: "HOOK [ARGS…]",
				Description: `pre-commit takes a checkpoint of each session bound to the repository (sparse,
full when notes are pending); prepare-commit-msg and commit-msg add a Ckpt-Checkpoint:
<session>@<hash> trailer to the commit message for each session that changed since a
commit last named it. prepare-commit-msg --checkpoint does both (the pre-commit
framework's hook, .pre-commit-hooks.yaml). The pre-commit hook ckpt installs leaves its
checkpoint to prepare-commit-msg, so that a commit starts ckpt once (git commit
--no-verify still takes none). git runs them from the top of the work tree.

Examples:
  ckpt hook git pre-commit
  ckpt hook git prepare-commit-msg .git/COMMIT_EDITMSG message
  ckpt hook git commit-msg .git/COMMIT_EDITMSG`,
				SkipFlagParsing: true,
				Action:          func(c *cli.Context) error { return runGitHook(c, env) },
			},
			{
				Name: "claude", Usage: "Claude Code hook", ArgsUsage: "EVENT",
				Description: `Reads the hook's JSON on standard input. Every conversation in a project writes to
the project's one session (the session bound to its git repository, else one named after
it, created at the end of the first turn); -s, $CKPT_SESSION or [claude] session in
config.toml name another, and [claude] per_conversation = true gives each conversation
its own. PreCompact takes a full checkpoint, Stop and SessionEnd a sparse one, each commit
naming the conversation and its transcript (Ckpt-Conversation); memory directories
tracked for the project (ckpt track) are committed too. SessionStart creates nothing:
after a compaction or a resume it prints the session's checkpoint back as context.

Examples:
  ckpt hook claude PreCompact < payload.json
  echo '{"session_id":"abc","source":"compact","cwd":"'"$PWD"'"}' | ckpt hook claude SessionStart`,
				Flags: []cli.Flag{
					sessionFlag(),
					&cli.StringFlag{Name: "scope", Usage: "the Claude Code settings `SCOPE` the hook is installed in: user keeps a project without a store in the user store"},
				},
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
	checkpoint := func(bypass string) error {
		outs, err := rn.PreCommit(top)
		if err != nil {
			return a.hookFailure(err)
		}
		if printPreCommit(env, outs) && a.cfg.Hooks.Strict {
			return hint.New(errors.New("commit blocked: a bound session's checkpoint fails check (hooks.strict = true)"), "fix it (ckpt check -s ID), or %s", bypass)
		}
		return nil
	}
	switch args[0] {
	case "pre-commit":
		return checkpoint("commit with --no-verify")
	case "prepare-commit-msg", "commit-msg":
		if args[0] == "prepare-commit-msg" {
			framework := len(args) > 1 && args[1] == "--checkpoint"
			if framework {
				args = append(args[:1], args[2:]...)
			}
			// ckpt's own pre-commit hook leaves its checkpoint to this one: one ckpt
			// process per commit.
			idx := env.Getenv("GIT_INDEX_FILE")
			if idx != "" {
				idx = absIn(top, idx)
			}
			marked, err := hooks.TakePreCommitMark(idx, env.Getenv("GIT_AUTHOR_DATE"))
			if err != nil {
				if err := a.hookFailure(err); err != nil {
					return err
				}
				err = nil // said as a warning (hooks.strict off): the commit goes on
			}
			switch {
			case framework:
				// The pre-commit framework's hook: the checkpoint, then its trailer, in the
				// one stage whose name every version of the framework knows.
				err = checkpoint("skip the hook: SKIP=ckpt git commit …")
			case marked:
				err = checkpoint("commit with --no-verify")
			}
			if err != nil {
				return err
			}
		}
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

// printPreCommit says on standard error, in one line, what pre-commit did to each session,
// and reports whether a checkpoint failed check.
func printPreCommit(env *Env, outs []hooks.Outcome) (rejected bool) {
	var parts []string
	warn := false
	for _, o := range outs {
		switch o.Result {
		case "ok", "nothing":
			parts = append(parts, fmt.Sprintf("%s: %s checkpoint (%s)", o.Session, o.Action, o.Reason))
		case "rejected":
			rejected, warn = true, true
			var errs []string
			for _, f := range o.Findings {
				if strings.Contains(f, ": error: ") {
					errs = append(errs, f)
				}
			}
			first := ""
			if len(errs) > 0 {
				first = " (" + errs[0]
				if n := len(errs) - 1; n > 0 {
					first += fmt.Sprintf(", and %d more", n)
				}
				first += ")"
			}
			parts = append(parts, fmt.Sprintf("%s: the checkpoint fails check%s; not taken, see ckpt check -s %s", o.Session, first, o.Session))
		case "busy":
			warn = true
			parts = append(parts, fmt.Sprintf("%s: busy (another ckpt holds it); %s checkpoint skipped", o.Session, o.Action))
		default:
			warn = true
			parts = append(parts, fmt.Sprintf("%s: %s checkpoint not taken: %s", o.Session, o.Action, oneLine(o.Error)))
		}
		if o.Tripped {
			parts = append(parts, fmt.Sprintf("%s: breaker open after repeated failures, sparse checkpoints only until ckpt breaker reset -s %s", o.Session, o.Session))
		}
	}
	if len(parts) == 0 {
		return false
	}
	msg := strings.Join(parts, "; ")
	if warn {
		msg = "warning: " + msg
	}
	fmt.Fprintln(env.Stderr, "ckpt: "+msg)
	return rejected
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
	if perr == nil && p.Cwd != "" {
		// The store and the project are found from the agent's working directory, not from
		// wherever the hook runs.
		if env, err = inProject(env, &p); err != nil {
			fmt.Fprintf(env.Stderr, "ckpt: warning: %s: %v\n", p.Cwd, err)
			return nil
		}
	}
	cwd, err := env.Getwd()
	if err != nil {
		return err
	}
	store, keyed := claudeStore(c, env, cwd)
	if store == "" {
		return nil // no store, and none to make: no home directory for the user store
	}
	a, err := openStore(store, env, true, event != "SessionStart") // SessionStart never commits
	if err != nil {
		fmt.Fprintf(env.Stderr, "ckpt: warning: %v\n", err)
		return nil
	}
	if perr != nil {
		return a.hookFailure(perr)
	}
	if event != "SessionStart" { // the only event that never creates a session
		if err := home.Ensure(a.home); err != nil {
			return a.hookFailure(err)
		}
	}
	res, err := hooks.NewRunner(a.svc, a.sync).Claude(event, p, a.claudeOptions(c, cwd, keyed))
	if err != nil {
		return a.hookFailure(err)
	}
	return a.printClaude(res)
}

// claudeStore is the store of a Claude Code hook run in cwd: --home or $CKPT_HOME, else
// the store there is (the project's .ckpt, a linked worktree's repository's), else, for
// hooks installed for the user (--scope user) or outside a git work tree, the user store
// shared by every project (keyed: a project's session carries a key of its path), else
// .ckpt at the top of the project, created with its .gitignore on first use.
func claudeStore(c *cli.Context, env *Env, cwd string) (dir string, keyed bool) {
	if f := c.String("home"); f != "" {
		return absIn(cwd, f), false
	}
	if dir := home.Existing(cwd); dir != "" {
		return dir, false
	}
	if c.String("scope") == "user" || home.GitTop(cwd) == "" {
		dir := home.UserStore(env.Getenv)
		return dir, dir != ""
	}
	return filepath.Join(home.Project(cwd), home.Dir), false
}

// claudeOptions say which session a Claude Code conversation in cwd writes to: -s or
// $CKPT_SESSION, else [claude] session, else the project's ([claude] per_conversation: the
// conversation's own).
func (a *app) claudeOptions(c *cli.Context, cwd string, keyed bool) hooks.ClaudeOptions {
	o := hooks.ClaudeOptions{
		Session: c.String("session"), PerConversation: a.cfg.Claude.PerConversation,
		Template: a.cfg.Hooks.Template, Project: home.Project(cwd), Keyed: keyed || a.home == home.UserStore(a.env.Getenv),
		UserHome: a.env.userHome(),
	}
	if o.Session == "" {
		o.Session = a.cfg.Claude.Session
	}
	if o.Template == "" {
		o.Template = templates.Default
	}
	return o
}

// inProject is env working in the agent's project directory, the payload's cwd; a relative
// transcript path is taken from there too.
func inProject(env *Env, p *hooks.ClaudePayload) (*Env, error) {
	if !filepath.IsAbs(p.Cwd) {
		return env, errors.New("not an absolute path")
	}
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

// printClaude says what an agent hook did, in one line on standard error when there is
// something to say, and gives the checkpoint back to the agent as context on SessionStart.
func (a *app) printClaude(res hooks.ClaudeResult) error {
	env := a.env
	var parts []string
	failed := false
	if res.Created {
		parts = append(parts, "created session "+res.Session+" for this project's Claude Code conversations")
	}
	for _, o := range res.Outcomes {
		parts = append(parts, o.Warnings...)
		if o.Result != "ok" && o.Result != "nothing" {
			failed = true
			parts = append(parts, fmt.Sprintf("%s: %s checkpoint not taken: %s", o.Session, o.Action, oneLine(o.Error)))
		}
		if o.Tripped {
			parts = append(parts, fmt.Sprintf("%s: breaker open, sparse checkpoints only until ckpt breaker reset -s %s", o.Session, o.Session))
		}
	}
	if len(parts) > 0 {
		msg := strings.Join(parts, "; ")
		if failed && a.cfg.Hooks.Strict {
			return errors.New(msg)
		}
		if created := res.Created && len(parts) == 1; !created {
			msg = "warning: " + msg
		}
		fmt.Fprintln(env.Stderr, "ckpt: "+msg)
	}
	if res.Context == "" {
		return nil
	}
	out := map[string]any{"hookSpecificOutput": map[string]string{
		"hookEventName":     "SessionStart",
		"additionalContext": "The checkpoint of this work (ckpt session " + res.Session + "), as you last wrote it:\n\n" + res.Context,
	}}
	enc := json.NewEncoder(env.Stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// oneLine is the first line of s.
func oneLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
