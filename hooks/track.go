package hooks

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/templates"
)

// Track makes dir, a directory of Markdown memory files that an agent writes, a session
// with the free template: every *.md file in it is committed as it is (the first commit
// holds what is there now), and the git directory stays in the store. The session is bound
// to the project (when not ""), so that the project's git and agent hooks commit it, and
// cron ticks do wherever it is bound.
func (rn *Runner) Track(id repo.SessionID, dir, project string) (*repo.Repo, repo.Hash, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, repo.ZeroHash, err
	}
	if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
		return nil, repo.ZeroHash, fmt.Errorf("%s: not a directory", abs)
	}
	r, h, err := rn.CP.InitSession(id, templates.Free, abs, map[string]string{"tracks": abs})
	if err != nil {
		return nil, repo.ZeroHash, err
	}
	if err := rn.Bind(r, project, ""); err != nil {
		return r, h, fmt.Errorf("session %s created, but recording it for the hooks failed: %w", r.ID, err)
	}
	return r, h, nil
}

// ClaudeMemoryDir is where Claude Code keeps a project's auto memory (MEMORY.md and topic
// files): ~/.claude/projects/<project path, each character other than a letter or digit
// made "-">/memory, the project being the main work tree of its git repository.
func ClaudeMemoryDir(project, userHome string) string {
	slug := strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			return c
		}
		return '-'
	}, project)
	return filepath.Join(userHome, ".claude", "projects", slug, "memory")
}
