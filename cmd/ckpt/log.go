package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/checkpoint"
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
or §3, or the heading text). --rejected lists the writes that check rejected instead.

The session is an ordinary git repository: git -C "$(ckpt path -s ID)" log works too.

Examples:
  ckpt log -s alpha -n 5
  ckpt log -s alpha --section "Key Decisions"
  ckpt log -s alpha --json | jq '.[0].commit'`,
		Flags: []cli.Flag{
			sessionFlag(),
			&cli.IntFlag{Name: "n", Usage: "show at most `N` commits (0: all)"},
			&cli.StringFlag{Name: "section", Usage: "only commits that changed section `S`"},
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
	Subject  string   `json:"subject"`
	Message  string   `json:"message"`
	Sections []string `json:"sections"`
	Parents  []string `json:"parents"`
	Ref      string   `json:"ref,omitempty"`
}

func toLogJSON(ci repo.CommitInfo) logJSON {
	out := logJSON{
		Commit:   ci.Hash.String(),
		Short:    repo.ShortHash(ci.Hash),
		Time:     ci.When.UTC().Format(time.RFC3339),
		Trigger:  ci.Trailer(checkpoint.KeyTrigger),
		Subject:  ci.Subject,
		Message:  ci.Message,
		Sections: commitSections(ci),
		Parents:  []string{},
	}
	for _, p := range ci.Parents {
		out.Parents = append(out.Parents, p.String())
	}
	return out
}

// commitSections reads the Ckpt-Sections trailer.
func commitSections(ci repo.CommitInfo) []string {
	out := []string{}
	for _, s := range strings.Split(ci.Trailer(checkpoint.KeySections), ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
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
	unlock, err := a.readLock(r)
	if err != nil {
		return err
	}
	defer unlock()
	var commits []logJSON
	limit := c.Int("n")
	if c.Bool("rejected") {
		refs, err := r.Rejected()
		if err != nil {
			return err
		}
		for _, ref := range refs {
			if limit > 0 && len(commits) == limit {
				break
			}
			ci, err := r.CommitInfo(ref.Hash)
			if err != nil {
				return err
			}
			j := toLogJSON(ci)
			j.Ref = strings.TrimPrefix(ref.Name, "refs/ckpt/")
			commits = append(commits, j)
		}
	} else {
		var want sections.ID
		if s := c.String("section"); s != "" {
			id, err := a.resolveSection(r, s)
			if err != nil {
				return err
			}
			want = id
		}
		head, err := r.Head()
		if err != nil {
			return err
		}
		err = r.Log(head, func(ci repo.CommitInfo) bool {
			j := toLogJSON(ci)
			if want != "" && !contains(j.Sections, string(want)) {
				return true
			}
			commits = append(commits, j)
			return limit == 0 || len(commits) < limit
		})
		if err != nil {
			return err
		}
	}
	if c.Bool("json") {
		if commits == nil {
			commits = []logJSON{}
		}
		return printJSON(env.Stdout, commits)
	}
	p := env.palette()
	for _, j := range commits {
		t, _ := time.Parse(time.RFC3339, j.Time)
		label := j.Short
		if j.Ref != "" {
			label = j.Ref + " " + j.Short
		}
		secs := ""
		if len(j.Sections) > 0 {
			secs = "  [" + strings.Join(j.Sections, " ") + "]"
		}
		fmt.Fprintf(env.Stdout, "%s%s%s %s  %s%s\n", p.yellow, label, p.reset, t.Local().Format("2006-01-02 15:04"), j.Subject, secs)
	}
	return nil
}

// resolveSection turns a --section argument into a section id, using the session's
// template (so a section can be named even where the checkpoint lacks it).
func (a *app) resolveSection(r *repo.Repo, query string) (sections.ID, error) {
	t, err := a.svc.LoadTemplate(r.Template())
	if err != nil {
		return "", err
	}
	if s := t.Doc.Find(query); s != nil {
		return s.ID, nil
	}
	ids := make([]string, 0, len(t.Doc.Sections))
	for _, s := range t.Doc.Sections {
		ids = append(ids, string(s.ID))
	}
	return "", hint.New(usageError("no section %q in template %s", query, t.Name), "sections are %s", strings.Join(ids, " "))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
