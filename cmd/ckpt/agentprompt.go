package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/hooks"
)

func agentPromptCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "agent-prompt",
		Usage: "print the instructions that make an agent keep its checkpoint",
		Description: `Prints, in Markdown, what an agent needs to keep a session's files: where
checkpoint.md and notes.md are, what each section of the session's template is for, when
to append to notes.md and when to rewrite checkpoint.md. ckpt hooks install --claude
installs the same text for Claude Code; for any other harness put it where the agent
reads it (Codex's AGENTS.md, Gemini CLI's GEMINI.md, the system prompt of your own loop).

Without -s, the session is the current project's, as the Claude Code hooks find it, and
is created when there is none yet; --scope user looks for it (or makes it) in the user
store, as hooks installed for the user do.

Examples:
  ckpt agent-prompt -s alpha >> AGENTS.md
  ckpt agent-prompt -s alpha > GEMINI.md
  ckpt agent-prompt --scope user`,
		Flags: []cli.Flag{
			sessionFlag(),
			&cli.StringFlag{Name: "scope", Usage: "user: the project's session in the user store, as user-scope hooks keep it"},
		},
		Action: func(c *cli.Context) error { return runAgentPrompt(c, env) },
	}
}

func runAgentPrompt(c *cli.Context, env *Env) error {
	if err := noArgs(c); err != nil {
		return err
	}
	if c.String("session") != "" {
		a, r, err := openSession(c, env)
		if err != nil {
			return err
		}
		text, err := hooks.AgentPrompt(a.svc, r, nil)
		if err != nil {
			return err
		}
		fmt.Fprint(env.Stdout, text)
		return nil
	}
	cwd, err := env.Getwd()
	if err != nil {
		return err
	}
	store, keyed := claudeStore(c, env, cwd)
	if store == "" {
		return usageError("no store, and no home directory for the user store: pass -s ID or --home")
	}
	a, err := openStore(store, env, false, true)
	if err != nil {
		return err
	}
	o := a.claudeOptions(c, cwd, keyed)
	if o.PerConversation && o.Session == "" {
		return usageError("[claude] per_conversation = true: each conversation has its own session; pass -s ID")
	}
	if err := a.ensureHome(); err != nil {
		return err
	}
	r, created, err := hooks.NewRunner(a.svc, a.sync).EnsureClaudeSession("", o)
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(env.Stderr, "ckpt: created session %s for this project\n", r.ID)
	}
	text, err := hooks.AgentPrompt(a.svc, r, nil)
	if err != nil {
		return err
	}
	fmt.Fprint(env.Stdout, text)
	return nil
}
