package main

import (
	"os"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestCommandNamed: every command is found by its name, and only by it.
func TestCommandNamed(t *testing.T) {
	env := &Env{Stdin: strings.NewReader(""), Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Getwd: os.Getwd}
	for _, c := range commands(env) {
		mk := commandNamed(c.Name)
		if mk == nil {
			t.Errorf("commandNamed(%q) = nil", c.Name)
			continue
		}
		if got := mk(env).Name; got != c.Name {
			t.Errorf("commandNamed(%q) makes %q", c.Name, got)
		}
		if len(c.Aliases) > 0 {
			t.Errorf("command %s has aliases %v: commandNamed knows names only", c.Name, c.Aliases)
		}
	}
	for _, name := range []string{"", "help", "bogus", "-s", "Log"} {
		if commandNamed(name) != nil {
			t.Errorf("commandNamed(%q) is a command", name)
		}
	}
}

// TestCommandsFor: a command line gets the command it names, none for --version, all of
// them where help may list them or no command is named.
func TestCommandsFor(t *testing.T) {
	env := &Env{Getenv: os.Getenv, Getwd: os.Getwd}
	all := len(commands(env))
	names := func(cs []*cli.Command) string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Name)
		}
		if len(out) == all {
			return "all"
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		args string
		want string
	}{
		{"log -s a -n 20", "log"},
		{"--home /x log -s a", "log"},
		{"--home=/x commit -s a", "commit"},
		{"-home /x hook git pre-commit", "hook"},
		{"--home log", "all"}, // log is --home's value
		{"--version", ""},
		{"-v", ""},
		{"--home /x --version", ""},
		{"--version --help", "all"},
		{"-h", "all"},
		{"", "all"},
		{"-s a log", "all"}, // not a command line interspersed understands: the app says so
		{"bogus", "all"},
		{"-- log", "all"},
		{"-v log", "log"},
		{"log --help", "log"},
	} {
		var args []string
		if tc.args != "" {
			args = strings.Fields(tc.args)
		}
		if got := names(commandsFor(args, env)); got != tc.want {
			t.Errorf("commandsFor(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}
