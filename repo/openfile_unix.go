//go:build unix

package repo

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// openFile is os.OpenFile without the poller. On Linux os.OpenFile offers every file it
// opens to the network poller, which refuses a regular file: five system calls (fcntl
// four times, epoll_ctl) around each open. ckpt opens a dozen files per commit, all
// regular, so it opens them with one open(2); os.NewFile checks the blocking mode once.
func openFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	for {
		fd, err := syscall.Open(name, flag|syscall.O_CLOEXEC, uint32(perm.Perm()))
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		return os.NewFile(uintptr(fd), name), nil
	}
}

// rename is os.Rename without its check that newpath is not a directory (an lstat): ckpt
// renames only over files, and rename(2) itself refuses to replace a directory with a file.
func rename(oldpath, newpath string) error {
	for {
		err := syscall.Rename(oldpath, newpath)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
		}
		return nil
	}
}

// readSmall reads a small file (a ref) with bare system calls: open, read to the end, close,
// without the fcntl and fstat an *os.File costs.
func readSmall(name string) ([]byte, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer syscall.Close(fd)
	return readFD(fd, name, 128)
}

// readFD reads fd to its end into a buffer that starts at size bytes.
func readFD(fd int, name string, size int) ([]byte, error) {
	b := make([]byte, 0, size)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if n == 0 {
			return b, nil
		}
		b = b[:len(b)+n]
	}
}

// appendSmall appends data to a file (a reflog), with bare system calls; it creates the
// file with perm when create is set, else a missing file is fs.ErrNotExist. A short write
// is an error.
func appendSmall(name string, data []byte, perm fs.FileMode, create bool) error {
	flags := syscall.O_WRONLY | syscall.O_APPEND | syscall.O_CLOEXEC
	if create {
		flags |= syscall.O_CREAT
	}
	var fd int
	var err error
	for {
		fd, err = syscall.Open(name, flags, uint32(perm.Perm()))
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		return &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer syscall.Close(fd)
	for {
		n, err := syscall.Write(fd, data)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err == nil && n != len(data) {
			err = syscall.EIO
		}
		if err != nil {
			return &fs.PathError{Op: "write", Path: name, Err: err}
		}
		return nil
	}
}

// readObjectFile reads a loose object's file whole with bare system calls, without
// updating its access time where the system allows (O_NOATIME needs the file's owner).
func readObjectFile(name string) ([]byte, error) {
	var fd int
	var err error
	for flags := syscall.O_RDONLY | syscall.O_CLOEXEC | oNoatime; ; {
		fd, err = syscall.Open(name, flags, 0)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if errors.Is(err, syscall.EPERM) && flags&oNoatime != 0 {
			flags &^= oNoatime
			continue
		}
		break
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer syscall.Close(fd)
	return readFD(fd, name, 2048)
}
