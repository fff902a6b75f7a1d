//go:build !unix

package main

import (
	"errors"
	"os"
	"os/exec"
)

// runFullBuild runs ckpt-full with the same arguments, streams and environment, and exits
// as it does.
func runFullBuild(args []string, env *Env) int {
	path, err := fullBuildPath(env)
	if err != nil {
		printError(env.Stderr, err)
		return exitFailure
	}
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.Env = env.Stdin, env.Stdout, env.Stderr, os.Environ()
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		printError(env.Stderr, err)
		return exitFailure
	}
	return exitOK
}
