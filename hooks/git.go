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

// gitHooks are the hooks ckpt installs, in the order status reports them.
// commit-msg adds the trailer to a message written in the editor, which
// prepare-commit-msg sees only as an empty template.
var gitHooks = []string{"pre-commit", "prepare-commit-msg", "commit-msg"}

// gitHookMarker is the line that tells ckpt's hook scripts from anybody else's.
const gitHookMarker = "# ckpt-managed-hook"

// origSuffix names the place where a hook that was there before ckpt is kept.
const origSuffix = ".ckpt-orig"

// ErrForeignHook is returned when the hook in place is something ckpt must not move:
// a symbolic link, a directory, or a hook that would clobber an already kept original.
var ErrForeignHook = errors.New("hook cannot be chained")

// GitHookStatus says what one hook of a repository looks like.
type GitHookStatus struct {
	Hook      string `json:"hook"`
	Path      string `json:"path"`
	Installed bool   `json:"installed"`
	// Chained is the path of the kept original hook that ckpt's script runs first, or "".
	Chained string `json:"chained,omitempty"`
	// Foreign is true when a hook that is not ckpt's is in place (status without install).
	Foreign bool `json:"foreign,omitempty"`
	// Committed is true when the hooks directory holds files the repository tracks (a
	// core.hooksPath the team committed): a change there shows in git status and travels
	// with the next commit.
	Committed bool `json:"committed,omitempty"`
	// Local is true when the hook is in ckpt's own hooks directory of the clone (install
	// --local), which runs the committed one first.
	Local bool `json:"local,omitempty"`
}

// GitHooksDir returns the directory git really runs hooks from for the repository at
// repoDir: core.hooksPath (husky, lefthook) and worktrees are honoured because git itself
// answers.
func GitHooksDir(repoDir string) (string, error) {
	cmd := exec.Command("git", "rev-parse", "--git-path", "hooks")
	cmd.Dir = repoDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: git rev-parse --git-path hooks: %s", repoDir, errText(err, stderr.String()))
	}
	dir := strings.TrimRight(string(out), "\r\n")
	if dir == "" {
		return "", fmt.Errorf("%s: git rev-parse --git-path hooks printed nothing", repoDir)
	}
	// git answers relative to the directory it ran in.
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(repoDir, dir)
	}
	return filepath.Abs(dir)
}

// GitHookScript is the script ckpt installs as hook. It runs a kept original first, with
// the same arguments and standard input, and stops with its status when it fails; then it
// hands over to the ckpt on PATH. A missing ckpt never breaks the user's commit.
func GitHookScript(hook string) string {
	return gitHookScript(hook, `# Installed by "ckpt hooks install --git"; "ckpt hooks uninstall --git" removes it and puts
# back the hook that was here before (kept as `+hook+origSuffix+`, which runs first).
case $0 in */*) dir=${0%/*} ;; *) dir=. ;; esac
orig="$dir/`+hook+origSuffix+`"
`)
}

// gitHookScript is a hook script of ckpt's whose head sets orig, the hook to run first.
func gitHookScript(hook, head string) string {
	return `#!/bin/sh
` + gitHookMarker + `: ` + hook + `
` + head + `if [ -x "$orig" ]; then
	"$orig" "$@" || exit $?
fi
` + skipWhenIdle(hook) + `if ! command -v ckpt >/dev/null 2>&1; then
	echo "ckpt: ` + hook + ` hook: ckpt is not on PATH, no checkpoint taken" >&2
	exit 0
fi
exec ckpt hook git ` + hook + ` "$@"
`
}

// skipWhenIdle is the part of a hook script that exits before starting ckpt when there is
// nothing for it to do.
func skipWhenIdle(hook string) string {
	switch hook {
	case "commit-msg":
		return `# prepare-commit-msg left trailers here only for a message still to be written in the
# editor; without them there is nothing to add.
case $1 in */*) pending=${1%/*}/` + PendingTrailers + ` ;; *) pending=` + PendingTrailers + ` ;; esac
if [ ! -f "$pending" ]; then
	exit 0
fi
`
	case "pre-commit":
		return deferPreCommit + skipUnbound
	}
	return skipUnbound
}

