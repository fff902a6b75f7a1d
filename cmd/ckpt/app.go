package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/internal/config"
	"github.com/ckpt-dev/ckpt/internal/gitident"
	"github.com/ckpt-dev/ckpt/internal/hint"
	"github.com/ckpt-dev/ckpt/internal/home"
	"github.com/ckpt-dev/ckpt/remote"
	"github.com/ckpt-dev/ckpt/repo"
	ckptsync "github.com/ckpt-dev/ckpt/sync"
	"github.com/ckpt-dev/ckpt/templates"
)

// Exit codes (DESIGN.md, CLI contract).
const (
	exitOK       = 0
	exitFailure  = 1
	exitUsage    = 2
	exitRejected = 3
	exitBusy     = 4
	exitConflict = 5
)

// Env is what a command may touch of the outside world; tests replace it. Every
// environment variable, the working directory and every PATH lookup are read through it.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// Getwd is the working directory (os.Getwd).
	Getwd func() (string, error)
	// LookPath finds a program on PATH (exec.LookPath).
	LookPath func(string) (string, error)
	// Color is true when stdout is a terminal and NO_COLOR is unset.
	Color bool
	// Progress is true when stderr is a terminal: long operations show progress there.
	Progress bool
}

func stdEnv() *Env {
	env := &Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Getwd: os.Getwd, LookPath: exec.LookPath}
	force := env.Getenv("CLICOLOR_FORCE")
	env.Color = (term.IsTerminal(int(os.Stdout.Fd())) || (force != "" && force != "0")) && env.Getenv("NO_COLOR") == ""
	env.Progress = term.IsTerminal(int(os.Stderr.Fd()))
	return env
}

// in returns a copy of e whose working directory is dir.
func (e *Env) in(dir string) *Env {
	c := *e
	c.Getwd = func() (string, error) { return dir, nil }
	return &c
}

// userHome is the user's home directory ($HOME), "" when unset.
func (e *Env) userHome() string { return e.Getenv("HOME") }

// exitError carries an exit code other than 1.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageError(format string, args ...any) error {
	return &exitError{exitUsage, fmt.Errorf(format, args...)}
}

// silentExit ends with a code after the command already said what it had to say.
type silentExit int

func (s silentExit) Error() string { return fmt.Sprintf("exit %d", int(s)) }

// Main runs the CLI and returns the exit code. It is the only place that decides codes.
func Main(args []string, env *Env) int {
	// Data goes out through a buffer (a diff or a search prints thousands of lines); it is
	// flushed before any message on stderr so the two keep their order.
	out := bufio.NewWriterSize(env.Stdout, 64<<10)
	buffered := *env
	buffered.Stdout = out
	app := newApp(&buffered, commandsFor(args, &buffered))
	err := app.Run(append([]string{"ckpt"}, interspersed(app, args)...))
	if ferr := out.Flush(); err == nil && ferr != nil && !errors.Is(ferr, syscall.EPIPE) {
		err = ferr
	}
	if err == nil {
		return exitOK
	}
	if errors.Is(err, errFullBuild) || errors.Is(err, repo.ErrGoGitElsewhere) {
		// Nothing was written yet: the full build does the whole command (fullbuild.go).
		return runFullBuild(args, env)
	}
	var silent silentExit
	if errors.As(err, &silent) {
		return int(silent)
	}
	// Errors quote URLs (git's own messages do): never a password.
	printError(env.Stderr, err)
	return exitCode(err)
}

// printError prints err as `ckpt: <message>` and its hint as `ckpt: hint: <hint>`. Errors
// quote URLs (git's own messages do): never a password.
func printError(w io.Writer, err error) {
	fmt.Fprintf(w, "ckpt: %s\n", repo.MaskURLs(err.Error()))
	if h := hint.Of(err); h != "" {
		fmt.Fprintf(w, "ckpt: hint: %s\n", repo.MaskURLs(h))
	}
}

func exitCode(err error) int {
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, repo.ErrInvalidSession), errors.Is(err, templates.ErrUnknown),
		errors.Is(err, repo.ErrInvalidName), errors.Is(err, repo.ErrBadWorktree):
		return exitUsage
	case errors.Is(err, checkpoint.ErrRejected):
		return exitRejected
	case errors.Is(err, repo.ErrBusy):
		return exitBusy
	case errors.Is(err, remote.ErrConflict):
		return exitConflict
	}
	return exitFailure
}

