package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/hooks"
	"github.com/ckpt-dev/ckpt/internal/hint"
)

func hooksCommand(env *Env) *cli.Command {
	flags := func() []cli.Flag {
		return []cli.Flag{
			&cli.BoolFlag{Name: "git", Usage: "git pre-commit, prepare-commit-msg and commit-msg hooks"},
			&cli.BoolFlag{Name: "local", Usage: "git: in this clone's own hooks directory, for a repository that commits its hooks"},
			&cli.BoolFlag{Name: "claude", Usage: "Claude Code hooks (PreCompact, Stop, SessionStart, SessionEnd)"},
			&cli.BoolFlag{Name: "mcp", Usage: "register ckpt mcp with Claude Code in the project's .mcp.json"},
			&cli.BoolFlag{Name: "cron", Usage: "a crontab line that runs ckpt cron tick"},
			&cli.BoolFlag{Name: "merge-driver", Usage: "the section-aware merge driver for checkpoint files in this repository"},
			sessionFlag(),
			&cli.StringFlag{Name: "repo", Usage: "the git repository `DIR` (default: the current directory)"},
			&cli.StringFlag{Name: "scope", Value: "project", Usage: "Claude Code settings: project, local or user"},
			&cli.DurationFlag{Name: "every", Value: defaultEvery, Usage: "cron: how often to tick"},
			jsonFlag(),
		}
	}
	return &cli.Command{
		Name:  "hooks",
		Usage: "install, remove or inspect the hooks that checkpoint for you",
		Description: `--git installs pre-commit (a sparse checkpoint of the sessions bound to the repository,
full when notes are pending; never blocks a commit unless hooks.strict = true) and
prepare-commit-msg (a Ckpt-Checkpoint: <session>@<hash> trailer; commit-msg adds it to a
message written in the editor) into the directory git really uses (core.hooksPath
honoured). A hook already there is kept and runs first;
uninstall puts it back byte for byte. When the hooks directory is one the repository
commits, install says so: --local then keeps ckpt's hooks in the clone's own directory
(core.hooksPath in its config), running the committed ones first.

--claude merges ckpt's entries into Claude Code's settings (--scope project, local or
user), keeping every other key and hook: PreCompact → full checkpoint, Stop and
SessionEnd → sparse, SessionStart after a compaction or resume → the checkpoint comes
back as context. Every conversation of the project writes to its one session, found or
created now and named in the hooks (-s names another). It also installs the agent's
instructions (where the files are, what each section is for, when to write them): a file
.claude/ckpt.md that CLAUDE.md imports, since Claude Code reads CLAUDE.md whole at every
start. docs/claude-code.md has the rest.

--mcp registers ckpt mcp (the agent recalls its history: ckpt mcp --help) as a stdio
server named "ckpt" in the project's .mcp.json, which Claude Code reads and which is
meant to be committed; uninstall removes only that entry. For your user scope instead:
claude mcp add --scope user ckpt -- ckpt mcp.

--cron adds one crontab line running ckpt cron tick --every 15m (without crontab, prints
the line and a systemd timer). --merge-driver registers ckpt merge-driver for checkpoint
files kept in this repository (.gitattributes and git config).

Examples:
  ckpt hooks install --git --claude
  ckpt hooks install --claude --mcp
  ckpt hooks install --git --local
  ckpt hooks status
  ckpt hooks uninstall --git`,
		Subcommands: []*cli.Command{
			{
				Name: "install", Usage: "install hooks", Flags: flags(),
				Description: `Installs what the flags name (at least one): git hooks in --repo, Claude Code
hooks in the --scope settings, the cron line, the merge driver. Installing again
changes nothing.

Examples:
  ckpt hooks install --git --claude
  ckpt hooks install --claude --scope user
  ckpt hooks install --cron --every 30m`,
				Action: func(c *cli.Context) error { return runHooks(c, env, hooks.Install) },
			},
			{
				Name: "uninstall", Usage: "remove ckpt's hooks, restoring what was there", Flags: flags(),
				Description: `Removes what the flags name and puts back, byte for byte, the hooks ckpt's
had kept; every other setting stays.

Examples:
  ckpt hooks uninstall --git
  ckpt hooks uninstall --claude --scope local`,
				Action: func(c *cli.Context) error { return runHooks(c, env, hooks.Uninstall) },
			},
			{
				Name: "status", Usage: "say what is installed where", Flags: flags(),
				Description: `Says what is installed where; without flags, everything, in every Claude Code
scope.

Examples:
  ckpt hooks status
  ckpt hooks status --git --json`,
				Action: func(c *cli.Context) error { return runHooks(c, env, hooks.Inspect) },
			},
		},
	}
}