// skipUnbound exits when the store's list of bound work trees does not name this one. A
// short list is read by the shell itself; past boundLinesRead lines, grep reads the rest.
const skipUnbound = `# The store lists the work trees that have sessions in state/bound.txt: when this one is
# not there, there is nothing to do, and starting ckpt would only cost time.
# A linked worktree (.git is a file) is its main work tree's project: ckpt looks it up.
bound="${CKPT_HOME:-$PWD/.ckpt}/state/bound.txt"
if [ -f "$bound" ] && [ -d .git ] && cd -P .; then
	listed= n=0 line=
	{
		while [ $n -lt ` + boundLinesRead + ` ] && IFS= read -r line; do
			n=$((n + 1))
			if [ "$line" = "$PWD" ]; then
				listed=yes
				break
			fi
		done
	} <"$bound"
	if [ -z "$listed" ] && [ -n "$line" ] && [ "$line" = "$PWD" ]; then
		listed=yes # a last line without its newline
	fi
	if [ -z "$listed" ] && [ $n -ge ` + boundLinesRead + ` ] && grep -qxF -- "$PWD" "$bound"; then
		listed=yes
	fi
	if [ -z "$listed" ]; then
		exit 0
	fi
fi
`

// boundLinesRead is how many lines of bound.txt a hook script reads before it leaves the
// rest to grep: the shell reads a byte per system call, grep is a process.
const boundLinesRead = "16"

// deferPreCommit hands pre-commit's checkpoint to prepare-commit-msg, so that a commit
// starts one ckpt process instead of two: it leaves a mark (PreCommitMarkSuffix), naming the git process
// and the commit's author date, and exits. prepare-commit-msg takes the checkpoint when
// the mark names its own commit (TakePreCommitMark); git commit --no-verify skips this
// hook, so it takes none. Run by anything but git itself (another tool's hook running
// this one), beside no prepare-commit-msg of ckpt's, without ckpt on PATH, or on Windows
// (where the shell's exec does not keep the process id), this hook goes on as it always
// did.
const deferPreCommit = `# ckpt's prepare-commit-msg takes this hook's checkpoint, in the one ckpt process of the
# commit: here only a mark for it, naming this git process and this commit.
parent=
{ read -r parent </proc/$PPID/comm; } 2>/dev/null
next=
{ read -r next && read -r next; } 2>/dev/null <"$dir/prepare-commit-msg"
if [ -n "$GIT_INDEX_FILE" ] && [ "${parent:-git}" = git ] && [ "$OS" != Windows_NT ] && [ -x "$dir/prepare-commit-msg" ] &&
	[ "$next" = "` + gitHookMarker + `: prepare-commit-msg" ] && command -v ckpt >/dev/null 2>&1; then
	# noclobber: a mark already there (a commit aborted before prepare-commit-msg took it)
	# is not overwritten; this hook then takes the checkpoint itself, below.
	mark=$GIT_INDEX_FILE` + PreCommitMarkSuffix + `
	set -C
	if { echo "$PPID $GIT_AUTHOR_DATE" >"$mark"; } 2>/dev/null; then
		exit 0
	fi
	set +C
fi
`

// PreCommitMarkSuffix makes, from the name of the index git commits ($GIT_INDEX_FILE), the
// file where ckpt's pre-commit hook says that it ran for that commit (see deferPreCommit):
// one per index, so two commits whose temporary indexes share a directory keep theirs.
const PreCommitMarkSuffix = ".ckpt-pre-commit"

// PendingTrailers is the file, next to the commit message, where prepare-commit-msg leaves
// the trailers of a message the editor has yet to write, for commit-msg to add.
const PendingTrailers = "CKPT_TRAILERS"

