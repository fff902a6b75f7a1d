// Command ckpt versions the Markdown checkpoint files of AI-agent sessions: every write is a
// commit in a per-session git repository. See README.md and docs/.
package main

import (
	"os"
	"runtime/debug"
)

func main() {
	// ckpt runs for milliseconds: fewer, later collections cost less than the memory they
	// would save (a 1 MB diff spent more time in the collector than in the diff).
	env := stdEnv()
	if env.Getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}
	os.Exit(Main(os.Args[1:], env))
}