// newApp is the CLI with the given commands (commandsFor).
func newApp(env *Env, cmds []*cli.Command) *cli.App {
	app := &cli.App{
		Name:    "ckpt",
		Usage:   "version an agent session's checkpoint files in git",
		Version: version(),
		Description: `ckpt turns every write of a session's checkpoint.md into a commit in a per-session git
repository, so nothing a session wrote is ever lost, and lets you browse the history
section by section.

Sessions live in the store: --home, else $CKPT_HOME, else .ckpt/ at the top of the
enclosing git work tree (else in the current directory). A command that works on one
session takes -s ID or $CKPT_SESSION.

Exit codes: 0 ok (also "nothing to commit"), 1 failure, 2 usage error, 3 checkpoint
rejected by check, 4 busy (lock timeout), 5 merge conflict left for resolution.

Examples:
  ckpt init -s alpha
  agent-writes-checkpoint | ckpt write -s alpha
  ckpt log -s alpha --section "Key Decisions"
  ckpt hooks install --git --claude`,
		Reader:                 env.Stdin,
		Writer:                 env.Stdout,
		ErrWriter:              env.Stderr,
		HideHelpCommand:        true,
		UseShortOptionHandling: true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "home", Usage: "the store directory", EnvVars: []string{"CKPT_HOME"}},
		},
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return &exitError{exitUsage, err}
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return hint.New(usageError("unknown command %q", c.Args().First()), "ckpt --help lists the commands")
			}
			return cli.ShowAppHelp(c)
		},
		Commands: cmds,
	}
	for _, c := range app.Commands {
		c.OnUsageError = app.OnUsageError
		for _, sub := range c.Subcommands {
			sub.OnUsageError = app.OnUsageError
		}
	}
	return app
}

// version is the module version ckpt was built from ("(devel)" for a build in the tree).
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// commandMakers build every command, in the order help lists them; each lives in its own
// file.
var commandMakers = [...]func(*Env) *cli.Command{
	initCommand,
	writeCommand,
	commitCommand,
	checkCommand,
	parseCommand,
	logCommand,
	showCommand,
	diffCommand,
	blameCommand,
	restoreCommand,
	sessionsCommand,
	trackCommand,
	pathCommand,
	templatesCommand,
	syncCommand,
	kgCommand,
	hooksCommand,
	hookCommand,
	agentPromptCommand,
	cronCommand,
	breakerCommand,
	statusCommand,
	searchCommand,
	mcpCommand,
	remoteCommand,
	pushCommand,
	pullCommand,
	cloneCommand,
	mergeDriverCommand,
	gcCommand,
	doctorCommand,
	redactCommand,
	uiCommand,
}

// commands lists every command.
func commands(env *Env) []*cli.Command {
	out := make([]*cli.Command, 0, len(commandMakers))
	for _, mk := range commandMakers {
		out = append(out, mk(env))
	}
	return out
}

// commandsFor is what a command line needs of the commands: the one it names, or none for
// --version; every one where help may list them (no command, --help) or the name is not a
// command. ckpt runs for milliseconds, after every agent turn: building 33 commands and
// their flags, and urfave/cli setting them all up, was a tenth of its start.
func commandsFor(args []string, env *Env) []*cli.Command {
	version := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return commands(env)
		case a == "--home" || a == "-home":
			i++ // its value, as interspersed reads it
		case a == "-h" || a == "--help" || a == "-help":
			return commands(env)
		case a == "-v" || a == "--version" || a == "-version":
			version = true
		case isFlag(a):
		default:
			// The command's name: interspersed takes the first argument that is not a flag.
			if mk := commandNamed(a); mk != nil {
				return []*cli.Command{mk(env)}
			}
			return commands(env)
		}
	}
	if version {
		return nil
	}
	return commands(env)
}

// commandNamed is the maker of the command called name, nil when there is none.
func commandNamed(name string) func(*Env) *cli.Command {
	switch name {
	case "init":
		return initCommand
	case "write":
		return writeCommand
	case "commit":
		return commitCommand
	case "check":
		return checkCommand
	case "parse":
		return parseCommand
	case "log":
		return logCommand
	case "show":
		return showCommand
	case "diff":
		return diffCommand
	case "blame":
		return blameCommand
	case "restore":
		return restoreCommand
	case "sessions":
		return sessionsCommand
	case "track":
		return trackCommand
	case "path":
		return pathCommand
	case "templates":
		return templatesCommand
	case "sync":
		return syncCommand
	case "kg":
		return kgCommand
	case "hooks":
		return hooksCommand
	case "hook":
		return hookCommand
	case "agent-prompt":
		return agentPromptCommand
	case "cron":
		return cronCommand
	case "breaker":
		return breakerCommand
	case "status":
		return statusCommand
	case "search":
		return searchCommand
	case "mcp":
		return mcpCommand
	case "remote":
		return remoteCommand
	case "push":
		return pushCommand
	case "pull":
		return pullCommand
	case "clone":
		return cloneCommand
	case "merge-driver":
		return mergeDriverCommand
	case "gc":
		return gcCommand
	case "doctor":
		return doctorCommand
	case "redact":
		return redactCommand
	case "ui":
		return uiCommand
	}
	return nil
}

