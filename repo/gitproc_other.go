//go:build !linux

package repo

import "syscall"

// gitProcAttr: only Linux can tie a child's life to its parent's; elsewhere a git child of
// a killed ckpt runs to its end, and the next fetch clears what it leaves (clearStaleLocks).
func gitProcAttr() *syscall.SysProcAttr { return nil }
