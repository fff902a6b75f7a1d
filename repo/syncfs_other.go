//go:build !linux && !windows

package repo

import "syscall"

// syncFS flushes every file system: where there is no syncfs, sync does the job.
func syncFS(string) error {
	syscall.Sync()
	return nil
}
