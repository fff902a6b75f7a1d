package repo

import (
	"os"
	"syscall"
	"time"
)

// statData is what the git index records of a file beyond its size and mtime.
func statData(fi os.FileInfo) (ctime time.Time, dev, ino, uid, gid uint32, ok bool) {
	sys, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return time.Time{}, 0, 0, 0, 0, false
	}
	return time.Unix(int64(sys.Ctim.Sec), int64(sys.Ctim.Nsec)), uint32(sys.Dev), uint32(sys.Ino), sys.Uid, sys.Gid, true
}
