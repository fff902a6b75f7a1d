// Package fssnap records every path under a directory with what it holds, so that a test
// can prove a command wrote nothing where it must not: not in a work tree, not in a
// repository, not anywhere else under the test's root.
package fssnap

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Snapshot maps each path under the root (slash-separated, relative) to what it is: a
// directory, a symbolic link and its target, or a file, its permission bits and the hash
// of its bytes.
type Snapshot map[string]string

// Take walks root. The root itself need not exist (an empty snapshot).
func Take(t testing.TB, root string) Snapshot {
	t.Helper()
	s := Snapshot{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root && os.IsNotExist(err) {
				return filepath.SkipDir
			}
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			s[rel] = "link " + target
		case d.IsDir():
			s[rel] = "dir"
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			s[rel] = fmt.Sprintf("file %v %s", fi.Mode().Perm(), hex.EncodeToString(sum[:8]))
		default:
			s[rel] = "special " + d.Type().String()
		}
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot %s: %v", root, err)
	}
	return s
}

// Diff lists the paths that differ, sorted: "+ p" created, "- p" removed, "~ p" changed.
// Paths for which allowed returns true are left out.
func Diff(before, after Snapshot, allowed func(path string) bool) []string {
	var out []string
	for p, a := range after {
		if allowed != nil && allowed(p) {
			continue
		}
		if b, ok := before[p]; !ok {
			out = append(out, "+ "+p)
		} else if a != b {
			out = append(out, "~ "+p)
		}
	}
	for p := range before {
		if allowed != nil && allowed(p) {
			continue
		}
		if _, ok := after[p]; !ok {
			out = append(out, "- "+p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][2:] < out[j][2:] })
	return out
}

// Under returns an allowed function for Diff that lets paths at or below any of dirs change.
func Under(dirs ...string) func(string) bool {
	return func(p string) bool {
		for _, d := range dirs {
			if p == d || strings.HasPrefix(p, d+"/") {
				return true
			}
		}
		return false
	}
}
