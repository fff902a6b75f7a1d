package repo

import "syscall"

// gitProcAttr has the kernel kill a git child when the ckpt that started it dies: a pull
// killed during its fetch must not leave git running on, racing the next pull for the
// transport repository's refs.
func gitProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
