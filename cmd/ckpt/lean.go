//go:build ckpt_lean

package main

import "github.com/urfave/cli/v2"

// The lean build's ui and mcp commands: listed with the full build's usage, run by the
// full build (fullbuild.go), which also answers their --help.

func uiCommand(*Env) *cli.Command  { return inFullBuild("ui", uiUsage) }
func mcpCommand(*Env) *cli.Command { return inFullBuild("mcp", mcpUsage) }

func inFullBuild(name, usage string) *cli.Command {
	return &cli.Command{
		Name:            name,
		Usage:           usage,
		SkipFlagParsing: true,
		Action:          func(*cli.Context) error { return errFullBuild },
	}
}
