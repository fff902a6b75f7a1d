package hooks

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// MergeDriverCommand is what git runs for a file marked merge=ckpt: base, ours, theirs and
// the path, per git's merge-driver contract.
const MergeDriverCommand = "ckpt merge-driver %O %A %B %P"

// mergeAttributes are the .gitattributes lines that send checkpoint files to ckpt's driver.
var mergeAttributes = []string{
	"# ckpt: merge checkpoint files section by section (ckpt hooks install --merge-driver)",
	"checkpoint.md merge=ckpt",
	"checkpoint-*.md merge=ckpt",
	"MEMORY.md merge=ckpt",
	"knowledge-graph.md merge=ckpt",
}

// ReadMergeInput reads one of the files git hands the merge driver (%O, %A, %B): a regular
// file only, so that a path naming a FIFO or a device cannot hang the merge.
func ReadMergeInput(path string) ([]byte, error) {
	if err := regularFile(path); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

// WriteMergeResult writes the merge over ours (%A), the file git handed the driver: only
// over a regular file, never through a symbolic link, so the driver writes nowhere else.
func WriteMergeResult(ours string, data []byte) error {
	if err := regularFile(ours); err != nil {
		return err
	}
	return os.WriteFile(ours, data, 0o644)
}

func regularFile(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file (%s)", path, fi.Mode().Type())
	}
	return nil
}

// MergeDriverStatus says whether the driver is registered in a repository.
type MergeDriverStatus struct {
	Attributes string `json:"attributes"` // the .gitattributes file
	Attributed bool   `json:"attributed"` // it has ckpt's lines
	Configured bool   `json:"configured"` // merge.ckpt.driver is set in the repository's config
	Driver     string `json:"driver,omitempty"`
}

// workTreeTop is the top of the git work tree holding dir.
func workTreeTop(dir string) (string, error) {
	return runGit(dir, "rev-parse", "--show-toplevel")
}

// InstallMergeDriver registers `ckpt merge-driver` for checkpoint files in the repository at
// repoDir: the .gitattributes lines at the top of the work tree (versioned, so every clone
// gets them) and merge.ckpt.* in the repository's own config (which .gitattributes alone
// cannot provide, and which each clone must set). Installing twice changes nothing.
func InstallMergeDriver(repoDir string) (MergeDriverStatus, bool, error) {
	top, err := workTreeTop(repoDir)
	if err != nil {
		return MergeDriverStatus{}, false, err
	}
	path := filepath.Join(top, ".gitattributes")
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return MergeDriverStatus{}, false, err
	}
	changed := false
	lines := string(old)
	var add []string
	for _, l := range mergeAttributes {
		if !hasLine(lines, l) {
			add = append(add, l)
		}
	}
	if len(add) > 0 {
		if lines != "" && !strings.HasSuffix(lines, "\n") {
			lines += "\n"
		}
		lines += strings.Join(add, "\n") + "\n"
		if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
			return MergeDriverStatus{}, false, err
		}
		changed = true
	}
	st, err := StatusMergeDriver(repoDir)
	if err != nil {
		return st, changed, err
	}
	if st.Driver != MergeDriverCommand {
		if _, err := runGit(top, "config", "--local", "merge.ckpt.name", "ckpt section-aware merge"); err != nil {
			return st, changed, err
		}
		if _, err := runGit(top, "config", "--local", "merge.ckpt.driver", MergeDriverCommand); err != nil {
			return st, changed, err
		}
		changed = true
	}
	st, err = StatusMergeDriver(repoDir)
	return st, changed, err
}

// UninstallMergeDriver removes ckpt's .gitattributes lines (the file goes when nothing else
// is left in it) and the merge.ckpt section of the config.
func UninstallMergeDriver(repoDir string) (MergeDriverStatus, bool, error) {
	top, err := workTreeTop(repoDir)
	if err != nil {
		return MergeDriverStatus{}, false, err
	}
	changed := false
	path := filepath.Join(top, ".gitattributes")
	if old, err := os.ReadFile(path); err == nil {
		var keep []string
		for _, l := range strings.SplitAfter(string(old), "\n") {
			if l == "" {
				continue
			}
			if isMergeAttribute(strings.TrimRight(l, "\r\n")) {
				changed = true
				continue
			}
			keep = append(keep, l)
		}
		if changed {
			if len(keep) == 0 {
				err = os.Remove(path)
			} else {
				err = os.WriteFile(path, []byte(strings.Join(keep, "")), 0o644)
			}
			if err != nil {
				return MergeDriverStatus{}, false, err
			}
		}
	}
	if st, _ := StatusMergeDriver(repoDir); st.Configured {
		if _, err := runGit(top, "config", "--local", "--remove-section", "merge.ckpt"); err != nil {
			return st, changed, err
		}
		changed = true
	}
	st, err := StatusMergeDriver(repoDir)
	return st, changed, err
}

// StatusMergeDriver says whether the driver is registered.
func StatusMergeDriver(repoDir string) (MergeDriverStatus, error) {
	top, err := workTreeTop(repoDir)
	if err != nil {
		return MergeDriverStatus{}, err
	}
	st := MergeDriverStatus{Attributes: filepath.Join(top, ".gitattributes")}
	if b, err := os.ReadFile(st.Attributes); err == nil {
		st.Attributed = hasLine(string(b), mergeAttributes[1])
	}
	if d, err := runGit(top, "config", "--local", "--get", "merge.ckpt.driver"); err == nil && d != "" {
		st.Configured, st.Driver = true, d
	}
	return st, nil
}

func hasLine(text, line string) bool {
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimRight(l, "\r") == line {
			return true
		}
	}
	return false
}

func isMergeAttribute(l string) bool {
	for _, a := range mergeAttributes {
		if l == a {
			return true
		}
	}
	return false
}