// sessionFlag is -s/--session, also read from CKPT_SESSION.
func sessionFlag() cli.Flag {
	return &cli.StringFlag{Name: "session", Aliases: []string{"s"}, Usage: "session `ID`", EnvVars: []string{"CKPT_SESSION"}}
}

func jsonFlag() cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print JSON for scripts"}
}

// allowShrinkFlag lets a checkpoint lose more entries than the shrink guard allows.
func allowShrinkFlag() cli.Flag {
	return &cli.BoolFlag{Name: "allow-shrink", Usage: "accept a checkpoint that drops Key Decisions or most of a section's entries"}
}

// noArgs rejects stray positional arguments, which are usually a mistyped flag.
func noArgs(c *cli.Context) error {
	if c.NArg() > 0 {
		return hint.New(usageError("unexpected argument %q", c.Args().First()), "ckpt %s --help", c.Command.Name)
	}
	return nil
}

// app is what a command needs once its flags are read: the store, the config, and the
// domain services over them.
type app struct {
	env    *Env
	home   string
	store  *repo.Store
	cfg    *config.Config
	svc    *checkpoint.Service // the one path to a commit
	sync   *ckptsync.Service
	remote *remote.Service
}

func open(c *cli.Context, env *Env) (*app, error) {
	return openStore(c.String("home"), env, inHook(c), !readOnly[c.Command.FullName()])
}

// readOnly are the commands that never commit: they need no author, and do not ask git
// for one.
var readOnly = map[string]bool{
	"log": true, "show": true, "diff": true, "blame": true, "sessions": true, "path": true,
	"templates": true, "check": true, "parse": true, "search": true, "status": true,
	"mcp": true, "ui": true, "breaker status": true, "hooks status": true, "kg list": true,
	"kg log": true, "kg graph": true, "agent-prompt": true,
}

// inHook reports whether c is a command that git or an agent runs as a hook (ckpt hook …).
func inHook(c *cli.Context) bool {
	for _, l := range c.Lineage() {
		if l.Command != nil && l.Command.Name == "hook" {
			return true
		}
	}
	return false
}

// hookLockTimeout bounds a hook's wait for a busy session: a commit or an agent turn must
// not stall behind another ckpt; the checkpoint is skipped instead, with one line.
const hookLockTimeout = time.Second

// openHome opens the store at home (or the one found from the current directory).
func openHome(flag string, env *Env) (*app, error) { return openStore(flag, env, false, true) }

// openStore opens the store at flag, or the one found from the current directory; a hook
// waits for a busy session at most hookLockTimeout, and a command that commits signs with
// the author git would use.
func openStore(flag string, env *Env, hook, commits bool) (*app, error) {
	cwd, err := env.Getwd()
	if err != nil {
		return nil, err
	}
	dir := home.FindWith(flag, cwd, home.UserStore(env.Getenv))
	if filepath.Base(dir) == home.Dir {
		// A project's store made by an older ckpt, or by hand, gets its .gitignore too.
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			_ = home.Ensure(dir)
		}
	}
	cfg, err := config.Load(dir)
	if err != nil {
		return nil, err
	}
	opts := repo.DefaultOptions()
	opts.Fsync = cfg.FsyncOn()
	if cfg.Core.LockTimeout.Duration > 0 {
		opts.LockTimeout = cfg.Core.LockTimeout.Duration
	}
	if hook && opts.LockTimeout > hookLockTimeout {
		opts.LockTimeout = hookLockTimeout
	}
	if v := env.Getenv("CKPT_LOCK_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, usageError("CKPT_LOCK_TIMEOUT=%q: %v", v, err)
		}
		opts.LockTimeout = d
	}
	if cfg.Core.PackThreshold != 0 {
		opts.PackThreshold = cfg.Core.PackThreshold
	}
	if v := env.Getenv("CKPT_NOW"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return nil, usageError("CKPT_NOW=%q: want an RFC 3339 time: %v", v, err)
		}
		opts.Now = func() time.Time { return t }
	}
	if n := firstNonEmpty(env.Getenv("CKPT_AUTHOR_NAME"), env.Getenv("GIT_AUTHOR_NAME")); n != "" {
		opts.Author.Name = n
	}
	if e := firstNonEmpty(env.Getenv("CKPT_AUTHOR_EMAIL"), env.Getenv("GIT_AUTHOR_EMAIL")); e != "" {
		opts.Author.Email = e
	}
	if commits && (env.Getenv("CKPT_AUTHOR_NAME")+env.Getenv("GIT_AUTHOR_NAME") == "" || env.Getenv("CKPT_AUTHOR_EMAIL")+env.Getenv("GIT_AUTHOR_EMAIL") == "") {
		// As git would sign a commit here: user.name and user.email from its config.
		// git's answer is cached in the store's state (when there is one) against the
		// files and environment it depends on: a commit need not start git to sign.
		id := gitident.Lookup(cwd, filepath.Join(dir, "state", "gitident.json"), env.Getenv)
		if env.Getenv("CKPT_AUTHOR_NAME")+env.Getenv("GIT_AUTHOR_NAME") == "" && id.Name != "" {
			opts.Author.Name = id.Name
		}
		if env.Getenv("CKPT_AUTHOR_EMAIL")+env.Getenv("GIT_AUTHOR_EMAIL") == "" && id.Email != "" {
			opts.Author.Email = id.Email
		}
	}
	st := repo.NewStore(dir, opts)
	warnOpenHome(env, dir)
	cp := checkpoint.New(st, cfg)
	rm := remote.New(cp)
	cp.FinishPull = rm.FinishPull // every commit first finishes a pull that was killed
	return &app{env: env, home: dir, store: st, cfg: cfg, svc: cp, sync: ckptsync.New(cp), remote: rm}, nil
}

