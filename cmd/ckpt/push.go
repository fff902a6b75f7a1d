package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/remote"
	"github.com/ckpt-dev/ckpt/repo"
)

// travelFlags are the flags push and pull share.
func travelFlags() []cli.Flag {
	return []cli.Flag{
		sessionFlag(),
		&cli.BoolFlag{Name: "all", Usage: "every session and the knowledge graph (the default without -s)"},
		&cli.StringFlag{Name: "remote", Value: "origin", Usage: "the remote `NAME`"},
		jsonFlag(),
	}
}

func pushCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "push",
		Usage: "send sessions and the knowledge graph to a remote",
		Description: `Pushes each session's history as refs/heads/sessions/<id> and the knowledge repository as
refs/heads/knowledge, in one git push. Uses the system git when installed, so credential
helpers and ~/.ssh/config work as usual. Before anything leaves, every file version the
remote does not have is scanned whole for secrets (API tokens, private keys, passwords in
URLs, password = … and other secret assignments). A session with findings is held back
and listed (session, commit, file, line, rule, redacted value); the others are pushed,
and the push exits 1. To get past: ckpt redact -s ID rewrites the secrets out of the
unpushed history (nothing is sent), config.toml [secrets] allow lets a value or rule
through, or --allow-secrets sends them.

Examples:
  ckpt push
  ckpt push -s alpha --remote backup`,
		Flags: append(travelFlags(),
			&cli.BoolFlag{Name: "allow-secrets", Usage: "push even what the secret scan flags"},
			&cli.BoolFlag{Name: "force", Usage: "replace the remote's history (after ckpt gc --force)"}),
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			a, o, err := travelOptions(c, env)
			if err != nil {
				return err
			}
			o.AllowSecrets, o.Force = c.Bool("allow-secrets"), c.Bool("force")
			rep, err := a.remote.Push(o)
			endProgress(env)
			// Held back for secrets: the others went all the same, so the report is printed,
			// then the findings and the error (exit 1).
			held := errors.Is(err, remote.ErrSecrets) && rep != nil
			if err != nil && !held {
				return err
			}
			if c.Bool("json") {
				if jerr := printJSON(env.Stdout, rep); jerr != nil {
					return jerr
				}
			} else if len(rep.Pushed) > 0 {
				fmt.Fprintf(env.Stdout, "pushed %d to %s (%d already there)\n", len(rep.Pushed), rep.Remote, rep.UpToDate)
			} else if !held {
				fmt.Fprintf(env.Stdout, "everything up to date on %s\n", rep.Remote)
			}
			if held {
				for _, f := range rep.Secrets {
					sec := ""
					if f.Section != "" {
						sec = "[" + string(f.Section) + "] "
					}
					fmt.Fprintf(env.Stderr, "%s/%s:%d: %s%s: %s (commit %s)\n", f.Session, f.File, f.Line, sec, f.Rule, f.Secret, f.Commit)
				}
			}
			return err
		},
	}
}

// travelOptions reads the flags push and pull share.
func travelOptions(c *cli.Context, env *Env) (*app, remote.Options, error) {
	var o remote.Options
	if c.Bool("all") && c.String("session") != "" {
		return nil, o, usageError("give -s ID or --all, not both")
	}
	a, err := open(c, env)
	if err != nil {
		return nil, o, err
	}
	if s := c.String("session"); s != "" {
		if _, err := repo.ParseSessionID(s); err != nil {
			return nil, o, &exitError{exitUsage, err}
		}
		o.Sessions = []string{s}
	}
	o.Remote = c.String("remote")
	if env.Progress {
		o.Progress = func(done, total int, session string) {
			fmt.Fprintf(env.Stderr, "\r\x1b[K%d/%d %s", done, total, session)
		}
	}
	if o.Network, err = newNetwork(a, env); err != nil {
		return nil, o, err
	}
	return a, o, nil
}

// newNetwork picks how refs travel: config remote.git (auto: the system git when installed).
func newNetwork(a *app, env *Env) (*repo.GitNetwork, error) {
	var progress io.Writer
	if env.Progress {
		progress = env.Stderr
	}
	n, err := repo.NewGitNetwork(a.cfg.Remote.Git, progress)
	if err != nil {
		return nil, &exitError{exitUsage, fmt.Errorf("%s: %w", a.cfg.Path, err)}
	}
	return n, nil
}

func endProgress(env *Env) {
	if env.Progress {
		fmt.Fprint(env.Stderr, "\r\x1b[K")
	}
}
