package repo

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
)

// Remote URLs hold no credentials in the store: a password given in one is handed to git's
// credential helper (which keeps such things) and the URL is stored without it, and a URL
// ckpt prints has any password masked.

// StripCredentials returns rawURL without a user:password@ part (an http(s) URL loses the
// user too, which the credential helper keeps with the password), and the user and password
// it held. A URL without a password comes back as it was.
func StripCredentials(rawURL string) (clean, user, password string) {
	u, err := url.Parse(rawURL)
	if err != nil || u.User == nil || u.Scheme == "" {
		return rawURL, "", ""
	}
	pw, ok := u.User.Password()
	if !ok {
		return rawURL, "", ""
	}
	user = u.User.Username()
	if u.Scheme == "http" || u.Scheme == "https" {
		u.User = nil
	} else {
		u.User = url.User(user) // ssh://git:pw@host: the user names the account
	}
	return u.String(), user, pw
}

var urlPassword = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b([A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@"'<>]*:)[^\s/?#@"'<>]+@`)
})

// MaskURLs replaces the password of every scheme://user:password@host URL in text with ***.
func MaskURLs(text string) string {
	if !strings.Contains(text, "://") {
		return text
	}
	return urlPassword().ReplaceAllString(text, "${1}***@")
}

// ApproveCredential hands user and password for rawURL (which must hold no credentials) to
// git's credential helpers (`git credential approve`), as git does after a login that
// worked. helper is false when no helper is configured, so nothing kept them.
func ApproveCredential(gitBin, rawURL, user, password string) (helper bool, err error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false, err
	}
	if gitBin == "" {
		if gitBin, err = exec.LookPath("git"); err != nil {
			return false, nil
		}
	}
	cfg := exec.Command(gitBin, "config", "--get-urlmatch", "credential.helper", rawURL)
	if out, err := cfg.Output(); err != nil || len(bytes.TrimSpace(out)) == 0 {
		return false, nil
	}
	var in strings.Builder
	fmt.Fprintf(&in, "protocol=%s\nhost=%s\n", u.Scheme, u.Host)
	if p := strings.TrimPrefix(u.Path, "/"); p != "" {
		fmt.Fprintf(&in, "path=%s\n", p)
	}
	fmt.Fprintf(&in, "username=%s\npassword=%s\n\n", user, password)
	cmd := exec.Command(gitBin, "credential", "approve")
	cmd.Stdin = strings.NewReader(in.String())
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return true, fmt.Errorf("git credential approve: %s", MaskURLs(strings.TrimSpace(string(out))))
	}
	return true, nil
}

// AddedRemote says what AddRemote stored.
type AddedRemote struct {
	URL string // as stored: without credentials
	// Credentials is true when the URL held a password; Kept when a git credential helper
	// took it (else it was dropped: git asks for it, or a helper set up later keeps it).
	Credentials, Kept bool
}

// AddRemote records a remote. A password in its URL goes to git's credential helper, not
// into the store.
func (st *Store) AddRemote(name, rawURL string) (AddedRemote, error) {
	clean, user, pw := StripCredentials(rawURL)
	out := AddedRemote{URL: clean, Credentials: pw != ""}
	if out.Credentials {
		kept, err := ApproveCredential("", clean, user, pw)
		if err != nil {
			return out, err
		}
		out.Kept = kept
	}
	return out, st.SetRemote(name, clean)
}
