package hooks

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/ckpt-dev/ckpt/internal/home"
)

// Verb is what Apply does with the hooks it is given.
type Verb string

// The verbs of ckpt hooks and ckpt cron.
const (
	Install   Verb = "install"
	Uninstall Verb = "uninstall"
	Inspect   Verb = "status"
)

// Setup says which hooks Apply handles, and where they live (MCP: ckpt mcp registered in
// the project's .mcp.json). With none of Git, Claude, MCP, Cron and MergeDriver set, Apply inspects them all and reports what it cannot read as
// not installed.
type Setup struct {
	Git, Claude, MCP, Cron, MergeDriver bool
	// GitLocal puts the git hooks in the clone's own hooks directory (InstallGitLocal),
	// for a repository whose hooks directory is committed.
	GitLocal bool
	// RepoDir is the git repository of the git hooks and the merge driver; the Claude Code
	// project is the top of its work tree.
	RepoDir string
	// Scopes are the Claude Code settings to change or read: project, local or user.
	Scopes []string
	// ClaudeFlags go into the command of each Claude Code hook (-s NAME, --scope user).
	ClaudeFlags []string
	// Instructions, when set, are installed with the Claude Code hooks: the text that
	// tells the agent to keep its checkpoint (AgentPrompt), as a file CLAUDE.md imports.
	Instructions string
	// UserHome is the user's home directory, where the user scope's settings are.
	UserHome string
	// Crontab is ckpt's cron line and the user's crontab.
	Crontab CronSetup
}

// Report says what is installed where.
type Report struct {
	Ckpt   string              `json:"ckpt"` // the ckpt on PATH, "" if none
	Git    []GitHookStatus     `json:"git,omitempty"`
	Claude map[string][]string `json:"claude,omitempty"` // settings file -> events
	// Instructions: CLAUDE.md -> whether it imports ckpt's instructions.
	Instructions map[string]bool    `json:"instructions,omitempty"`
	MCP          map[string]bool    `json:"mcp,omitempty"` // .mcp.json -> ckpt registered
	Cron         *CronStatus        `json:"cron,omitempty"`
	MergeDriver  *MergeDriverStatus `json:"merge_driver,omitempty"`
}

// Apply installs, removes or inspects the hooks s names, and reports the state of each
// afterwards.
func Apply(verb Verb, s Setup) (Report, error) {
	all := !s.Git && !s.Claude && !s.MCP && !s.Cron && !s.MergeDriver
	// Inspecting everything, a hook that cannot be read is reported as not installed.
	lenient := func(err error) error {
		if all && verb == Inspect {
			return nil
		}
		return err
	}
	var rep Report
	var err error
	if all || s.Git {
		switch {
		case verb == Install && s.GitLocal:
			rep.Git, err = InstallGitLocal(s.RepoDir)
		case verb == Install:
			rep.Git, err = InstallGit(s.RepoDir)
		case verb == Uninstall && s.GitLocal:
			rep.Git, err = UninstallGitLocal(s.RepoDir)
		case verb == Uninstall:
			rep.Git, err = UninstallGit(s.RepoDir)
		case s.GitLocal:
			rep.Git, err = StatusGitLocal(s.RepoDir)
		default:
			rep.Git, err = StatusGit(s.RepoDir)
		}
		if err = lenient(err); err != nil {
			return rep, err
		}
	}
	if all || s.Claude {
		if rep.Claude, rep.Instructions, err = applyClaude(verb, s); err != nil {
			return rep, err
		}
	}
	if all || s.MCP {
		path := ClaudeMCPPath(ProjectDir(s.RepoDir))
		switch verb {
		case Install:
			_, err = InstallClaudeMCP(path)
		case Uninstall:
			_, err = UninstallClaudeMCP(path)
		}
		if err != nil {
			return rep, err
		}
		ok, err := StatusClaudeMCP(path)
		if lenient(err) != nil {
			return rep, err
		}
		rep.MCP = map[string]bool{path: ok}
	}
	if all || s.Cron {
		if rep.Cron, err = ApplyCron(verb, s.Crontab); lenient(err) != nil {
			return rep, err
		}
	}
	if all || s.MergeDriver {
		var st MergeDriverStatus
		switch verb {
		case Install:
			st, _, err = InstallMergeDriver(s.RepoDir)
		case Uninstall:
			st, _, err = UninstallMergeDriver(s.RepoDir)
		default:
			st, err = StatusMergeDriver(s.RepoDir)
		}
		if lenient(err) != nil {
			return rep, err
		}
		if err == nil {
			rep.MergeDriver = &st
		}
	}
	return rep, nil
}

