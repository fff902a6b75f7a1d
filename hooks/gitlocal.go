package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ckpt-dev/ckpt/repo"
)

// A team that commits its hooks (core.hooksPath = .githooks, .husky) shares the files ckpt
// would chain itself into: installing there changes tracked files. --local keeps ckpt out
// of them: ckpt's hooks go to a directory of the clone's own (<git dir>/ckpt-hooks), which
// core.hooksPath then names (in the clone's config only); there each of ckpt's hooks runs
// the team's first, and every other hook of the team's directory gets a two-line wrapper
// that runs it. Uninstalling puts core.hooksPath back.

// localHooksName is ckpt's hooks directory in the git directory.
const localHooksName = "ckpt-hooks"

// teamHooksKey remembers, in the clone's config, the core.hooksPath that --local replaced
// ("" when it was not set there).
const teamHooksKey = "ckpt.teamhookspath"

// committedDir reports whether the hooks directory dir holds files that the repository at
// repoDir tracks.
func committedDir(repoDir, dir string) bool {
	out, err := runGit(repoDir, "ls-files", "-z", "--full-name", "--", dir)
	return err == nil && len(out) > 0
}

// git runs git in dir and returns its output, trimmed of the final newline.
func runGit(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: git %s: %s", dir, strings.Join(args, " "), errText(err, stderr.String()))
	}
	return strings.TrimRight(string(out), "\r\n"), nil
}

// localHooksDir is ckpt's hooks directory of the repository at repoDir.
func localHooksDir(repoDir string) (string, error) {
	dir, err := runGit(repoDir, "rev-parse", "--git-path", localHooksName)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(repoDir, dir)
	}
	return filepath.Abs(dir)
}

// localConfig reads key from the clone's own config, "" when unset.
func localConfig(repoDir, key string) string {
	v, _ := runGit(repoDir, "config", "--local", "--get", key)
	return v
}

// InstallGitLocal installs ckpt's hooks in the clone's own hooks directory and points
// core.hooksPath at it; the hooks directory in use until then (the team's) runs first.
// Installing twice changes nothing.
func InstallGitLocal(repoDir string) ([]GitHookStatus, error) {
	local, err := localHooksDir(repoDir)
	if err != nil {
		return nil, err
	}
	team, err := GitHooksDir(repoDir)
	if err != nil {
		return nil, err
	}
	prev := localConfig(repoDir, "core.hooksPath")
	if team == local { // installed before: the team's is the one remembered
		prev = localConfig(repoDir, teamHooksKey)
		if team, err = teamDir(repoDir, prev); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(local, 0o755); err != nil {
		return nil, fmt.Errorf("%s: %w", local, err)
	}
	entries, err := os.ReadDir(team)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", team, err)
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, ".sample") || strings.Contains(name, ".") || isOurs(gitHooks, name) {
			continue
		}
		if fi, err := os.Stat(filepath.Join(team, name)); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
			continue
		}
		wrapper := "#!/bin/sh\n" + gitHookMarker + ": " + name + " (runs the team's)\nexec " + shQuote(filepath.Join(team, name)) + " \"$@\"\n"
		if err := writeLocalHook(filepath.Join(local, name), wrapper); err != nil {
			return nil, err
		}
	}
	var out []GitHookStatus
	for _, hook := range gitHooks {
		script := gitHookScript(hook, `# Installed by "ckpt hooks install --git --local" in this clone's own hooks directory;
# the hook of the repository's committed hooks directory runs first.
case $0 in */*) dir=${0%/*} ;; *) dir=. ;; esac
orig=`+shQuote(filepath.Join(team, hook))+`
`)
		path := filepath.Join(local, hook)
		if err := writeLocalHook(path, script); err != nil {
			return out, err
		}
		out = append(out, GitHookStatus{Hook: hook, Path: path, Installed: true, Chained: filepath.Join(team, hook), Local: true})
	}
	if team != local && localConfig(repoDir, "core.hooksPath") != local {
		if _, err := runGit(repoDir, "config", "--local", teamHooksKey, prev); err != nil {
			return out, err
		}
		if _, err := runGit(repoDir, "config", "--local", "core.hooksPath", local); err != nil {
			return out, err
		}
	}
	return out, nil
}

// teamDir is the hooks directory core.hooksPath = prev names ("" for git's own).
func teamDir(repoDir, prev string) (string, error) {
	if prev == "" {
		dir, err := runGit(repoDir, "rev-parse", "--git-path", "hooks")
		if err != nil {
			return "", err
		}
		prev = dir
	}
	if !filepath.IsAbs(prev) {
		top, err := runGit(repoDir, "rev-parse", "--show-toplevel")
		if err != nil {
			return "", err
		}
		prev = filepath.Join(top, prev)
	}
	return filepath.Clean(prev), nil
}

func isOurs(list []string, name string) bool {
	for _, n := range list {
		if n == name {
			return true
		}
	}
	return false
}

// writeLocalHook writes a script of ckpt's own directory, refusing to replace a file that is
// not ckpt's.
func writeLocalHook(path, script string) error {
	if cur, err := lstatHook(path); err != nil {
		return err
	} else if cur.exists && !cur.ours {
		return fmt.Errorf("%s: %w: not ckpt's", path, ErrForeignHook)
	}
	if err := repo.WriteFileAtomic(path, []byte(script), 0o755, true); err != nil {
		return err
	}
	return os.Chmod(path, 0o755)
}

// UninstallGitLocal points core.hooksPath back where it was and removes ckpt's hooks
// directory of the clone (only the scripts ckpt wrote).
func UninstallGitLocal(repoDir string) ([]GitHookStatus, error) {
	local, err := localHooksDir(repoDir)
	if err != nil {
		return nil, err
	}
	if localConfig(repoDir, "core.hooksPath") == local {
		if prev := localConfig(repoDir, teamHooksKey); prev != "" {
			_, err = runGit(repoDir, "config", "--local", "core.hooksPath", prev)
		} else {
			_, err = runGit(repoDir, "config", "--local", "--unset", "core.hooksPath")
		}
		if err != nil {
			return nil, err
		}
	}
	_, _ = runGit(repoDir, "config", "--local", "--unset", teamHooksKey)
	entries, _ := os.ReadDir(local)
	for _, e := range entries {
		if cur, err := lstatHook(filepath.Join(local, e.Name())); err == nil && cur.ours {
			if err := os.Remove(filepath.Join(local, e.Name())); err != nil {
				return nil, err
			}
		}
	}
	_ = os.Remove(local) // only when empty
	return StatusGit(repoDir)
}

// StatusGitLocal reports ckpt's hooks of the clone's own directory, and whether git uses it.
func StatusGitLocal(repoDir string) ([]GitHookStatus, error) {
	local, err := localHooksDir(repoDir)
	if err != nil {
		return nil, err
	}
	used := localConfig(repoDir, "core.hooksPath") == local
	var out []GitHookStatus
	for _, hook := range gitHooks {
		path := filepath.Join(local, hook)
		cur, err := lstatHook(path)
		if err != nil {
			return out, err
		}
		out = append(out, GitHookStatus{Hook: hook, Path: path, Installed: used && cur.ours, Local: true})
	}
	return out, nil
}
