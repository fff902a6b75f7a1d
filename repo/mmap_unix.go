//go:build unix

package repo

import (
	"os"
	"syscall"
)

// mapping is a file mapped read-only into memory (a pack or its index).
type mapping struct {
	data []byte
}

// mapFile maps the whole of a file. An empty file maps to no bytes.
func mapFile(name string) (*mapping, error) {
	f, err := openFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() == 0 {
		return &mapping{}, nil
	}
	if int64(int(fi.Size())) != fi.Size() {
		return nil, &os.PathError{Op: "mmap", Path: name, Err: syscall.EFBIG}
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, &os.PathError{Op: "mmap", Path: name, Err: err}
	}
	return &mapping{data: data}, nil
}

// close unmaps the file; nothing may read its bytes afterwards.
func (m *mapping) close() {
	if m.data != nil {
		_ = syscall.Munmap(m.data)
		m.data = nil
	}
}
