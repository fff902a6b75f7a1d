//go:build ckpt_lean

package repo

import (
	"io"

	"github.com/go-git/go-git/v5/storage"
)

// The lean build leaves go-git's network out (see gogitnet.go): NewGitNetwork refuses to
// choose it, with ErrGoGitElsewhere.

const goGitBuilt = false

// GoGitAuthError is false: this build has no go-git network to refuse credentials.
func GoGitAuthError(error) bool { return false }

func goGitFetch(storage.Storer, string, []string, io.Writer) error { return ErrGoGitElsewhere }

func goGitPush(storage.Storer, string, []string, io.Writer) error { return ErrGoGitElsewhere }
