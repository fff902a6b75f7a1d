package modeltest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// repo is one git repository of the world: where git runs, and its git directory.
type repo struct {
	label  string // "a/session", "remote", …
	dir    string // for git -C
	gitDir string
}

// repos lists every repository that exists now: each home's session, knowledge and
// transport repositories, and the remote.
func (w *world) repos() []repo {
	var out []repo
	add := func(label, dir, gitDir string) {
		if _, err := os.Stat(gitDir); err == nil {
			out = append(out, repo{label, dir, gitDir})
		}
	}
	for _, h := range w.homes {
		add(h.name+"/session", h.session(), filepath.Join(h.session(), ".git"))
		add(h.name+"/knowledge", h.knowledge(), filepath.Join(h.knowledge(), ".git"))
		// The transport mirror is ckpt's own cache of what travels (it holds copies only). A
		// kill while ckpt creates it leaves a directory that git does not take for a
		// repository yet and that ckpt completes the next time it needs it; it is checked
		// once it is one (HEAD, objects/ and refs/, as git itself decides).
		t := filepath.Join(h.dir, "state", "transport.git")
		if isGitDir(t) {
			add(h.name+"/transport", t, t)
		}
	}
	if w.remote != "" {
		add("remote", w.remote, w.remote)
	}
	return out
}

