package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// interspersed reorders a command line so that flags parse wherever they are written:
// urfave/cli reads the app's flags only before the command and a command's flags only
// before its first argument, which made `ckpt log -s a --home X` and `ckpt search "Signal
// Trap" --history` usage errors. The app's flags (--home) move to the front, a command's
// flags before its arguments; every token after "--" stays an argument, in place, and a
// command that reads its own arguments (ckpt hook git) is left as it is.
func interspersed(app *cli.App, args []string) []string {
	var global, path, flags, positional, rest []string
	cmds := app.Commands
	var cmd *cli.Command
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = args[i:]
			break
		}
		if cmd != nil && cmd.SkipFlagParsing {
			positional = append(positional, args[i:]...)
			break
		}
		if isFlag(a) {
			if f := findFlag(app.Flags, a); f != nil {
				global = append(global, a)
				if takesValue(f, a) && i+1 < len(args) {
					i++
					global = append(global, args[i])
				}
				continue
			}
			flags = append(flags, a)
			if cmd != nil {
				if f := findFlag(cmd.Flags, a); f != nil && takesValue(f, a) && i+1 < len(args) {
					i++
					flags = append(flags, args[i])
				}
			}
			continue
		}
		// The first argument names the command, then a subcommand while there are some;
		// flags written before a subcommand's name belong to it as well.
		if len(positional) == 0 {
			if c := findCommand(cmds, a); c != nil {
				path = append(path, a)
				cmd, cmds = c, c.Subcommands
				continue
			}
		}
		positional = append(positional, a)
	}
	out := make([]string, 0, len(args))
	out = append(out, global...)
	out = append(out, path...)
	out = append(out, flags...)
	out = append(out, positional...)
	return append(out, rest...)
}

// isFlag reports whether a token is a flag: "-x", "--name", "--name=v"; "-" is stdin.
func isFlag(a string) bool { return len(a) > 1 && a[0] == '-' }

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

func findFlag(fs []cli.Flag, token string) cli.Flag {
	name, _, _ := strings.Cut(strings.TrimLeft(token, "-"), "=")
	for _, f := range fs {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

// takesValue reports whether a flag written as token is followed by its value: a flag that
// is not a boolean, and not written as --name=value.
func takesValue(f cli.Flag, token string) bool {
	if strings.Contains(token, "=") {
		return false
	}
	_, isBool := f.(*cli.BoolFlag)
	return !isBool
}
