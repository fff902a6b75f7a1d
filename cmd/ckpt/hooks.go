package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/hooks"
)

func hooksCommand(env *Env) *cli.Command {
	flags := func() []cli.Flag {
		return []cli.Flag{
			&cli.BoolFlag{Name: "git", Usage: "git pre-commit, prepare-commit-msg and commit-msg hooks"},
			&cli.BoolFlag{Name: "claude", Usage: "Claude Code hooks (PreCompact, Stop, SessionStart, SessionEnd)"},
			&cli.BoolFlag{Name: "mcp", Usage: "register ckpt mcp with Claude Code in the project's .mcp.json"},
			&cli.BoolFlag{Name: "cron", Usage: "a crontab line that runs ckpt cron tick"},
			&cli.BoolFlag{Name: "merge-driver", Usage: "the section-aware merge driver for checkpoint files in this repository"},
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
uninstall puts it back byte for byte.

--claude merges ckpt's entries into Claude Code's settings (--scope project, local or
user), keeping every other key and hook: PreCompact → full checkpoint, Stop and
SessionEnd → sparse, SessionStart after a compaction or resume → the checkpoint comes
back as context.

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
  ckpt hooks status
  ckpt hooks uninstall --git`,
		Subcommands: []*cli.Command{
			{Name: "install", Usage: "install hooks", Flags: flags(), Action: func(c *cli.Context) error { return runHooks(c, env, "install") }},
			{Name: "uninstall", Usage: "remove ckpt's hooks, restoring what was there", Flags: flags(), Action: func(c *cli.Context) error { return runHooks(c, env, "uninstall") }},
			{Name: "status", Usage: "say what is installed where", Flags: flags(), Action: func(c *cli.Context) error { return runHooks(c, env, "status") }},
		},
	}
}

// hooksReport is what hooks install/uninstall/status print with --json.
type hooksReport struct {
	Ckpt        string                   `json:"ckpt"` // the ckpt on PATH, "" if none
	Git         []hooks.GitHookStatus    `json:"git,omitempty"`
	Claude      map[string][]string      `json:"claude,omitempty"` // settings file -> events
	MCP         map[string]bool          `json:"mcp,omitempty"`    // .mcp.json -> ckpt registered
	Cron        *cronStatus              `json:"cron,omitempty"`
	MergeDriver *hooks.MergeDriverStatus `json:"merge_driver,omitempty"`
}

type cronStatus struct {
	Installed bool   `json:"installed"`
	Line      string `json:"line,omitempty"`
	Error     string `json:"error,omitempty"`
}

func runHooks(c *cli.Context, env *Env, verb string) error {
	if err := noArgs(c); err != nil {
		return err
	}
	all := !c.Bool("git") && !c.Bool("claude") && !c.Bool("cron") && !c.Bool("merge-driver") && !c.Bool("mcp")
	if all && verb != "status" {
		return usageError("say what to %s: --git, --claude, --mcp, --cron or --merge-driver", verb)
	}
	if c.Bool("mcp") && c.IsSet("scope") && c.String("scope") != "project" {
		return usageError("--mcp registers the server in the project's .mcp.json only\nhint: for your user scope run: claude mcp add --scope %s ckpt -- ckpt mcp", c.String("scope"))
	}
	a, err := open(c, env)
	if err != nil {
		return err
	}
	repoDir := c.String("repo")
	if repoDir == "" {
		if repoDir, err = os.Getwd(); err != nil {
			return err
		}
	}
	rep := hooksReport{}
	if p, err := exec.LookPath("ckpt"); err == nil {
		rep.Ckpt = p
	}
	w := env.Stdout
	if all || c.Bool("git") {
		var st []hooks.GitHookStatus
		switch verb {
		case "install":
			st, err = hooks.InstallGit(repoDir)
		case "uninstall":
			st, err = hooks.UninstallGit(repoDir)
		default:
			st, err = hooks.StatusGit(repoDir)
		}
		if err != nil && !(all && verb == "status") {
			return err
		}
		rep.Git = st
	}
	if all || c.Bool("claude") {
		rep.Claude = map[string][]string{}
		scopes := []string{c.String("scope")}
		if verb == "status" && !c.IsSet("scope") {
			scopes = []string{"project", "local", "user"}
		}
		home, _ := os.UserHomeDir()
		project := projectDir(repoDir)
		for _, scope := range scopes {
			path, err := hooks.ClaudeSettingsPath(scope, project, home)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			switch verb {
			case "install":
				_, err = hooks.InstallClaude(path)
			case "uninstall":
				_, err = hooks.UninstallClaude(path)
			}
			if err != nil {
				return err
			}
			events, err := hooks.StatusClaude(path)
			if err != nil {
				return err
			}
			rep.Claude[path] = events
		}
	}
	if all || c.Bool("mcp") {
		path := hooks.ClaudeMCPPath(projectDir(repoDir))
		switch verb {
		case "install":
			_, err = hooks.InstallClaudeMCP(path)
		case "uninstall":
			_, err = hooks.UninstallClaudeMCP(path)
		}
		if err != nil {
			return err
		}
		ok, err := hooks.StatusClaudeMCP(path)
		if err != nil && !(all && verb == "status") {
			return err
		}
		rep.MCP = map[string]bool{path: ok}
	}
	if all || c.Bool("cron") {
		cs, err := a.cron(c, verb)
		if err != nil && !(all && verb == "status") {
			return err
		}
		rep.Cron = cs
	}
	if all || c.Bool("merge-driver") {
		var st hooks.MergeDriverStatus
		switch verb {
		case "install":
			st, _, err = hooks.InstallMergeDriver(repoDir)
		case "uninstall":
			st, _, err = hooks.UninstallMergeDriver(repoDir)
		default:
			st, err = hooks.StatusMergeDriver(repoDir)
		}
		if err != nil && !(all && verb == "status") {
			return err
		}
		if err == nil {
			rep.MergeDriver = &st
		}
	}
	if c.Bool("json") {
		return printJSON(w, rep)
	}
	for _, h := range rep.Git {
		state := "not installed"
		switch {
		case h.Installed && h.Chained != "":
			state = "installed, runs " + relPath(h.Chained) + " first"
		case h.Installed:
			state = "installed"
		case h.Foreign:
			state = "not installed (another hook is there)"
		}
		fmt.Fprintf(w, "git %-18s %s: %s\n", h.Hook, relPath(h.Path), state)
	}
	for path, events := range rep.Claude {
		state := "not installed"
		if len(events) > 0 {
			state = fmt.Sprint(events)
		}
		fmt.Fprintf(w, "claude  %s: %s\n", relPath(path), state)
	}
	for path, ok := range rep.MCP {
		state := "ckpt not registered"
		if ok {
			state = "ckpt registered (ckpt mcp)"
		}
		fmt.Fprintf(w, "mcp     %s: %s\n", relPath(path), state)
	}
	if rep.Cron != nil {
		switch {
		case rep.Cron.Error != "":
			fmt.Fprintf(w, "cron    %s\n", rep.Cron.Error)
		case rep.Cron.Installed:
			fmt.Fprintf(w, "cron    installed: %s\n", rep.Cron.Line)
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
		fmt.Fprintf(w, "merge   %s: %s\n", relPath(md.Attributes), state)
	}
	if rep.Ckpt == "" {
		fmt.Fprintln(env.Stderr, "ckpt: warning: no ckpt on PATH: the hooks call the ckpt found on PATH and will skip checkpoints until there is one")
	}
	return nil
}

// projectDir is the top of the git work tree holding dir (Claude Code's project), else dir.
func projectDir(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	if top := gitTop(abs); top != "" {
		return top
	}
	return abs
}

// gitTop walks up from dir to the directory holding .git, without running git.
func gitTop(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

var errNoCrontab = errors.New("no crontab command on this machine")
