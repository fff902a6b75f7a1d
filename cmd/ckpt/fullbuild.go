package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ckpt-dev/ckpt/internal/hint"
)

// ckpt comes in two builds of this package. The full build (go build, go install, go test)
// has every command in one binary. The lean build (tag ckpt_lean; `make build` installs it
// as ckpt) is what runs after every agent turn, inside git commit and from cron: it leaves
// out the web UI and the MCP server (net/http, html/template, goldmark's extensions, the
// MCP SDK) and go-git's network transports (HTTP, SSH and their crypto), which the system
// git replaces, so that a process starts in the time git takes. Those commands, and a push
// or pull that must go through go-git because no git is installed, hand over to the full
// build, installed beside it as ckpt-full, with the same arguments and standard streams.

// FullBuildName is the file name of the full build next to the lean ckpt.
const fullBuildName = "ckpt-full"

// Usage lines of the commands that only the full build runs: both builds list them.
const (
	uiUsage  = "browse the store's history in a web browser (local, read-only)"
	mcpUsage = "serve the sessions' history to an agent over MCP (stdio)"
)

// errFullBuild says that a command runs in the full build only.
var errFullBuild = errors.New("this command is in the full build of ckpt")

// fullBuildPath finds ckpt-full: beside the running executable, else on PATH.
func fullBuildPath(env *Env) (string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), fullBuildName)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	if p, err := env.LookPath(fullBuildName); err == nil {
		return p, nil
	}
	return "", hint.New(fmt.Errorf("%s: not installed beside ckpt or on PATH: this ckpt is the lean build, without the web UI, the MCP server and go-git's network", fullBuildName),
		"make install puts both builds in place; go install ./cmd/ckpt makes one ckpt with every command")
}
