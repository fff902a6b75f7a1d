//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd

package repo

import (
	"os"
	"time"
)

// statData has nothing more to offer here: git rehashes files whose stat data is missing.
func statData(os.FileInfo) (ctime time.Time, dev, ino, uid, gid uint32, ok bool) {
	return time.Time{}, 0, 0, 0, 0, false
}