// InstallGit installs ckpt's hooks into the repository at repoDir. A hook that is already
// there is moved aside untouched (bytes and mode) and chained; installing twice changes
// nothing.
func InstallGit(repoDir string) ([]GitHookStatus, error) {
	dir, err := GitHooksDir(repoDir)
	if err != nil {
		return nil, err
	}
	// Check every hook before changing any, so that a refusal leaves nothing half done.
	for _, hook := range gitHooks {
		if err := checkInstallable(filepath.Join(dir, hook)); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	var out []GitHookStatus
	committed := committedDir(repoDir, dir)
	for _, hook := range gitHooks {
		st, err := installHook(dir, hook)
		if err != nil {
			return out, err
		}
		st.Committed = committed
		out = append(out, st)
	}
	return out, nil
}

// checkInstallable refuses what installHook could not chain.
func checkInstallable(path string) error {
	cur, err := inspectHook(path)
	if err != nil {
		return err
	}
	origExists, err := regularExists(path + origSuffix)
	if err != nil {
		return err
	}
	if cur.exists && !cur.ours && origExists {
		return fmt.Errorf("%s: %w: %s already exists; move one of them away first", path, ErrForeignHook, path+origSuffix)
	}
	return nil
}

func installHook(dir, hook string) (GitHookStatus, error) {
	path := filepath.Join(dir, hook)
	orig := path + origSuffix
	script := []byte(GitHookScript(hook))
	cur, err := inspectHook(path)
	if err != nil {
		return GitHookStatus{}, err
	}
	origExists, err := regularExists(orig)
	if err != nil {
		return GitHookStatus{}, err
	}
	switch {
	case cur.ours:
		if bytes.Equal(cur.data, script) && cur.mode&0o111 != 0 {
			return hookStatus(hook, path, true, origExists), nil
		}
		// An older ckpt's script: replace it, the kept original stays where it is.
	case cur.exists:
		if origExists {
			return GitHookStatus{}, checkInstallable(path)
		}
		// Rename keeps the bytes, the mode and the inode: the original is untouched.
		if err := os.Rename(path, orig); err != nil {
			return GitHookStatus{}, fmt.Errorf("%s: keep original hook: %w", path, err)
		}
		origExists = true
	}
	// When no hook is there but an original is kept (an install interrupted after the
	// move, or our script deleted by hand), chaining it again is what the install had
	// promised.
	if err := repo.WriteFileAtomic(path, script, 0o755, true); err != nil {
		return GitHookStatus{}, fmt.Errorf("%s: %w", path, err)
	}
	// A script of ours that lost its x bits keeps its mode through the write: git would
	// skip it.
	if err := os.Chmod(path, 0o755); err != nil {
		return GitHookStatus{}, err
	}
	return hookStatus(hook, path, true, origExists), nil
}

// UninstallGit removes ckpt's hooks from the repository at repoDir and puts back the
// hooks they had kept, byte for byte and with their mode. A hook that is not ckpt's is
// left alone.
func UninstallGit(repoDir string) ([]GitHookStatus, error) {
	dir, err := GitHooksDir(repoDir)
	if err != nil {
		return nil, err
	}
	var out []GitHookStatus
	for _, hook := range gitHooks {
		path := filepath.Join(dir, hook)
		orig := path + origSuffix
		cur, err := lstatHook(path)
		if err != nil {
			return out, err
		}
		if !cur.ours {
			st, err := statusHook(dir, hook)
			if err != nil {
				return out, err
			}
			out = append(out, st)
			continue
		}
		origExists, err := regularExists(orig)
		if err != nil {
			return out, err
		}
		if origExists {
			if err := os.Rename(orig, path); err != nil {
				return out, fmt.Errorf("%s: restore original hook: %w", path, err)
			}
		} else if err := os.Remove(path); err != nil {
			return out, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, GitHookStatus{Hook: hook, Path: path, Foreign: origExists})
	}
	return out, nil
}

// StatusGit reports ckpt's hooks in the repository at repoDir without changing anything.
func StatusGit(repoDir string) ([]GitHookStatus, error) {
	dir, err := GitHooksDir(repoDir)
	if err != nil {
		return nil, err
	}
	var out []GitHookStatus
	for _, hook := range gitHooks {
		st, err := statusHook(dir, hook)
		if err != nil {
			return out, err
		}
		out = append(out, st)
	}
	return out, nil
}

func statusHook(dir, hook string) (GitHookStatus, error) {
	path := filepath.Join(dir, hook)
	cur, err := lstatHook(path)
	if err != nil {
		return GitHookStatus{}, err
	}
	if !cur.ours {
		return GitHookStatus{Hook: hook, Path: path, Foreign: cur.exists}, nil
	}
	origExists, err := regularExists(path + origSuffix)
	if err != nil {
		return GitHookStatus{}, err
	}
	return hookStatus(hook, path, true, origExists), nil
}

func hookStatus(hook, path string, installed, chained bool) GitHookStatus {
	st := GitHookStatus{Hook: hook, Path: path, Installed: installed}
	if chained {
		st.Chained = path + origSuffix
	}
	return st
}

// hookFile is what a hook path holds.
type hookFile struct {
	exists bool
	ours   bool
	data   []byte
	mode   fs.FileMode
	kind   string // "symbolic link" or "directory" when it is not a regular file
}

// lstatHook looks at a hook without following a symbolic link.
func lstatHook(path string) (hookFile, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return hookFile{}, nil
	}
	if err != nil {
		return hookFile{}, fmt.Errorf("%s: %w", path, err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return hookFile{exists: true, kind: "symbolic link"}, nil
	case fi.IsDir():
		return hookFile{exists: true, kind: "directory"}, nil
	case !fi.Mode().IsRegular():
		return hookFile{exists: true, kind: "special file"}, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return hookFile{}, fmt.Errorf("%s: %w", path, err)
	}
	return hookFile{exists: true, ours: isOurHook(data), data: data, mode: fi.Mode()}, nil
}

// inspectHook is lstatHook for a change: anything but a regular file is refused, because
// moving a link or a directory aside is not something a user would expect from ckpt.
func inspectHook(path string) (hookFile, error) {
	h, err := lstatHook(path)
	if err != nil {
		return h, err
	}
	if h.kind != "" {
		return h, fmt.Errorf("%s: %w: it is a %s, not a regular file; chain ckpt by hand (see ckpt hooks status)", path, ErrForeignHook, h.kind)
	}
	return h, nil
}

func isOurHook(data []byte) bool {
	// The marker sits on line 2, under the shebang; looking further would risk taking a
	// script that merely mentions ckpt for ours.
	lines := strings.SplitN(string(data), "\n", 4)
	for i := 0; i < len(lines) && i < 3; i++ {
		if strings.HasPrefix(lines[i], gitHookMarker) {
			return true
		}
	}
	return false
}

// regularExists reports whether a kept original is at path; a kept original that is not a
// regular file is an error because ckpt only ever renames regular files there.
func regularExists(path string) (bool, error) {
	exists, regular, err := lstatRegular(path)
	if exists && !regular {
		return false, fmt.Errorf("%s: %w: kept original is not a regular file", path, ErrForeignHook)
	}
	return exists, err
}

// lstatRegular reports whether something is at path, without following a symbolic link,
// and whether it is a regular file.
func lstatRegular(path string) (exists, regular bool, err error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, false, nil
	}
	if err != nil {
		return false, false, fmt.Errorf("%s: %w", path, err)
	}
	return true, fi.Mode().IsRegular(), nil
}

// linkedDepth is how many code commits LastLinked reads back.
const linkedDepth = 200

// LastLinked returns, for each session of want that one of the last code commits of the
// repository at workTree names in a Ckpt-Checkpoint trailer, the newest value
// (<session>@<hash>). It is empty when git cannot say (no commit yet). It stops reading
// git's history once every session of want is found.
func LastLinked(workTree string, want []string) map[string]string {
	out := map[string]string{}
	if len(want) == 0 {
		return out
	}
	at, _ := lastLinkedGit(workTree, want)
	for id, a := range at {
		if a.V != "" {
			out[id] = a.V
		}
	}
	return out
}
