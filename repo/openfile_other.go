//go:build !unix

package repo

import (
	"io/fs"
	"os"
)

// openFile is os.OpenFile (see openfile_unix.go).
func openFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}

// rename is os.Rename (see openfile_unix.go).
func rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// readSmall is os.ReadFile (see openfile_unix.go).
func readSmall(name string) ([]byte, error) { return os.ReadFile(name) }

// appendSmall appends data to a file (see openfile_unix.go).
func appendSmall(name string, data []byte, perm fs.FileMode, create bool) error {
	flags := os.O_WRONLY | os.O_APPEND
	if create {
		flags |= os.O_CREATE
	}
	f, err := os.OpenFile(name, flags, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// readObjectFile is os.ReadFile (see openfile_unix.go).
func readObjectFile(name string) ([]byte, error) { return os.ReadFile(name) }
