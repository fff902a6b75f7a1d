// Command ckpt versions the Markdown checkpoint files of AI-agent sessions: every write is a
// commit in a per-session git repository. See README.md and docs/.
package main

import "os"

func main() {
	os.Exit(Main(os.Args[1:], stdEnv()))
}
