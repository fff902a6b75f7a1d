package repo

import (
	"os"
	"os/user"
	"testing"
)

func TestPasswdName(t *testing.T) {
	const passwd = "# comment:x:1000:\n+nis:x:1000:1000::/:/bin/sh\n-gone:x:1000:1000::/:/bin/sh\n" +
		"root:x:0:0:root:/root:/bin/bash\nbroken\nshort:x\nada:x:1000:1000:Ada:/home/ada:/bin/sh\n" +
		"bob:x:10000:10000::/home/bob:/bin/sh\nlast:x:42:42::/:/bin/sh"
	for _, tc := range []struct {
		uid  int
		want string
	}{
		{0, "root"},
		{1000, "ada"}, // not the NIS or comment lines before it
		{100, ""},     // not a prefix of 1000 or 10000
		{10000, "bob"},
		{42, "last"}, // no final newline
		{7, ""},
	} {
		if got := passwdName([]byte(passwd), tc.uid); got != tc.want {
			t.Errorf("passwdName(uid %d) = %q, want %q", tc.uid, got, tc.want)
		}
	}
}

// TestLoginNameAsOSUser: the name is the one os/user finds for the current user.
func TestLoginNameAsOSUser(t *testing.T) {
	u, err := user.Current()
	if err != nil || u.Username == "" {
		t.Skipf("os/user: %v", err)
	}
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Skip("no /etc/passwd")
	}
	if got := loginName(); got != u.Username {
		t.Errorf("loginName() = %q, os/user says %q", got, u.Username)
	}
}
