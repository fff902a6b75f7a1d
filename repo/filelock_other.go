//go:build !unix

package repo

import "os"

// lockFile is a no-op where flock does not exist; ckpt's own session lock (lock.go) still
// serialises its writers.
func lockFile(*os.File) error { return nil }

func unlockFile(*os.File) error { return nil }
