//go:build unix

package repo

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on f, as go-git asks of the files it locks (a ref it
// updates in the transport repository, say).
func lockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }

func unlockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
