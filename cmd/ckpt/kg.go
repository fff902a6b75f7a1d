package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/internal/hint"
	"github.com/ckpt-dev/ckpt/knowledge"
	"github.com/ckpt-dev/ckpt/repo"
)

func kgCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "kg",
		Usage: "review the knowledge graph of promoted decisions",
		Description: `A full sync promotes each session's Key Decisions to knowledge-graph.md in the knowledge
repository (<home>/knowledge), and proposes the project rules (§3 "Dn:" lines) that
MEMORY.md lacks. New entries wait under "Pending review" (unless config promote.review =
false); accept or reject them here. An accepted entry goes into MEMORY.md once; a rejected
one is never promoted again. Every change is a commit: ckpt kg log.

Examples:
  ckpt kg list --state pending
  ckpt kg accept K-3f2a9c1b
  ckpt kg graph --format dot | dot -Tsvg > decisions.svg`,
		Subcommands: []*cli.Command{
			{
				Name:  "list",
				Usage: "list decisions with their state and provenance",
				Description: `Lists the decisions of knowledge-graph.md: id, state, text and the sessions
they came from.

Examples:
  ckpt kg list
  ckpt kg list --state pending --json | jq -r '.[].id'`,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "state", Usage: "only `STATE`: pending, accepted or rejected"},
					jsonFlag(),
				},
				Action: func(c *cli.Context) error { return runKGList(c, env) },
			},
			{
				Name: "accept", Usage: "accept a pending decision", ArgsUsage: "ID",
				Description: `Moves the decision to Accepted and commits knowledge-graph.md. An accepted
decision is written into MEMORY.md's Architecture Decisions (a proposed rule into its
Rules) once, with its id and the sessions it came from; MEMORY.md is the knowledge
repository's, or the file config.toml's [memory] path names. ID may be a unique prefix,
with or without K-.

Examples:
  ckpt kg accept K-3f2a9c1b
  ckpt kg accept 3f2a`,
				Action: func(c *cli.Context) error { return runKGReview(c, env, knowledge.StateAccepted) },
			},
			{
				Name: "reject", Usage: "reject a decision; it is never promoted again", ArgsUsage: "ID",
				Description: `Moves the decision to Rejected and commits knowledge-graph.md; later syncs
never promote it again.

Example:
  ckpt kg reject K-3f2a9c1b`,
				Action: func(c *cli.Context) error { return runKGReview(c, env, knowledge.StateRejected) },
			},
			{
				Name: "reopen", Usage: "put a decision back under review", ArgsUsage: "ID",
				Description: `Moves an accepted or rejected decision back to Pending review.

Example:
  ckpt kg reopen K-3f2a9c1b`,
				Action: func(c *cli.Context) error { return runKGReview(c, env, knowledge.StatePending) },
			},
			{
				Name:  "log",
				Usage: "history of the knowledge repository",
				Description: `Lists the commits of the knowledge repository, newest first: promotions,
MEMORY.md updates and reviews.

Examples:
  ckpt kg log -n 10
  ckpt kg log --json`,
				Flags:  []cli.Flag{&cli.IntFlag{Name: "n", Usage: "at most `N` commits"}, jsonFlag()},
				Action: func(c *cli.Context) error { return runKGLog(c, env) },
			},
			{
				Name:  "graph",
				Usage: "draw decisions linked to their sessions and to what they supersede",
				Description: `Prints a Mermaid (default) or Graphviz graph of the decisions that are not
rejected, linked to the sessions they came from and to the decisions they supersede.

Examples:
  ckpt kg graph > decisions.mmd
  ckpt kg graph --format dot | dot -Tsvg > decisions.svg`,
				Flags:  []cli.Flag{&cli.StringFlag{Name: "format", Value: "mermaid", Usage: "mermaid or dot"}},
				Action: func(c *cli.Context) error { return runKGGraph(c, env) },
			},
		},
	}
}

func runKGList(c *cli.Context, env *Env) error {
	state := c.String("state")
	if state != "" && state != knowledge.StatePending && state != knowledge.StateAccepted && state != knowledge.StateRejected {
		return usageError("--state %q: want pending, accepted or rejected", state)
	}
	a, err := open(c, env)
	if err != nil {
		return err
	}
	kg, err := knowledge.Load(a.store)
	if err != nil {
		return err
	}
	var out []*knowledge.Entry
	for _, e := range kg.Entries {
		if state == "" || e.State == state {
			if e.Provenance == nil {
				e.Provenance = []knowledge.Provenance{}
			}
			if e.Supersedes == nil {
				e.Supersedes = []string{}
			}
			out = append(out, e)
		}
	}
	if c.Bool("json") {
		if out == nil {
			out = []*knowledge.Entry{}
		}
		return printJSON(env.Stdout, out)
	}
	for _, e := range out {
		text := strings.ReplaceAll(e.Text, "\n", " ")
		if e.Kind == knowledge.KindRule {
			text = "rule: " + text
		}
		sessions := make([]string, 0, len(e.Provenance))
		for _, p := range e.Provenance {
			sessions = append(sessions, p.Session)
		}
		fmt.Fprintf(env.Stdout, "%s  %-8s %s  [%s]\n", e.ID, e.State, text, strings.Join(sessions, ", "))
	}
	return nil
}

func runKGReview(c *cli.Context, env *Env, state string) error {
	if c.NArg() != 1 {
		return usageError("kg %s takes one decision ID (ckpt kg list shows them)", c.Command.Name)
	}
	a, err := open(c, env)
	if err != nil {
		return err
	}
	e, h, changed, err := knowledge.ReviewWith(a.store, c.Args().First(), state, knowledge.ReviewOptions{MemoryPath: knowledge.MemoryPath(a.store, a.svc.Config.Memory.Path)})
	if err != nil {
		return err
	}
	if !changed {
		fmt.Fprintf(env.Stdout, "%s is already %s\n", e.ID, state)
		return nil
	}
	fmt.Fprintf(env.Stdout, "%s %s at %s\n", e.ID, state, repo.ShortHash(h))
	return nil
}

func runKGLog(c *cli.Context, env *Env) error {
	a, err := open(c, env)
	if err != nil {
		return err
	}
	kr, err := a.store.OpenKnowledge()
	if err != nil {
		return hint.New(err, "the knowledge repository appears with the first full sync")
	}
	unlock, err := a.readLock(kr)
	if err != nil {
		return err
	}
	defer unlock()
	head, err := kr.Head()
	if err != nil {
		return err
	}
	var commits []logJSON
	limit := c.Int("n")
	err = kr.Log(head, func(ci repo.CommitInfo) bool {
		commits = append(commits, toLogJSON(ci))
		return limit <= 0 || len(commits) < limit
	})
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(env.Stdout, commits)
	}
	for _, j := range commits {
		fmt.Fprintf(env.Stdout, "%s %s  %s\n", j.Short, j.Time, j.Subject)
	}
	return nil
}

func runKGGraph(c *cli.Context, env *Env) error {
	a, err := open(c, env)
	if err != nil {
		return err
	}
	kg, err := knowledge.Load(a.store)
	if err != nil {
		return err
	}
	out, err := kg.Diagram(c.String("format"))
	if err != nil {
		return &exitError{exitUsage, err}
	}
	fmt.Fprint(env.Stdout, out)
	return nil
}
