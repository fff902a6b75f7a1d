package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/history"
	"github.com/ckpt-dev/ckpt/internal/hint"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
)

func logCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "log",
		Usage: "list a session's checkpoints, newest first",
		Description: `Lists the checkpoint commits of a session, newest first, with the sections each one
changed. --section keeps only the commits that changed that section (an id such as 🎯
or §3, its number, or the heading text). --trigger keeps the commits that took a kind of
checkpoint (sparse, full, write, …) or that something ran (cron; hook for any git or
agent hook; a cause such as claude:PreCompact). --rejected lists the writes that check
rejected instead.

The session is an ordinary git repository: git -C "$(ckpt path -s ID)" log works too.

Examples:
  ckpt log -s alpha -n 5
  ckpt log -s alpha --section "Key Decisions"
  ckpt log -s alpha --trigger sparse
  ckpt log -s alpha --json | jq '.[0].commit'`,
		Flags: []cli.Flag{
			sessionFlag(),
			&cli.IntFlag{Name: "n", Usage: "show at most `N` commits (0: all)"},
			&cli.StringFlag{Name: "section", Usage: "only commits that changed section `S`"},
			&cli.StringFlag{Name: "trigger", Usage: "only commits that took or were run by `T`: sparse, full, write, …, cron, hook, claude:PreCompact"},
			&cli.BoolFlag{Name: "rejected", Usage: "list rejected writes (refs/ckpt/rejected/N)"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error { return runLog(c, env) },
	}
}

type logJSON struct {
	Commit   string   `json:"commit"`
	Short    string   `json:"short"`
	Time     string   `json:"time"`
	Trigger  string   `json:"trigger"`
	Cause    string   `json:"cause,omitempty"`
	Full     bool     `json:"full"`
	Subject  string   `json:"subject"`
	Message  string   `json:"message"`
	Sections []string `json:"sections"`
	Parents  []string `json:"parents"`
	Ref      string   `json:"ref,omitempty"`
}

func logJSONOf(c history.Commit) logJSON {
	return logJSON{
		Commit: c.Hash, Short: c.Short, Time: c.Time.UTC().Format(time.RFC3339), Trigger: c.Trigger, Cause: c.Cause, Full: c.Full,
		Subject: c.Subject, Message: c.Message, Sections: c.Sections, Parents: c.Parents, Ref: c.Ref,
	}
}

// toLogJSON shows a commit of the knowledge repository (ckpt kg log).
func toLogJSON(ci repo.CommitInfo) logJSON {
	out := logJSON{
		Commit:   ci.Hash.String(),
		Short:    repo.ShortHash(ci.Hash),
		Time:     ci.When.UTC().Format(time.RFC3339),
		Trigger:  ci.Trailer(checkpoint.KeyTrigger),
		Subject:  ci.Subject,
		Message:  ci.Message,
		Sections: []string{},
		Parents:  []string{},
	}
	for _, p := range ci.Parents {
		out.Parents = append(out.Parents, p.String())
	}
	return out
}

func runLog(c *cli.Context, env *Env) error {
	if err := noArgs(c); err != nil {
		return err
	}
	if c.Int("n") < 0 {
		return usageError("-n %d: want 0 or more", c.Int("n"))
	}
	a, r, err := openSession(c, env)
	if err != nil {
		return err
	}
	page, err := a.history().Log(r.ID, history.LogQuery{Section: c.String("section"), Trigger: c.String("trigger"), Limit: c.Int("n"), Rejected: c.Bool("rejected")})
	if err != nil {
		return sectionError(err)
	}
	if c.Bool("json") {
		out := make([]logJSON, 0, len(page.Commits))
		for _, cm := range page.Commits {
			out = append(out, logJSONOf(cm))
		}
		return printJSON(env.Stdout, out)
	}
	p := env.palette()
	for _, j := range page.Commits {
		label := j.Short
		if j.Ref != "" {
			label = j.Ref + " " + j.Short
		}
		secs := ""
		if len(j.Sections) > 0 {
			secs = "  [" + strings.Join(j.Sections, " ") + "]"
		}
		fmt.Fprintf(env.Stdout, "%s%s%s %s  %s%s\n", p.yellow, label, p.reset, j.Time.Local().Format("2006-01-02 15:04"), j.Subject, secs)
	}
	return nil
}

// history is the reader of the store's history.
func (a *app) history() *history.Reader { return history.New(a.svc) }

// resolveSection turns a --section argument into a section id, using the session's
// template (so a section can be named even where the checkpoint lacks it).
func (a *app) resolveSection(r *repo.Repo, query string) (sections.ID, error) {
	id, err := a.history().ResolveSection(r.ID, query)
	return id, sectionError(err)
}

// sectionError turns a section the template lacks into a usage error with the list of
// sections as the hint; a section missing from one revision stays a failure.
func sectionError(err error) error {
	var se *history.SectionError
	if !errors.As(err, &se) {
		return err
	}
	e := hint.New(fmt.Errorf("no section %q in %s", se.Query, se.Where), "sections are %s", strings.Join(se.Sections, " "))
	if se.Template {
		return &exitError{exitUsage, e}
	}
	return e
}
