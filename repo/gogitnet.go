//go:build !ckpt_lean

package repo

import (
	"errors"
	"io"
	"strings"

	git "github.com/go-git/go-git/v5"
	gitcfg "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage"

	"github.com/ckpt-dev/ckpt/internal/hint"
)

// go-git's own network, for a machine without git (GitNetwork). Its package registers
// every transport (HTTP, SSH with its crypto, git://, file://) when it is initialised, so
// the lean build (tag ckpt_lean), which commits, checks, logs and runs hooks, leaves this
// file out, and hands a command that needs it to the full build (cmd/ckpt).

// goGitBuilt is true when this build carries go-git's transports.
const goGitBuilt = true

// GoGitAuthError reports whether err is go-git's network refusing the credentials.
func GoGitAuthError(err error) bool {
	return errors.Is(err, transport.ErrAuthenticationRequired) || errors.Is(err, transport.ErrAuthorizationFailed)
}

func goGitFetch(s storage.Storer, url string, refspecs []string, progress io.Writer) error {
	specs := make([]gitcfg.RefSpec, len(refspecs))
	for i, s := range refspecs {
		specs[i] = gitcfg.RefSpec(s)
	}
	rem := git.NewRemote(s, &gitcfg.RemoteConfig{Name: "ckpt", URLs: []string{url}})
	err := rem.Fetch(&git.FetchOptions{RemoteName: "ckpt", RefSpecs: specs, Tags: git.NoTags, Prune: true, Progress: progress})
	if errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil
	}
	if err != nil && strings.Contains(err.Error(), "couldn't find remote ref") {
		return nil // an empty remote
	}
	if err != nil && strings.Contains(err.Error(), "remote repository is empty") {
		return nil
	}
	return err
}

func goGitPush(s storage.Storer, url string, refspecs []string, progress io.Writer) error {
	specs := make([]gitcfg.RefSpec, len(refspecs))
	for i, s := range refspecs {
		specs[i] = gitcfg.RefSpec(s)
	}
	rem := git.NewRemote(s, &gitcfg.RemoteConfig{Name: "ckpt", URLs: []string{url}})
	err := rem.Push(&git.PushOptions{RemoteName: "ckpt", RefSpecs: specs, Progress: progress})
	if errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil
	}
	if err != nil && strings.Contains(err.Error(), "non-fast-forward") {
		return hint.New(ErrRejectedPush, "ckpt pull first, then push again")
	}
	return err
}
