package hooks

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"

	"github.com/ckpt-dev/ckpt/repo"
)

// DirSignature sums up the versioned files of a tracked directory from stat data alone:
// their names, sizes and modification times. A file added, changed or deleted changes it;
// a directory that is gone has the signature of an empty one.
func DirSignature(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	var lines []string
	for _, e := range entries {
		if repo.ValidFileName(e.Name()) != nil || !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // gone meanwhile
		}
		lines = append(lines, fmt.Sprintf("%s %d %d", e.Name(), fi.Size(), fi.ModTime().UnixNano()))
	}
	sort.Strings(lines)
	h := sha256.New()
	for _, l := range lines {
		h.Write([]byte(l + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil)[:12]), nil
}
