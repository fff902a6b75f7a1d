package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ckpt-dev/ckpt/repo"
)

// Claude Code reads CLAUDE.md files in full when a conversation starts and keeps them
// through compactions, and a line `@path` in one imports another file the same way. A
// skill (.claude/skills/NAME/SKILL.md) is different: only its description is in context
// until the model decides the skill is relevant, which for "keep your checkpoint" might be
// never. So the instructions are a file of ckpt's own that a CLAUDE.md imports.

// instructionsMarker starts the file ckpt writes, so that uninstall removes only its own.
const instructionsMarker = "<!-- written by ckpt hooks install --claude; ckpt hooks uninstall --claude removes it -->"

// ClaudeInstructions is where the agent instructions of one Claude Code scope go: File,
// which ckpt writes, and Memory, the CLAUDE.md that imports it with the line Import.
type ClaudeInstructions struct {
	File   string `json:"file"`
	Memory string `json:"memory"`
	Import string `json:"import"`
}

// ClaudeInstructionsPath returns where the instructions of a scope go: for the project
// .claude/ckpt.md imported by its CLAUDE.md (.claude/CLAUDE.md when that is the one it
// has), for local .claude/ckpt.local.md imported by CLAUDE.local.md, for the user
// ~/.claude/ckpt.md imported by ~/.claude/CLAUDE.md.
func ClaudeInstructionsPath(scope, projectDir, homeDir string) (ClaudeInstructions, error) {
	switch scope {
	case "project":
		memory := filepath.Join(projectDir, "CLAUDE.md")
		if !exists(memory) && exists(filepath.Join(projectDir, ".claude", "CLAUDE.md")) {
			return ClaudeInstructions{File: filepath.Join(projectDir, ".claude", "ckpt.md"), Memory: filepath.Join(projectDir, ".claude", "CLAUDE.md"), Import: "@ckpt.md"}, nil
		}
		return ClaudeInstructions{File: filepath.Join(projectDir, ".claude", "ckpt.md"), Memory: memory, Import: "@.claude/ckpt.md"}, nil
	case "local":
		return ClaudeInstructions{File: filepath.Join(projectDir, ".claude", "ckpt.local.md"), Memory: filepath.Join(projectDir, "CLAUDE.local.md"), Import: "@.claude/ckpt.local.md"}, nil
	case "user":
		return ClaudeInstructions{File: filepath.Join(homeDir, ".claude", "ckpt.md"), Memory: filepath.Join(homeDir, ".claude", "CLAUDE.md"), Import: "@~/.claude/ckpt.md"}, nil
	}
	return ClaudeInstructions{}, fmt.Errorf("scope %q: want project, local or user", scope)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// InstallInstructions writes text to ci.File and adds the import line to ci.Memory
// (created if needed; every other byte of it kept). Installing the same text twice writes
// nothing. A file at ci.File that ckpt did not write is refused.
func InstallInstructions(ci ClaudeInstructions, text string) (changed bool, err error) {
	content := []byte(instructionsMarker + "\n" + text)
	old, err := os.ReadFile(ci.File)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return false, fmt.Errorf("%s: %w", ci.File, err)
	case !bytes.HasPrefix(old, []byte(instructionsMarker)):
		return false, fmt.Errorf("%s: not written by ckpt; move it away, or import ckpt agent-prompt's text yourself", ci.File)
	}
	if !bytes.Equal(old, content) {
		if err := os.MkdirAll(filepath.Dir(ci.File), 0o755); err != nil {
			return false, fmt.Errorf("%s: %w", filepath.Dir(ci.File), err)
		}
		if err := repo.WriteFileAtomic(ci.File, content, 0o644, true); err != nil {
			return false, fmt.Errorf("%s: %w", ci.File, err)
		}
		changed = true
	}
	ci.Memory = followLink(ci.Memory)
	mem, mode, err := readMemory(ci.Memory)
	if err != nil {
		return changed, err
	}
	if hasLine(string(mem), ci.Import) {
		return changed, nil
	}
	if len(mem) > 0 && !bytes.HasSuffix(mem, []byte("\n")) {
		mem = append(mem, '\n')
	}
	if len(mem) > 0 {
		mem = append(mem, '\n')
	}
	mem = append(mem, ci.Import+"\n"...)
	if err := os.MkdirAll(filepath.Dir(ci.Memory), 0o755); err != nil {
		return changed, fmt.Errorf("%s: %w", filepath.Dir(ci.Memory), err)
	}
	if err := repo.WriteFileAtomic(ci.Memory, mem, mode, true); err != nil {
		return changed, fmt.Errorf("%s: %w", ci.Memory, err)
	}
	return true, nil
}

