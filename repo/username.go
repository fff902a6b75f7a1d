package repo

import (
	"bytes"
	"os"
	"strconv"
)

// loginName is the name of the user running ckpt, for the default author: its entry in
// /etc/passwd, else $USER, $LOGNAME or %USERNAME%; "" when none says. Not os/user: with
// cgo on, that package makes every ckpt a dynamic binary that starts the C loader and libc
// and asks NSS (nscd's socket, nsswitch.conf) for a name that git's user.name usually
// overrides; without cgo it reads /etc/passwd, as this does.
func loginName() string {
	if uid := os.Getuid(); uid >= 0 {
		if b, err := ReadRegularFile("/etc/passwd", 16<<20); err == nil {
			if name := passwdName(b, uid); name != "" {
				return name
			}
		}
	}
	for _, k := range []string{"USER", "LOGNAME", "USERNAME"} {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	return ""
}

// passwdName finds the name of uid in the lines of a passwd file (name:password:uid:...);
// NIS lines (+name, -name) and comments are not entries.
func passwdName(passwd []byte, uid int) string {
	want := []byte(strconv.Itoa(uid))
	for len(passwd) > 0 {
		line := passwd
		if i := bytes.IndexByte(passwd, '\n'); i >= 0 {
			line, passwd = passwd[:i], passwd[i+1:]
		} else {
			passwd = nil
		}
		name, rest, ok := bytes.Cut(line, []byte{':'})
		if !ok || len(name) == 0 || name[0] == '+' || name[0] == '-' || name[0] == '#' {
			continue
		}
		_, rest, ok = bytes.Cut(rest, []byte{':'})
		if !ok {
			continue
		}
		id, _, ok := bytes.Cut(rest, []byte{':'})
		if ok && bytes.Equal(id, want) {
			return string(name)
		}
	}
	return ""
}
