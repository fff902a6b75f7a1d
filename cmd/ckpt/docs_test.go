package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestArchitectureListsEveryPackage: docs/architecture.md's table of who imports whom names
// every package of the module, and no package that is not there.
func TestArchitectureListsEveryPackage(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, l := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(l, "| `") {
			continue
		}
		first := strings.Split(l, "|")[1]
		for _, f := range strings.Split(first, "`") {
			if f = strings.TrimSpace(f); f != "" && f != "," {
				listed[f] = true
			}
		}
	}
	pkgs := map[string]bool{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			rel, _ := filepath.Rel(root, filepath.Dir(p))
			pkgs[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := range pkgs {
		if !listed[p] {
			t.Errorf("package %s is not in docs/architecture.md's table", p)
		}
	}
	for p := range listed {
		if !pkgs[p] {
			t.Errorf("docs/architecture.md lists %s, which is not a package", p)
		}
	}
}
