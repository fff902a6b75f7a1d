package main

import (
	"fmt"
	"sort"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/repo"
)

func remoteCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "remote",
		Usage: "the git remotes the store travels through",
		Description: `One remote repository holds a whole store: each session as refs/heads/sessions/<id>,
the knowledge graph as refs/heads/knowledge. Any git URL works: a path, ssh, https.
A password in the URL (https://user:token@host/…) is not stored: it goes to git's
credential helper, and the store (state/remotes.json, mode 0600) keeps the URL without
it. URLs are printed with any password masked.

Examples:
  git init --bare /srv/ckpt.git && ckpt remote add origin /srv/ckpt.git
  ckpt remote add origin git@github.com:me/agent-memory.git
  ckpt remote list`,
		Subcommands: []*cli.Command{
			{
				Name: "add", Usage: "add or change a remote", ArgsUsage: "NAME URL",
				Description: `Records URL as remote NAME; a password in the URL goes to git's credential
helper, not to the store.

Examples:
  ckpt remote add origin git@github.com:me/agent-memory.git
  ckpt remote add backup /srv/ckpt.git`,
				Action: func(c *cli.Context) error { return runRemoteAdd(c, env) },
			},
			{
				Name: "remove", Usage: "forget a remote", ArgsUsage: "NAME",
				Description: `Forgets remote NAME; the remote repository itself is left alone.

Example:
  ckpt remote remove backup`,
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usageError("remote remove takes NAME")
					}
					a, err := open(c, env)
					if err != nil {
						return err
					}
					if _, err := a.store.RemoteURL(c.Args().First()); err != nil {
						return err
					}
					return a.store.SetRemote(c.Args().First(), "")
				},
			},
			{
				Name: "list", Usage: "list remotes", Flags: []cli.Flag{jsonFlag()},
				Description: `Lists the remotes, passwords in URLs masked.

Examples:
  ckpt remote list
  ckpt remote list --json`,
				Action: func(c *cli.Context) error { return runRemoteList(c, env) },
			},
		},
	}
}

func runRemoteAdd(c *cli.Context, env *Env) error {
	if c.NArg() != 2 {
		return usageError("remote add takes NAME and URL")
	}
	name := c.Args().Get(0)
	if _, err := repo.ParseSessionID(name); err != nil {
		return usageError("remote name %q: use letters, digits, . _ -", name)
	}
	a, err := open(c, env)
	if err != nil {
		return err
	}
	if err := a.ensureHome(); err != nil {
		return err
	}
	added, err := a.store.AddRemote(name, c.Args().Get(1))
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "remote %s → %s\n", name, repo.MaskURLs(added.URL))
	switch {
	case added.Kept:
		fmt.Fprintln(env.Stdout, "the credentials in the URL went to git's credential helper; the store holds the URL without them")
	case added.Credentials:
		fmt.Fprintln(env.Stderr, "ckpt: warning: the password in the URL was not stored: no git credential helper is configured")
		fmt.Fprintln(env.Stderr, "ckpt: hint: git config --global credential.helper store (or cache, osxkeychain, manager), then ckpt remote add again, or let git ask at the next push")
	}
	return nil
}

func runRemoteList(c *cli.Context, env *Env) error {
	a, err := open(c, env)
	if err != nil {
		return err
	}
	rs, err := a.store.Remotes()
	if err != nil {
		return err
	}
	for n, u := range rs {
		rs[n] = repo.MaskURLs(u) // stored before ckpt kept credentials out
	}
	if c.Bool("json") {
		return printJSON(env.Stdout, rs)
	}
	names := make([]string, 0, len(rs))
	for n := range rs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(env.Stdout, "%s\t%s\n", n, rs[n])
	}
	return nil
}
