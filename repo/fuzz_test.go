package repo

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/ckpt-dev/ckpt/internal/fssnap"
)

// fuzzModes are the modes a fuzzed tree entry may have: git's own, and malformed ones.
var fuzzModes = []string{"100644", "100755", "120000", "160000", "40000", "100664", "0100644", "644", ""}

// fuzzTree decodes bytes into trees written to a repository: byte 0 says whether entries
// are put in git's order (bit 0); then each entry is a selector byte (mode), a length byte
// and that many bytes of name. A subtree (mode 40000, up to depth 3) is followed by a count
// byte and that many entries of its own. Blobs hold their name, a symlink's blob a path out.
type fuzzTree struct {
	data   []byte
	ow     *rawWriter
	sorted bool
	blobs  map[Hash][]byte
}

func (d *fuzzTree) next() (byte, bool) {
	if len(d.data) == 0 {
		return 0, false
	}
	b := d.data[0]
	d.data = d.data[1:]
	return b, true
}

func (d *fuzzTree) tree(t *testing.T, depth, count int) Hash {
	var entries []rawEntry
	for i := 0; count < 0 || i < count; i++ {
		sel, ok := d.next()
		if !ok {
			break
		}
		n, _ := d.next()
		n %= 40
		name := string(d.data[:min(int(n), len(d.data))])
		d.data = d.data[min(int(n), len(d.data)):]
		e := rawEntry{mode: fuzzModes[int(sel)%len(fuzzModes)], name: name}
		switch {
		case e.mode == "40000" && depth < 3:
			c, _ := d.next()
			e.hash = d.tree(t, depth+1, int(c%4))
		case e.mode == "40000" || e.mode == "160000":
			e.hash = plumbing.NewHash("3333333333333333333333333333333333333333")
		default:
			content := []byte("bytes of " + name + "\n")
			if e.mode == "120000" {
				content = []byte("../../../../outside")
			}
			h, err := d.ow.write(plumbing.BlobObject, content)
			if err != nil {
				t.Fatal(err)
			}
			d.blobs[h] = content
			e.hash = h
		}
		entries = append(entries, e)
	}
	if d.sorted {
		sort.SliceStable(entries, func(i, j int) bool { return compareEntries(entries[i], entries[j]) < 0 })
	}
	h, err := d.ow.write(plumbing.TreeObject, rawTree(entries...))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// fuzzSeed encodes a tree for FuzzCheckout: the sorted flag, then mode indexes (int),
// names (string) and subtree entry counts (byte).
func fuzzSeed(sorted bool, entries ...any) []byte {
	var b bytes.Buffer
	if sorted {
		b.WriteByte(1)
	} else {
		b.WriteByte(0)
	}
	for _, x := range entries {
		switch x := x.(type) {
		case int: // a mode selector
			b.WriteByte(byte(x))
		case string: // a name
			b.WriteByte(byte(len(x)))
			b.WriteString(x)
		case byte: // a subtree's entry count
			b.WriteByte(x)
		}
	}
	return b.Bytes()
}

// FuzzCheckout feeds random trees (names, modes, nesting, order) to the checkout and clone
// paths: whatever the tree, nothing is written outside the work tree and the repository's
// own refs, index and logs; a tree that is taken holds only session files, checked out as
// they are. The seed corpus is testdata/fuzz/FuzzCheckout.
func FuzzCheckout(f *testing.F) {
	f.Add(fuzzSeed(true, 0, "checkpoint.md", 0, "notes.md", 1, "checkpoint-db.md"))
	f.Add(fuzzSeed(true, 0, "../../../PWNED", 0, "checkpoint.md"))
	f.Add(fuzzSeed(true, 4, ".git", byte(1), 0, "config"))
	f.Add(fuzzSeed(true, 2, "checkpoint.md"))
	f.Add(fuzzSeed(false, 0, "notes.md", 0, "checkpoint.md"))
	f.Add(fuzzSeed(true, 0, ".g\u200cit", 0, "MEMORY.md"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || len(data) > 4096 {
			return
		}
		// The store sits deeper than any name of 39 bytes can climb ("../" 13 times), so
		// that whatever escapes still lands under root, where the snapshots look.
		root := t.TempDir()
		st := NewStore(filepath.Join(root, strings.Repeat("d/", 14), "home"), testStore(t).Opts)
		r, head, err := st.Init("s", InitOptions{Files: map[string][]byte{"checkpoint.md": []byte("# C\n"), "notes.md": []byte("# N\n")}, Message: "init\n"})
		if err != nil {
			t.Fatal(err)
		}
		d := &fuzzTree{data: data[1:], ow: newRawWriter(r), sorted: data[0]&1 == 1, blobs: map[Hash][]byte{}}
		tree := d.tree(t, 0, -1)
		c, err := d.ow.write(plumbing.CommitObject, testCommit(t, tree, []Hash{head}, st.Opts.Author, st.Opts.Now(), "fuzz\n"))
		if err != nil {
			t.Fatal(err)
		}
		r.Reset()
		home := strings.Repeat("d/", 14) + "home"

		// What a checkout may touch: the session's files and its git bookkeeping; a clone
		// also makes the repository around them.
		gitFiles := regexp.MustCompile(`^\.git(/(HEAD|config|description|index|info(/exclude)?|objects(/info|/pack(/pack-[0-9a-f]{40}\.(pack|idx))?)?|refs(/heads(/main)?|/tags)?|logs(/.*)?))?$`)
		mayWrite := func(session string) func(string) bool {
			dir := home + "/sessions/" + session
			return func(p string) bool {
				if p == home+"/sessions" || p == dir {
					return session == "m"
				}
				rel, ok := strings.CutPrefix(p, dir+"/")
				return ok && (ValidFileName(rel) == nil || gitFiles.MatchString(rel))
			}
		}
		verify := func(what, session string, before fssnap.Snapshot, err error) {
			t.Helper()
			after := fssnap.Take(t, root)
			if err != nil {
				if d := fssnap.Diff(before, after, fssnap.Under(home+"/state")); len(d) > 0 {
					t.Fatalf("%s refused (%v) but wrote:\n%s", what, err, strings.Join(d, "\n"))
				}
				return
			}
			if d := fssnap.Diff(before, after, mayWrite(session)); len(d) > 0 {
				t.Fatalf("%s wrote outside the work tree:\n%s", what, strings.Join(d, "\n"))
			}
			// Taken: the tree holds only session files, and they are on disk as they are.
			entries, perr := parseTree(mustObject(t, r, tree))
			if perr != nil {
				t.Fatalf("%s took a malformed tree: %v", what, perr)
			}
			for _, e := range entries {
				if ValidFileName(e.name) != nil || (e.mode != "100644" && e.mode != "100755") {
					t.Fatalf("%s took entry %q mode %s", what, e.name, e.mode)
				}
				got, err := os.ReadFile(filepath.Join(st.Home, "sessions", session, e.name))
				if err != nil || !bytes.Equal(got, d.blobs[e.hash]) {
					t.Fatalf("%s: %s is not the tree's bytes (%v)", what, e.name, err)
				}
			}
		}
		before := fssnap.Take(t, root)
		verify("checkout", "s", before, r.Checkout(head, c, nil))
		before = fssnap.Take(t, root)
		_, err = st.Materialize("m", r, c, nil)
		verify("materialize", "m", before, err)
	})
}

func mustObject(t *testing.T, r *Repo, h Hash) []byte {
	t.Helper()
	_, data, err := r.reader().rawObject(h)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
