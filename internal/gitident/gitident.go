// Package gitident finds the identity git would sign a commit with in a directory
// (user.name and user.email, as `git config` reads them there), without starting git on
// every call: git's answer is kept with a fingerprint of everything it depends on (the
// config files git read, the ones it would read if they appeared, the .git it found and the
// environment that steers it), and reused while the fingerprint holds.
package gitident

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Ident is user.name and user.email; either is "" when git has none.
type Ident struct {
	Name  string `json:"name"`
	Email string `json:"email"`
}

// envKeys are the variables that change which config files git reads or what they say.
var envKeys = []string{
	"HOME", "XDG_CONFIG_HOME", "PATH", "PREFIX",
	"GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM",
	"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
	"GIT_DIR", "GIT_COMMON_DIR", "GIT_WORK_TREE", "GIT_CEILING_DIRECTORIES",
	"GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_TEST_ASSUME_DIFFERENT_OWNER",
}

// maxCached bounds the cache: the directories ckpt commits from (projects, the store).
const maxCached = 32

// racy is how recent a file's change may be for git's answer to be cached: a file changed
// again within its mtime's resolution would keep its fingerprint (git's "racy" index case).
const racy = 2 * time.Second

// Lookup returns the identity git would sign a commit with in dir. cache is the file that
// keeps git's answers ("" keeps none); getenv reads the environment git will see. When git
// is missing or has no identity, the fields are "".
func Lookup(dir, cache string, getenv func(string) string) Ident {
	env := environment(getenv)
	if cache != "" {
		if id, ok := cached(cache, dir, env); ok {
			return id
		}
	}
	e, err := ask(dir, getenv, env)
	if err != nil {
		return e.Ident
	}
	if cache != "" {
		store(cache, dir, e)
	}
	return e.Ident
}

// entry is one cached answer and its fingerprint.
type entry struct {
	Ident
	Env   map[string]string `json:"env"`
	Files map[string]string `json:"files"` // path -> signature (stat), "-" when absent
	Walk  map[string]string `json:"walk"`  // .git entries of git's discovery -> presence
	Used  int64             `json:"used"`  // unix seconds of the last hit, for eviction
}

// environment is the values of envKeys, with GIT_CONFIG_KEY_n/VALUE_n, that are set.
func environment(getenv func(string) string) map[string]string {
	env := map[string]string{}
	for _, k := range envKeys {
		if v := getenv(k); v != "" {
			env[k] = v
		}
	}
	if n, err := strconv.Atoi(getenv("GIT_CONFIG_COUNT")); err == nil {
		for i := range min(n, 1000) {
			for _, k := range []string{"GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"} {
				k += strconv.Itoa(i)
				env[k] = getenv(k)
			}
		}
	}
	return env
}

// signature is what a config file's change changes: its presence, kind, size, mtime,
// inode and owner (git ignores a repository's config when another user owns it).
func signature(path string) string {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return "-"
	}
	if err != nil {
		return "?" + err.Error()
	}
	sig := fmt.Sprintf("%s %d %d", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		sig += fmt.Sprintf(" %d %d %d", st.Dev, st.Ino, st.Uid)
	}
	return sig
}

// presence is what matters of a .git entry met on git's way up from dir: whether it is
// there, and whether it is a directory (a repository) or a file (a linked worktree's
// pointer, whose content matters). A directory's mtime changes with every commit.
func presence(path string) string {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return "-"
	case err != nil:
		return "?" + err.Error()
	case fi.IsDir():
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			return fmt.Sprintf("dir %d %d %d", st.Dev, st.Ino, st.Uid)
		}
		return "dir"
	}
	return signature(path)
}

// cached returns the answer kept for dir when its fingerprint still holds.
func cached(cache, dir string, env map[string]string) (Ident, bool) {
	all := load(cache)
	e, ok := all[dir]
	if !ok || !mapsEqual(e.Env, env) || len(e.Files) == 0 {
		return Ident{}, false
	}
	for p, sig := range e.Files {
		if signature(p) != sig {
			return Ident{}, false
		}
	}
	for p, sig := range e.Walk {
		if presence(p) != sig {
			return Ident{}, false
		}
	}
	return e.Ident, true
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func load(cache string) map[string]*entry {
	all := map[string]*entry{}
	b, err := os.ReadFile(cache)
	if err == nil {
		_ = json.Unmarshal(b, &all) // a damaged cache is an empty one
	}
	return all
}

// store keeps e for dir, evicting the least recently stored answers past maxCached. It is
// best effort: a cache that cannot be written costs the next call a git process.
func store(cache, dir string, e *entry) {
	all := load(cache)
	e.Used = time.Now().Unix()
	all[dir] = e
	if len(all) > maxCached {
		dirs := make([]string, 0, len(all))
		for d := range all {
			dirs = append(dirs, d)
		}
		slices.SortFunc(dirs, func(a, b string) int { return int(all[a].Used - all[b].Used) })
		for _, d := range dirs[:len(all)-maxCached] {
			delete(all, d)
		}
	}
	b, err := json.Marshal(all)
	if err != nil {
		return
	}
	tmp := fmt.Sprintf("%s.%d.tmp", cache, os.Getpid())
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		_ = os.Remove(tmp)
		return
	}
	if err := os.Rename(tmp, cache); err != nil {
		_ = os.Remove(tmp)
	}
}

