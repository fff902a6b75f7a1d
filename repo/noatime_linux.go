package repo

import "syscall"

// oNoatime opens an object without updating its access time: a push reads thousands of
// loose objects once, and each first read would otherwise write its inode back.
const oNoatime = syscall.O_NOATIME