// UninstallInstructions removes the import line from ci.Memory (and the blank line install
// put before it; the file goes when nothing else is left in it) and ckpt's ci.File. A file
// ckpt did not write stays.
func UninstallInstructions(ci ClaudeInstructions) (changed bool, err error) {
	if old, err := os.ReadFile(ci.File); err == nil && bytes.HasPrefix(old, []byte(instructionsMarker)) {
		if err := os.Remove(ci.File); err != nil {
			return false, fmt.Errorf("%s: %w", ci.File, err)
		}
		changed = true
	}
	ci.Memory = followLink(ci.Memory)
	mem, mode, err := readMemory(ci.Memory)
	if err != nil || !hasLine(string(mem), ci.Import) {
		return changed, err
	}
	lines := strings.SplitAfter(string(mem), "\n")
	var kept []string
	for i, l := range lines {
		if strings.TrimRight(l, "\r\n") != ci.Import {
			kept = append(kept, l)
			continue
		}
		// The blank line install added before the import goes with it.
		if n := len(kept); n > 0 && strings.TrimSpace(kept[n-1]) == "" && (i+1 == len(lines) || lines[i+1] == "") {
			kept = kept[:n-1]
		}
	}
	out := strings.Join(kept, "")
	if strings.TrimSpace(out) == "" {
		if err := os.Remove(ci.Memory); err != nil {
			return true, fmt.Errorf("%s: %w", ci.Memory, err)
		}
		return true, nil
	}
	if err := repo.WriteFileAtomic(ci.Memory, []byte(out), mode, true); err != nil {
		return true, fmt.Errorf("%s: %w", ci.Memory, err)
	}
	return true, nil
}

// StatusInstructions reports whether ckpt's instructions are in place: the file written
// and imported.
func StatusInstructions(ci ClaudeInstructions) (bool, error) {
	old, err := os.ReadFile(ci.File)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%s: %w", ci.File, err)
	}
	mem, _, err := readMemory(ci.Memory)
	return err == nil && bytes.HasPrefix(old, []byte(instructionsMarker)) && hasLine(string(mem), ci.Import), err
}

// readMemory reads a CLAUDE.md (through a symbolic link, as a dotfile manager keeps it),
// nil for none, with the mode to write it back with.
func readMemory(path string) ([]byte, os.FileMode, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0o644, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	return b, mode, nil
}

// realPath follows a symbolic link, so that a write goes to the file a dotfile manager
// links to instead of replacing the link.
func followLink(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// UserScopePrompt is the user scope's instructions: a file that every project's
// conversations read, which cannot name one project's files, so it has the agent ask ckpt.
const UserScopePrompt = `# Keep the checkpoint of this work

Your context will be compacted, and what it held is then gone. ckpt keeps a checkpoint of
the work in each project, in files that it versions so that nothing written there is lost.
At the start of a conversation, before you first write them, run

    ckpt agent-prompt --scope user

in the project's directory: it prints where this project's checkpoint.md and notes.md are,
what each section is for, and when to write them (it creates them the first time). Follow
it for the rest of the conversation. After a compaction the checkpoint comes back to you.
`
