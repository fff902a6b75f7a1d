package repo

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncFS flushes the file system holding dir with one syncfs call.
func syncFS(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}
