//go:build unix

package repo

import (
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// umask is the process's file mode creation mask. Linux reports it in /proc/self/status;
// elsewhere it is read by setting it and putting it back, once, which is safe only because
// nothing else creates a file at that moment (the first call happens before any write).
var umask = sync.OnceValue(func() fs.FileMode {
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "Umask:"); ok {
				if n, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
					return fs.FileMode(n)
				}
			}
		}
	}
	m := syscall.Umask(0o022)
	syscall.Umask(m)
	return fs.FileMode(m)
})