func runHooks(c *cli.Context, env *Env, verb hooks.Verb) error {
	if err := noArgs(c); err != nil {
		return err
	}
	if c.Bool("local") && !c.Bool("git") {
		return usageError("--local goes with --git")
	}
	s := hooks.Setup{Git: c.Bool("git"), GitLocal: c.Bool("local"), Claude: c.Bool("claude"), MCP: c.Bool("mcp"), Cron: c.Bool("cron"), MergeDriver: c.Bool("merge-driver"),
		RepoDir: c.String("repo"), Scopes: []string{c.String("scope")}, UserHome: env.userHome()}
	all := !s.Git && !s.Claude && !s.MCP && !s.Cron && !s.MergeDriver
	if all && verb != hooks.Inspect {
		return usageError("say what to %s: --git, --claude, --mcp, --cron or --merge-driver", verb)
	}
	if s.MCP && c.IsSet("scope") && c.String("scope") != "project" {
		return hint.New(usageError("--mcp registers the server in the project's .mcp.json only"), "for your user scope run: claude mcp add --scope %s ckpt -- ckpt mcp", c.String("scope"))
	}
	if (all || s.Claude) && !slices.Contains(hooks.ClaudeScopes, c.String("scope")) {
		return usageError("--scope %q: want project, local or user", c.String("scope"))
	}
	if verb == hooks.Inspect && !c.IsSet("scope") {
		s.Scopes = hooks.ClaudeScopes
	}
	a, err := open(c, env)
	if err != nil {
		return err
	}
	if s.RepoDir == "" {
		if s.RepoDir, err = env.Getwd(); err != nil {
			return err
		}
	}
	if all || s.Cron {
		if s.Crontab, err = a.cronSetup(c, verb); err != nil {
			return err
		}
	}
	if s.Claude && verb == hooks.Install {
		if err := a.claudeSetup(c, &s); err != nil {
			return err
		}
	}
	rep, err := hooks.Apply(verb, s)
	if err != nil {
		return err
	}
	rep.Ckpt, _ = env.LookPath("ckpt")
	if c.Bool("json") {
		return printJSON(env.Stdout, rep)
	}
	printHooks(env, rep)
	if verb == hooks.Install && len(rep.Git) > 0 && rep.Git[0].Committed {
		dir := env.relPath(filepath.Dir(rep.Git[0].Path))
		fmt.Fprintf(env.Stderr, "ckpt: warning: %s holds hooks this repository commits: ckpt's changes there show in git status, and a commit -a would give them to everyone\n", dir)
		fmt.Fprintln(env.Stderr, "ckpt: hint: ckpt hooks uninstall --git && ckpt hooks install --git --local keeps ckpt's hooks in this clone only, running the committed ones first")
	}
	if rep.Ckpt == "" {
		fmt.Fprintln(env.Stderr, "ckpt: warning: no ckpt on PATH: the hooks call the ckpt found on PATH and will skip checkpoints until there is one")
	}
	return nil
}