// applyClaude handles the Claude Code settings and instructions of each scope, and
// returns the events installed in each settings file and whether each CLAUDE.md imports
// the instructions.
func applyClaude(verb Verb, s Setup) (map[string][]string, map[string]bool, error) {
	out, instr := map[string][]string{}, map[string]bool{}
	project := ProjectDir(s.RepoDir)
	for _, scope := range s.Scopes {
		path, err := ClaudeSettingsPath(scope, project, s.UserHome)
		if err != nil {
			return out, instr, err
		}
		ci, err := ClaudeInstructionsPath(scope, project, s.UserHome)
		if err != nil {
			return out, instr, err
		}
		switch verb {
		case Install:
			if _, err = InstallClaude(path, s.ClaudeFlags...); err == nil && s.Instructions != "" {
				_, err = InstallInstructions(ci, s.Instructions)
			}
		case Uninstall:
			if _, err = UninstallClaude(path); err == nil {
				_, err = UninstallInstructions(ci)
			}
		}
		if err != nil {
			return out, instr, err
		}
		if out[path], err = StatusClaude(path); err != nil {
			return out, instr, err
		}
		if instr[ci.Memory], err = StatusInstructions(ci); err != nil {
			return out, instr, err
		}
	}
	return out, instr, nil
}

// ClaudeScopes are the scopes of Claude Code's settings, in the order status lists them.
var ClaudeScopes = []string{"project", "local", "user"}

// ProjectDir is Claude Code's project for dir: the main work tree of the git repository
// holding it (a linked worktree belongs to its repository's project), else dir itself.
func ProjectDir(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	return home.Project(abs)
}

// CronSetup is what installing ckpt's cron line needs.
type CronSetup struct {
	// Crontab is the user's crontab; nil when the machine has no crontab command.
	Crontab Crontab
	// Line is the line to install (CronLine); Home the store, whose line it is.
	Line, Home string
	// Every is how often the line ticks, and Ckpt the program it runs: without a crontab,
	// install returns systemd units that do the same.
	Every time.Duration
	Ckpt  string
}

// CronStatus says whether ckpt's line is in the crontab. Error says why that cannot be
// known (no crontab command); then Units, after an install, are the line and the systemd
// units to set up by hand instead.
type CronStatus struct {
	Installed bool   `json:"installed"`
	Line      string `json:"line,omitempty"`
	Error     string `json:"error,omitempty"`
	Units     string `json:"-"`
}

// ApplyCron installs, removes or inspects ckpt's crontab line.
func ApplyCron(verb Verb, c CronSetup) (*CronStatus, error) {
	if c.Crontab == nil {
		st := &CronStatus{Error: "no crontab command on this machine; add this line to your scheduler, or use the systemd units below"}
		if verb == Install {
			svc, timer, err := SystemdUnits(c.Every, c.Ckpt, c.Home)
			if err != nil {
				return nil, err
			}
			st.Units = fmt.Sprintf("%s\n\n# ~/.config/systemd/user/ckpt-tick.service\n%s\n# ~/.config/systemd/user/ckpt-tick.timer\n%s\n# then: systemctl --user enable --now ckpt-tick.timer\n", c.Line, svc, timer)
		}
		return st, nil
	}
	switch verb {
	case Install:
		if _, err := InstallCron(c.Crontab, c.Line); err != nil {
			return nil, err
		}
	case Uninstall:
		if _, err := UninstallCron(c.Crontab, c.Home); err != nil {
			return nil, err
		}
	}
	got, ok, err := CronInstalled(c.Crontab, c.Home)
	if err != nil {
		return nil, err
	}
	return &CronStatus{Installed: ok, Line: got}, nil
}