// ask runs git for the identity and the files it depends on. The entry has no files (and
// must not be cached) when git failed or something it read cannot be fingerprinted.
func ask(dir string, getenv func(string) string, env map[string]string) (*entry, error) {
	e := &entry{Env: env, Files: map[string]string{}}
	start := time.Now()
	out, err := gitOutput(dir, "config", "--show-origin", "--null", "--list")
	if err != nil {
		// git exits 1 with no config at all; anything else is no git: no identity either way.
		return e, err
	}
	origins, cacheable := parseList(out, dir, &e.Ident)
	for _, p := range append(origins, candidates(dir, getenv)...) {
		e.Files[p] = signature(p)
	}
	// The repository git found for dir, and the .git entries it looked at on the way.
	if gd, err := gitOutput(dir, "rev-parse", "--absolute-git-dir", "--git-common-dir"); err == nil {
		lines := strings.Split(strings.TrimSpace(string(gd)), "\n")
		for _, d := range lines {
			if !filepath.IsAbs(d) {
				d = filepath.Join(dir, d)
			}
			for _, name := range []string{"config", "config.worktree", "commondir"} {
				p := filepath.Join(d, name)
				e.Files[p] = signature(p)
			}
		}
	}
	e.Walk = map[string]string{}
	for _, p := range discovery(dir) {
		e.Walk[p] = presence(p)
	}
	for p, sig := range e.Files {
		if strings.HasPrefix(sig, "?") || changedSince(p, start.Add(-racy)) {
			cacheable = false
		}
	}
	for _, sig := range e.Walk {
		cacheable = cacheable && !strings.HasPrefix(sig, "?")
	}
	if !cacheable {
		e.Files, e.Walk = nil, nil
	}
	return e, nil
}

// changedSince reports whether path was modified after t.
func changedSince(path string, t time.Time) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.ModTime().After(t)
}

// gitOutput runs git in dir with ckpt's environment (a variable: tests count the calls).
var gitOutput = func(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	return cmd.Output()
}

// parseList reads `git config --show-origin --null --list`: the files its entries came from,
// and the last user.name and user.email (the ones that win). cacheable is false when an
// entry came from somewhere other than a file (the command line, standard input, a blob)
// or when the config includes other files.
func parseList(out []byte, dir string, id *Ident) (files []string, cacheable bool) {
	cacheable = true
	seen := map[string]bool{}
	fields := bytes.Split(out, []byte{0})
	for i := 0; i+1 < len(fields); i += 2 {
		origin, kv := string(fields[i]), string(fields[i+1])
		if p, ok := strings.CutPrefix(origin, "file:"); ok {
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p) // the local config, named from dir
			}
			if !seen[p] {
				seen[p] = true
				files = append(files, p)
			}
		} else {
			cacheable = false
		}
		k, v, _ := strings.Cut(kv, "\n")
		k = strings.ToLower(k)
		if strings.HasPrefix(k, "include.") || strings.HasPrefix(k, "includeif.") {
			// An include may name a file that does not exist yet, or depend on the
			// branch checked out: no fingerprint covers that.
			cacheable = false
		}
		switch k {
		case "user.name":
			id.Name = strings.TrimSpace(v)
		case "user.email":
			id.Email = strings.TrimSpace(v)
		}
	}
	return files, cacheable
}

// candidates are the config files git reads when they exist, whether or not they do now:
// a global file created later must invalidate the answer. (The system file's place depends
// on how git was built; when it exists, git names it among the origins.)
func candidates(dir string, getenv func(string) string) []string {
	var out []string
	home := getenv("HOME")
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		out = append(out, filepath.Join(x, "git", "config"))
	} else if home != "" {
		out = append(out, filepath.Join(home, ".config", "git", "config"))
	}
	if home != "" {
		out = append(out, filepath.Join(home, ".gitconfig"))
	}
	for _, k := range []string{"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"} {
		if p := getenv(k); p != "" && filepath.IsAbs(p) {
			out = append(out, p)
		}
	}
	out = append(out, "/etc/gitconfig")
	return out
}

// discovery are the .git entries git's search from dir upwards looks at, up to the first
// that exists: one appearing closer to dir later would make git read another config.
func discovery(dir string) []string {
	var out []string
	for d := filepath.Clean(dir); ; {
		p := filepath.Join(d, ".git")
		out = append(out, p)
		if _, err := os.Lstat(p); err == nil {
			return out
		}
		up := filepath.Dir(d)
		if up == d {
			return out
		}
		d = up
	}
}
