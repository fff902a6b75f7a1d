package remote

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ckpt-dev/ckpt/internal/hint"
	"github.com/ckpt-dev/ckpt/repo"
)

// ErrAuth is a remote that refused the credentials (or asked for some and got none).
var ErrAuth = errors.New("authentication failed")

// networkError makes a refused login one line that says what to do, whichever git did the
// network (git's own message is two lines and quotes the server); any other error is
// returned as it is.
func networkError(remote, url string, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if repo.GoGitAuthError(err) ||
		strings.Contains(msg, "Authentication failed") || strings.Contains(msg, "could not read Username") ||
		strings.Contains(msg, "The requested URL returned error: 401") || strings.Contains(msg, "The requested URL returned error: 403") {
		return hint.New(fmt.Errorf("remote %s (%s): %w; nothing was sent or fetched", remote, repo.MaskURLs(url), ErrAuth),
			"give the right password once: ckpt remote add %s <url with user:password> (git's credential helper keeps it), or fix it in the helper", remote)
	}
	return err
}
