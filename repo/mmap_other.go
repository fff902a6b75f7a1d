//go:build !unix

package repo

import "os"

// mapping is a file read into memory (a pack or its index): on systems without mmap the
// reader holds the bytes.
type mapping struct {
	data []byte
}

func mapFile(name string) (*mapping, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return &mapping{data: b}, nil
}

func (m *mapping) close() { m.data = nil }
