package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/internal/hint"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/search"
)

func searchCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "search",
		Usage:     "find text in checkpoints, notes and the knowledge graph",
		ArgsUsage: "QUERY...",
		Description: `Searches the current checkpoint, notes and spill files of every session and the
knowledge repository's knowledge-graph.md and MEMORY.md (shown as session "knowledge").
Case does not matter; every word of the query must appear in the line, and a phrase quoted
for the shell is one word. --history searches every committed version as well: a history
hit is the commit that introduced the line, so a line kept for 100 versions is one hit.

Each hit: session, commit, time, file:line, [section], and the line around the match. A
current hit shows the session's head and the time the file was written.

History goes through an index under <home>/state/search/: a cache that git can always
rebuild, brought up to date on each --history search, indexing only the new commits.
Unlike the one-session commands, search does not read $CKPT_SESSION: it searches every
session unless -s is given. Flags go before the query.

Examples:
  ckpt search xxhash
  ckpt search "circuit breaker" cron --history
  ckpt search -s alpha --section "Key Decisions" --history blake3
  ckpt search --json --history postgres | jq -r '.[].commit'`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "session", Aliases: []string{"s"}, Usage: "search only session `ID`"},
			&cli.StringFlag{Name: "section", Usage: "only hits in section `S` (an id such as 🎯 or §3, or the heading text)"},
			&cli.BoolFlag{Name: "history", Usage: "search every committed version as well"},
			&cli.IntFlag{Name: "n", Usage: "show at most `N` hits (0: all)"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error { return runSearch(c, env) },
	}
}

type hitJSON struct {
	Session string `json:"session"`
	Commit  string `json:"commit"`
	Time    string `json:"time"`
	File    string `json:"file"`
	Section string `json:"section"`
	Line    int    `json:"line"`
	Snippet string `json:"snippet"`
	Current bool   `json:"current"`
}

// searchFlags are the names a misplaced flag after the query would have.
var searchFlags = map[string]bool{"-s": true, "--session": true, "-section": true, "--section": true,
	"-history": true, "--history": true, "-n": true, "--n": true, "-json": true, "--json": true}

func runSearch(c *cli.Context, env *Env) error {
	q, err := searchQuery(c)
	if err != nil {
		return err
	}
	a, err := open(c, env)
	if err != nil {
		return err
	}
	hits, err := search.New(a.store).Search(q)
	var secErr *search.SectionError
	switch {
	case errors.As(err, &secErr):
		ids := make([]string, len(secErr.Sections))
		for i, id := range secErr.Sections {
			ids[i] = string(id)
		}
		return &exitError{exitUsage, hint.New(err, "sections are %s", strings.Join(ids, " "))}
	case errors.Is(err, repo.ErrNotFound):
		return hint.New(err, "ckpt sessions lists the sessions in %s", a.home)
	case err != nil:
		return err
	}
	if c.Bool("json") {
		out := make([]hitJSON, 0, len(hits))
		for _, h := range hits {
			out = append(out, hitJSON{
				Session: h.Session, Commit: h.Commit.String(), Time: h.Time.UTC().Format(time.RFC3339),
				File: h.File, Section: string(h.Section), Line: h.Line, Snippet: h.Snippet, Current: h.Current,
			})
		}
		return printJSON(env.Stdout, out)
	}
	p := env.palette()
	for _, h := range hits {
		sec := ""
		if h.Section != "" {
			sec = "  [" + string(h.Section) + "]"
		}
		fmt.Fprintf(env.Stdout, "%s%s%s  %s%s%s  %s  %s:%d%s  %s\n",
			p.cyan, h.Session, p.reset, p.yellow, repo.ShortHash(h.Commit), p.reset,
			h.Time.Local().Format("2006-01-02 15:04"), h.File, h.Line, sec, highlight(h.Snippet, h.Matches, p))
	}
	return nil
}

// searchQuery reads the query: the arguments (a flag among them is a usage error), then
// the flags.
func searchQuery(c *cli.Context) (search.Query, error) {
	args := c.Args().Slice()
	for i, a := range args {
		if a == "--" && i > 0 {
			args = append(args[:i:i], args[i+1:]...)
			break
		}
		name, _, _ := strings.Cut(a, "=")
		if i > 0 && searchFlags[name] {
			return search.Query{}, hint.New(usageError("flag %s after the query: flags go first", name), "ckpt search [flags] QUERY; after --, every argument is query text")
		}
	}
	q := search.Query{Terms: search.Terms(args), Section: c.String("section"), History: c.Bool("history"), Limit: c.Int("n")}
	if len(q.Terms) == 0 {
		return q, hint.New(usageError("no query"), "ckpt search [-s ID] [--section S] [--history] WORD...")
	}
	if c.Int("n") < 0 {
		return q, usageError("-n %d: want 0 or more", c.Int("n"))
	}
	if s := c.String("session"); s != "" {
		id, err := repo.ParseSessionID(s)
		if err != nil {
			return q, &exitError{exitUsage, err}
		}
		q.Session = id
	}
	return q, nil
}

// highlight colours the matches of a snippet (nothing to do without colour).
func highlight(s string, matches [][2]int, p palette) string {
	if p.reset == "" || len(matches) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range matches {
		b.WriteString(s[last:m[0]])
		b.WriteString(p.bold + p.red + s[m[0]:m[1]] + p.reset)
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}
