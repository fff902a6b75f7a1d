package hooks

import (
	"os/exec"
	"strings"
)

// GitAuthor returns user.name and user.email as git reads them in dir (the repository's
// config, then the user's and the system's, includes followed): the identity git would
// sign a commit with there. Either is "" when unset, or when there is no git.
func GitAuthor(dir string) (name, email string) {
	cmd := exec.Command("git", "config", "--get-regexp", `^user\.(name|email)$`)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", "" // exit 1: neither is set
	}
	for _, l := range strings.Split(string(out), "\n") {
		k, v, _ := strings.Cut(l, " ")
		switch k {
		case "user.name":
			name = strings.TrimSpace(v)
		case "user.email":
			email = strings.TrimSpace(v)
		}
	}
	return name, email
}