// isGitDir is git's own test for a git directory: a HEAD that names a ref, objects/ and refs/.
func isGitDir(dir string) bool {
	head, err := os.ReadFile(filepath.Join(dir, "HEAD"))
	if err != nil || !strings.HasPrefix(string(head), "ref: refs/") || !strings.HasSuffix(string(head), "\n") {
		return false
	}
	for _, d := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(dir, d)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// fingerprint sums the names, sizes and times of every file of a git directory: when it
// is unchanged, so is what fsck and the blob scan would say.
func fingerprint(gitDir string) (string, error) {
	h := fnv.New128a()
	err := filepath.WalkDir(gitDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		fi, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00", p, fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	return fmt.Sprintf("%x", h.Sum(nil)), err
}

// fsck runs git fsck --full --strict on every repository that changed since its last
// clean fsck. Dangling objects are normal (a killed write leaves some); anything else
// git says is a failure.
func (w *world) fsck() error {
	for _, r := range w.repos() {
		fp, err := fingerprint(r.gitDir)
		if err != nil {
			return err
		}
		if w.fscked[r.label] == fp {
			continue
		}
		w.stats.add(func(s *stats) { s.fscks++ })
		out, err := w.gitCombined(r.dir, "fsck", "--full", "--strict", "--no-dangling", "--no-progress")
		if err != nil || strings.TrimSpace(dropNotices(out)) != "" {
			return fmt.Errorf("git fsck --full --strict in %s (%s): %v\n%s", r.label, r.dir, err, indent(out))
		}
		w.fscked[r.label] = fp
	}
	return nil
}

// dropNotices removes git's "notice:" lines (a bare remote's HEAD names an unborn
// branch: normal, since only refs/heads/sessions/* and knowledge are pushed).
func dropNotices(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "notice: ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func (w *world) gitCombined(dir string, args ...string) (string, error) {
	w.stats.add(func(s *stats) { s.gits++ })
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = w.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// workFiles reads every regular file of a home's session and knowledge work trees.
func (w *world) workFiles() (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, h := range w.homes {
		for _, d := range []struct{ label, dir string }{{h.name + ":", h.session()}, {h.name + ":knowledge/", h.knowledge()}} {
			ents, err := os.ReadDir(d.dir)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, err
			}
			for _, e := range ents {
				if !e.Type().IsRegular() {
					continue
				}
				b, err := os.ReadFile(filepath.Join(d.dir, e.Name()))
				if err != nil {
					return nil, err
				}
				files[d.label+e.Name()] = b
			}
		}
	}
	return files, nil
}

// history returns, per repository, the content of every blob that one of its refs
// reaches (refs/ckpt/rejected/* included; reflogs and MERGE_HEAD are not refs).
func (w *world) history() (map[string]string, error) {
	out := map[string]string{}
	for _, r := range w.repos() {
		fp, err := fingerprint(r.gitDir)
		if err != nil {
			return nil, err
		}
		sc, ok := w.scan[r.label]
		if !ok || sc.fingerprint != fp {
			w.stats.add(func(s *stats) { s.scans++ })
			list, err := w.git(r.dir, nil, "rev-list", "--objects", "--all", "--no-object-names", "--filter=object:type=blob")
			if err != nil {
				return nil, err
			}
			sc = scanned{fingerprint: fp, blobs: strings.Fields(list)}
			if err := w.readBlobs(r.dir, sc.blobs); err != nil {
				return nil, err
			}
			w.scan[r.label] = sc
		}
		var b strings.Builder
		for _, id := range sc.blobs {
			b.WriteString(w.blobs[id])
			b.WriteByte(0)
		}
		out[r.label] = b.String()
	}
	return out, nil
}

// readBlobs reads the blobs not read before with one git cat-file --batch.
func (w *world) readBlobs(dir string, ids []string) error {
	var want []string
	for _, id := range ids {
		if _, ok := w.blobs[id]; !ok {
			want = append(want, id)
		}
	}
	if len(want) == 0 {
		return nil
	}
	w.stats.add(func(s *stats) { s.gits++ })
	cmd := exec.Command("git", "-C", dir, "cat-file", "--batch")
	cmd.Env = w.env
	cmd.Stdin = strings.NewReader(strings.Join(want, "\n") + "\n")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	raw, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("git cat-file --batch in %s: %v\n%s", dir, err, errb.String())
	}
	br := bufio.NewReader(bytes.NewReader(raw))
	for range want {
		hdr, err := br.ReadString('\n')
		if err != nil {
			return fmt.Errorf("git cat-file --batch in %s: %v", dir, err)
		}
		f := strings.Fields(hdr)
		if len(f) != 3 {
			return fmt.Errorf("git cat-file --batch in %s: %q", dir, hdr)
		}
		n, err := strconv.Atoi(f[2])
		if err != nil {
			return err
		}
		body := make([]byte, n+1)
		if _, err := io.ReadFull(br, body); err != nil {
			return err
		}
		w.blobs[f[0]] = string(body[:n])
	}
	return nil
}

// checkTokens is the invariant: every token is in a work tree or in history. A token that
// only a killed write's stdin held may be gone; it is counted, not failed.
func (w *world) checkTokens() error {
	files, err := w.workFiles()
	if err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var hist map[string]string
	var histNames []string
	var missing []*token
	for _, tk := range w.tokens {
		if tk.seen == "gone" {
			continue
		}
		where := ""
		for _, n := range names {
			if bytes.Contains(files[n], []byte(tk.s)) {
				where = "on disk in " + n
				break
			}
		}
		if where == "" {
			if hist == nil {
				if hist, err = w.history(); err != nil {
					return err
				}
				for n := range hist {
					histNames = append(histNames, n)
				}
				sort.Strings(histNames)
			}
			for _, n := range histNames {
				if strings.Contains(hist[n], tk.s) {
					where = "in the history of " + n
					break
				}
			}
		}
		switch {
		case where != "":
			tk.seen = where
		case tk.mayVanish:
			tk.seen = "gone"
			w.stats.add(func(s *stats) { s.vanished++ })
		default:
			missing = append(missing, tk)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d string(s) the agent or harness wrote are in no work tree and in no blob any ref reaches:", len(missing))
	for _, tk := range missing {
		fmt.Fprintf(&b, "\n  %q\n    written at step %d in home %s by %s\n    last seen %s", tk.s, tk.step, tk.home, tk.what, tk.seenText())
	}
	return errors.New(b.String())
}

func (tk *token) seenText() string {
	if tk.seen == "" {
		return "never (it was written during this step)"
	}
	return "after the step before: " + tk.seen
}
