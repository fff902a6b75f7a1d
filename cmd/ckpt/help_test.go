package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestEveryCommandHasExamples: ckpt CMD --help shows examples, for every command and
// subcommand.
func TestEveryCommandHasExamples(t *testing.T) {
	t.Setenv("CKPT_HOME", t.TempDir())
	newEnv := func(out *bytes.Buffer) *Env {
		return &Env{Stdin: strings.NewReader(""), Stdout: out, Stderr: out, Getenv: os.Getenv, Getwd: os.Getwd, LookPath: exec.LookPath}
	}
	var walk func(path []string, cs []*cli.Command)
	walk = func(path []string, cs []*cli.Command) {
		for _, c := range cs {
			args := append(append([]string{}, path...), c.Name)
			var out bytes.Buffer
			if code := Main(append(args, "--help"), newEnv(&out)); code != 0 || !strings.Contains(out.String(), "Example") {
				t.Errorf("ckpt %s --help (exit %d) shows no examples:\n%s", strings.Join(args, " "), code, out.String())
			}
			walk(args, c.Subcommands)
		}
	}
	var out bytes.Buffer
	if Main([]string{"--help"}, newEnv(&out)); !strings.Contains(out.String(), "Example") {
		t.Errorf("ckpt --help shows no examples:\n%s", out.String())
	}
	walk(nil, commands(newEnv(&bytes.Buffer{})))
}