// claudeSetup is what installing the Claude Code hooks adds to s: the flags of the hook
// commands and the agent's instructions. For a project (scopes project and local) the
// session its conversations write to is found or created now, and named in the hook
// commands, so that the instructions can name its files; the user scope's instructions
// have the agent ask ckpt agent-prompt instead.
func (a *app) claudeSetup(c *cli.Context, s *hooks.Setup) error {
	scope := s.Scopes[0]
	if c.IsSet("session") {
		if _, err := sessionID(c); err != nil {
			return err
		}
		s.ClaudeFlags = append(s.ClaudeFlags, "-s", c.String("session"))
	}
	if scope == "user" {
		s.ClaudeFlags = append(s.ClaudeFlags, "--scope", "user")
		s.Instructions = hooks.UserScopePrompt
		return nil
	}
	project := hooks.ProjectDir(s.RepoDir)
	o := a.claudeOptions(c, project, false)
	if o.PerConversation && o.Session == "" {
		s.Instructions = hooks.UserScopePrompt // no one session to name yet
		return nil
	}
	if err := a.ensureHome(); err != nil {
		return err
	}
	r, created, err := hooks.NewRunner(a.svc, a.sync).EnsureClaudeSession("", o)
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(a.env.Stderr, "ckpt: created session %s for this project's Claude Code conversations\n", r.ID)
	}
	// Named in the hook commands, which the project's settings share with every clone: a
	// clone in a directory of another name writes to the session the instructions name.
	if !c.IsSet("session") {
		s.ClaudeFlags = append(s.ClaudeFlags, "-s", r.ID)
	}
	s.Instructions, err = hooks.AgentPrompt(a.svc, r, func(p string) string { return relTo(project, p) })
	return err
}

// relTo shows p relative to dir when it is below it.
func relTo(dir, p string) string {
	if rel, err := filepath.Rel(dir, p); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return p
}

// printHooks says what is installed where, one line per hook.
func printHooks(env *Env, rep hooks.Report) {
	w := env.Stdout
	for _, h := range rep.Git {
		state := "not installed"
		switch {
		case h.Installed && h.Local:
			state = "installed in this clone's own hooks directory"
			if h.Chained != "" {
				state += ", runs " + env.relPath(h.Chained) + " first"
			}
		case h.Installed && h.Chained != "":
			state = "installed, runs " + env.relPath(h.Chained) + " first"
		case h.Installed:
			state = "installed"
		case h.Foreign:
			state = "not installed (another hook is there)"
		}
		fmt.Fprintf(w, "git %-18s %s: %s\n", h.Hook, env.relPath(h.Path), state)
	}
	for path, events := range rep.Claude {
		state := "not installed"
		if len(events) > 0 {
			state = fmt.Sprint(events)
		}
		fmt.Fprintf(w, "claude  %s: %s\n", env.relPath(path), state)
	}
	for path, ok := range rep.Instructions {
		state := "does not import ckpt's instructions"
		if ok {
			state = "imports ckpt's instructions for the agent"
		}
		fmt.Fprintf(w, "agent   %s: %s\n", env.relPath(path), state)
	}
	for path, ok := range rep.MCP {
		state := "ckpt not registered"
		if ok {
			state = "ckpt registered (ckpt mcp)"
		}
		fmt.Fprintf(w, "mcp     %s: %s\n", env.relPath(path), state)
	}
	if cs := rep.Cron; cs != nil {
		fmt.Fprint(w, cs.Units)
		switch {
		case cs.Error != "":
			fmt.Fprintf(w, "cron    %s\n", cs.Error)
		case cs.Installed:
			fmt.Fprintf(w, "cron    installed: %s\n", cs.Line)
		default:
			fmt.Fprintln(w, "cron    not installed")
		}
	}
	if md := rep.MergeDriver; md != nil {
		state := "not registered"
		if md.Attributed && md.Configured {
			state = "registered (" + md.Driver + ")"
		} else if md.Attributed || md.Configured {
			state = fmt.Sprintf("half registered: .gitattributes %v, git config %v", md.Attributed, md.Configured)
		}
		fmt.Fprintf(w, "merge   %s: %s\n", env.relPath(md.Attributes), state)
	}
}