// warnOpenHome says when others can write into the store: they could change any checkpoint
// or plant a hook's state there.
func warnOpenHome(env *Env, home string) {
	fi, err := os.Stat(home)
	if err != nil || fi.Mode().Perm()&0o022 == 0 {
		return
	}
	fmt.Fprintf(env.Stderr, "ckpt: warning: %s is writable by group or others (mode %04o)\nckpt: hint: chmod go-w %s\n", home, fi.Mode().Perm(), home)
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// exists reports whether the store is there.
func (a *app) exists() bool {
	fi, err := os.Stat(a.home)
	return err == nil && fi.IsDir()
}

// ensureHome creates the store directory, with a .gitignore so that a store inside a git
// work tree never shows up in that repository's status.
func (a *app) ensureHome() error { return home.Ensure(a.home) }

// sessionID reads and validates -s.
func sessionID(c *cli.Context) (repo.SessionID, error) {
	s := c.String("session")
	if !c.IsSet("session") && s == "" {
		return "", hint.New(usageError("no session given"), "pass -s ID or set CKPT_SESSION; ckpt sessions lists them")
	}
	id, err := repo.ParseSessionID(s)
	if err != nil {
		return "", &exitError{exitUsage, err}
	}
	return id, nil
}

// session opens the session named by -s.
func (a *app) session(c *cli.Context) (*repo.Repo, error) {
	id, err := sessionID(c)
	if err != nil {
		return nil, err
	}
	r, err := a.store.Open(id)
	if errors.Is(err, repo.ErrNotFound) {
		return nil, hint.New(err, "ckpt init -s %s creates it; ckpt sessions lists the sessions in %s", id, a.home)
	}
	return r, err
}

// oneOrAll refuses anything but exactly one of -s ID and --all.
func oneOrAll(c *cli.Context) error {
	if c.Bool("all") == (c.String("session") != "") {
		return usageError("give -s ID or --all")
	}
	return nil
}

// sessionsOrAll opens the session of -s, or every session with --all.
func (a *app) sessionsOrAll(c *cli.Context) ([]*repo.Repo, error) {
	if !c.Bool("all") {
		r, err := a.session(c)
		if err != nil {
			return nil, err
		}
		return []*repo.Repo{r}, nil
	}
	ids, err := a.store.SessionIDs()
	if err != nil {
		return nil, err
	}
	rs := make([]*repo.Repo, 0, len(ids))
	for _, id := range ids {
		r, err := a.store.Open(id)
		if err != nil {
			return nil, err
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// openSession opens the store and the session named by -s: what most commands start with.
func openSession(c *cli.Context, env *Env) (*app, *repo.Repo, error) {
	a, err := open(c, env)
	if err != nil {
		return nil, nil, err
	}
	r, err := a.session(c)
	return a, r, err
}

// readLock takes the shared lock of a repository for the duration of a read.
func (a *app) readLock(r *repo.Repo) (repo.Unlock, error) {
	return a.store.Lock(r.LockName, false)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// absIn is p made absolute against dir.
func absIn(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// relPath shows p relative to the working directory when it is below it.
func (e *Env) relPath(p string) string {
	cwd, err := e.Getwd()
	if err != nil {
		return p
	}
	if rel, err := filepath.Rel(cwd, p); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return p
}

// colors for terminal output; empty when colour is off.
type palette struct{ bold, red, green, cyan, yellow, reset string }

func (e *Env) palette() palette {
	if !e.Color {
		return palette{}
	}
	return palette{"\x1b[1m", "\x1b[31m", "\x1b[32m", "\x1b[36m", "\x1b[33m", "\x1b[0m"}
}
