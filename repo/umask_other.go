//go:build !unix

package repo

import "io/fs"

// umask is 0 where the system has none: modes are what ckpt asks for.
func umask() fs.FileMode { return 0 }
