//go:build unix

package main

import (
	"os"
	"syscall"
)

// runFullBuild replaces this process with ckpt-full, given the same arguments, streams and
// environment: signals and the exit code are then the full build's own.
func runFullBuild(args []string, env *Env) int {
	path, err := fullBuildPath(env)
	if err != nil {
		printError(env.Stderr, err)
		return exitFailure
	}
	err = syscall.Exec(path, append([]string{path}, args...), os.Environ())
	printError(env.Stderr, err) // only when exec failed
	return exitFailure
}
