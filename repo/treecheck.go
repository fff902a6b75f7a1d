package repo

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
)

// Every tree and commit that ckpt turns into work-tree files passes through this file: the
// history a pull or clone brings in (CheckHistory, Copier.Copy) and every tree read for a
// checkout, restore, merge or show (gitReader.tree). It refuses what git itself refuses
// (fsck's hasDot/hasDotdot/hasDotgit, verify_path with core.protectNTFS and
// core.protectHFS, malformed trees and commits), then what a session cannot hold: anything
// but a regular file with one of the names ValidFileName accepts.

// ErrRefusedTree is wrapped by every TreeError: bytes that must not reach a work tree.
var ErrRefusedTree = errors.New("refused tree")

// TreeError says which commit, tree entry and rule refused a tree.
type TreeError struct {
	Commit   Hash   // the commit holding the tree (ZeroHash when not known)
	Object   Hash   // the malformed tree (or commit), when the refusal is not one entry's
	Entry    string // the refused entry's name
	HasEntry bool
	Problem  string
}

func (e *TreeError) Error() string {
	var b strings.Builder
	if e.Commit != ZeroHash {
		b.WriteString("commit " + short(e.Commit) + ": ")
	}
	switch {
	case e.HasEntry:
		fmt.Fprintf(&b, "tree entry %s: ", quoteName(e.Entry))
	case e.Object != ZeroHash && e.Object != e.Commit:
		b.WriteString("tree " + short(e.Object) + ": ")
	}
	b.WriteString(e.Problem)
	return b.String()
}

func (e *TreeError) Unwrap() error { return ErrRefusedTree }

// quoteName quotes a name for a one-line message, as strconv.Quote would, except that
// printable non-ASCII stays as it is; control characters, bytes that are not UTF-8 and the
// invisible HFS-ignorable code points are escaped, so the user sees what the entry really is.
func quoteName(s string) string {
	var b strings.Builder
	more := ""
	if len(s) > 80 {
		s, more = s[:80], "…"
	}
	b.WriteByte('"')
	for i, w := 0, 0; i < len(s); i += w {
		r, width := utf8.DecodeRuneInString(s[i:])
		w = width
		switch {
		case r == utf8.RuneError && width == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || hfsIgnorable(r):
			if r < 0x80 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String() + more
}

// Problems, worded for the user.
const (
	probEscapes   = "path escapes the work tree"
	probGitDir    = "names the git directory (.git)"
	probAbsolute  = "absolute path"
	probSlash     = "name holds a slash: a path, not a file name"
	probBackslash = "name holds a backslash: a path on Windows"
	probEmpty     = "empty name"
	probNUL       = "name holds a NUL byte"
	probDot       = "names the work tree itself (.)"
	probSubtree   = "a subtree where a file is expected"
	probSymlink   = "a symlink where a file is expected"
	probGitlink   = "a gitlink (submodule) where a file is expected"
	probNotFile   = "not a file a session holds (want checkpoint.md, notes.md, checkpoint-<topic>.md, MEMORY.md or knowledge-graph.md)"
	probUnsorted  = "tree entries out of order (malformed tree)"
	probDuplicate = "duplicate tree entry (malformed tree)"
)

// checkEntryName returns why git would refuse name as a tree entry, or "": a path that
// leaves the work tree or names its git directory in any spelling a file system may treat
// as .git (case, NTFS short names and trailing dots or spaces, HFS+ ignorable code points).
// It does not apply the session's own file-name rule (ValidFileName).
func checkEntryName(name string) string {
	switch {
	case name == "":
		return probEmpty
	case strings.IndexByte(name, 0) >= 0:
		return probNUL
	case name[0] == '/' || name[0] == '\\' || hasDriveLetter(name):
		return probAbsolute
	case name == "..":
		return probEscapes
	case name == ".":
		return probDot
	}
	if strings.ContainsAny(name, `/\`) {
		parts := strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == '\\' })
		for _, p := range parts {
			if p == ".." {
				return probEscapes
			}
		}
		for _, p := range parts {
			if isDotGit(p) {
				return probGitDir
			}
		}
		if strings.IndexByte(name, '/') >= 0 {
			return probSlash
		}
		return probBackslash
	}
	if isDotGit(name) {
		return probGitDir
	}
	return ""
}

// hasDriveLetter reports a Windows drive prefix such as C: (absolute or drive-relative).
func hasDriveLetter(name string) bool {
	return len(name) >= 2 && name[1] == ':' && (name[0]|0x20 >= 'a' && name[0]|0x20 <= 'z')
}

// isDotGit reports whether a path component means .git to some file system: .git in any
// case; on NTFS also with trailing dots or spaces, an alternate data stream (.git::$DATA)
// or as the 8.3 short name git~1; on HFS+ with ignorable code points anywhere in it.
func isDotGit(name string) bool {
	lower := strings.ToLower(name)
	for _, prefix := range []string{".git", "git~1"} {
		if rest, ok := strings.CutPrefix(lower, prefix); ok {
			if rest == "" || strings.Trim(rest, ". ") == "" || strings.HasPrefix(strings.TrimLeft(rest, ". "), ":") {
				return true
			}
		}
	}
	return isHFSDotGit(name)
}

// isHFSDotGit compares name with .git as HFS+ does: ASCII case folded, the code points
// git's utf8.c lists as ignorable skipped.
func isHFSDotGit(name string) bool {
	if !utf8.ValidString(name) {
		return false
	}
	want := ".git"
	i := 0
	for _, r := range name {
		if hfsIgnorable(r) {
			continue
		}
		if r >= 0x80 || i == len(want) {
			return false
		}
		if r >= 'A' && r <= 'Z' {
			r += 'a' - 'A'
		}
		if byte(r) != want[i] {
			return false
		}
		i++
	}
	return i == len(want)
}

// hfsIgnorable are the code points HFS+ drops when it compares names (git's
// next_hfs_char): zero-width joiners, direction marks, deprecated format characters, BOM.
func hfsIgnorable(r rune) bool {
	return (r >= 0x200c && r <= 0x200f) || (r >= 0x202a && r <= 0x202e) ||
		(r >= 0x206a && r <= 0x206f) || r == 0xfeff
}

// checkEntryMode returns why a tree entry with this raw mode cannot be a session's file.
func checkEntryMode(mode string) string {
	switch mode {
	case "100644", "100755":
		return ""
	case "40000":
		return probSubtree
	case "120000":
		return probSymlink
	case "160000":
		return probGitlink
	}
	if mode == "" || strings.Trim(mode, "01234567") != "" {
		return fmt.Sprintf("malformed mode %q (malformed tree)", mode)
	}
	if strings.HasPrefix(mode, "0") {
		return fmt.Sprintf("zero-padded mode %s (malformed tree)", mode)
	}
	return fmt.Sprintf("file mode %s: want 100644 or 100755", mode)
}

// rawEntry is one entry of a tree as stored.
type rawEntry struct {
	mode string
	name string
	hash Hash
}

// parseTree splits a tree object into entries, refusing a malformed one (truncated, a mode
// that is not octal, a missing name) as git fsck does.
func parseTree(data []byte) ([]rawEntry, *TreeError) {
	var out []rawEntry
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		nul := bytes.IndexByte(data, 0)
		if sp < 0 || nul < 0 || nul < sp || len(data) < nul+1+len(ZeroHash) {
			return nil, &TreeError{Problem: "truncated tree entry (malformed tree)"}
		}
		e := rawEntry{mode: string(data[:sp]), name: string(data[sp+1 : nul])}
		copy(e.hash[:], data[nul+1:nul+1+len(ZeroHash)])
		data = data[nul+1+len(ZeroHash):]
		out = append(out, e)
	}
	return out, nil
}

// checkTree applies every rule to a tree's entries: git's own (names, order, duplicates)
// and the session's (regular files with a session file name). entries are the parsed tree.
func checkTree(entries []rawEntry) *TreeError {
	refuse := func(e rawEntry, p string) *TreeError {
		return &TreeError{Entry: e.name, HasEntry: true, Problem: p}
	}
	// Names first: a hostile name is what the user needs to hear about, whatever else is wrong.
	for _, e := range entries {
		if p := checkEntryName(e.name); p != "" {
			return refuse(e, p)
		}
	}
	for _, e := range entries {
		if p := checkEntryMode(e.mode); p != "" {
			return refuse(e, p)
		}
		if e.hash == ZeroHash {
			return refuse(e, "null object id (malformed tree)")
		}
	}
	seen := make(map[string]bool, len(entries))
	for i, e := range entries {
		if seen[e.name] {
			return refuse(e, probDuplicate)
		}
		seen[e.name] = true
		if i > 0 && compareEntries(entries[i-1], e) > 0 {
			return refuse(e, probUnsorted)
		}
	}
	for _, e := range entries {
		if ValidFileName(e.name) != nil {
			return refuse(e, probNotFile)
		}
	}
	return nil
}

// compareEntries orders tree entries as git does: by name, a subtree's name read as if it
// ended in a slash.
func compareEntries(a, b rawEntry) int {
	an, bn := a.name, b.name
	if a.mode == "40000" {
		an += "/"
	}
	if b.mode == "40000" {
		bn += "/"
	}
	return strings.Compare(an, bn)
}

// rawObject reads an object's type and bytes.
func (g *gitReader) rawObject(h Hash) (plumbing.ObjectType, []byte, error) {
	o, err := g.storage.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return 0, nil, err
	}
	rd, err := o.Reader()
	if err != nil {
		return 0, nil, err
	}
	defer rd.Close()
	data, err := io.ReadAll(rd)
	return o.Type(), data, err
}

// tree reads tree h and checks it; every tree ckpt turns into files is read here.
func (g *gitReader) tree(h Hash) ([]rawEntry, error) {
	typ, data, err := g.rawObject(h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return nil, &TreeError{Problem: "tree " + short(h) + " is missing"}
	}
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", short(h), err)
	}
	if typ != plumbing.TreeObject {
		return nil, &TreeError{Problem: fmt.Sprintf("%s is a %s, not a tree", short(h), typ)}
	}
	entries, terr := parseTree(data)
	if terr == nil {
		terr = checkTree(entries)
	}
	if terr != nil {
		terr.Object = h
		return nil, terr
	}
	return entries, nil
}

// parsedCommit is what a walk of history needs of a commit.
type parsedCommit struct {
	hash    Hash
	tree    Hash
	parents []Hash
}

// parseCommit reads the header of a commit object as git fsck does: tree, parents, author
// and committer in that order, well-formed; a header without NUL bytes, ended by a blank line.
func parseCommit(h Hash, data []byte) (parsedCommit, *TreeError) {
	c := parsedCommit{hash: h}
	bad := func(p string) (parsedCommit, *TreeError) {
		return c, &TreeError{Commit: h, Object: h, Problem: p + " (malformed commit)"}
	}
	header := data
	if i := bytes.Index(data, []byte("\n\n")); i >= 0 {
		header = data[:i+1]
	} else if len(data) == 0 || data[len(data)-1] != '\n' {
		return bad("unterminated header")
	}
	if bytes.IndexByte(header, 0) >= 0 {
		return bad("NUL byte in the header")
	}
	line := func(key string) (string, bool) {
		if !bytes.HasPrefix(header, []byte(key+" ")) {
			return "", false
		}
		end := bytes.IndexByte(header, '\n')
		v := string(header[len(key)+1 : end])
		header = header[end+1:]
		return v, true
	}
	v, ok := line("tree")
	if !ok {
		return bad("no tree line")
	}
	if !isHex40(v) {
		return bad("bad tree id")
	}
	c.tree = plumbing.NewHash(v)
	for {
		v, ok := line("parent")
		if !ok {
			break
		}
		if !isHex40(v) {
			return bad("bad parent id")
		}
		c.parents = append(c.parents, plumbing.NewHash(v))
	}
	for _, key := range []string{"author", "committer"} {
		v, ok := line(key)
		if !ok {
			return bad("no " + key + " line")
		}
		if p := checkIdent(v); p != "" {
			return bad(key + ": " + p)
		}
	}
	return c, nil
}

func isHex40(s string) bool {
	if len(s) != 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// checkIdent checks `Name <email> 1234567890 +0100` as git fsck's fsck_ident does.
func checkIdent(s string) string {
	lt := strings.IndexByte(s, '<')
	switch {
	case lt < 0:
		return "no email"
	case lt == 0:
		return "no name before the email"
	case s[lt-1] != ' ':
		return "no space before the email"
	}
	gt := strings.IndexByte(s[lt:], '>')
	if gt < 0 || strings.ContainsAny(s[lt+1:lt+gt], "<>") || strings.ContainsAny(s[:lt], ">") {
		return "bad email"
	}
	rest, ok := strings.CutPrefix(s[lt+gt+1:], " ")
	if !ok {
		return "no space before the date"
	}
	date, tz, ok := strings.Cut(rest, " ")
	if !ok || date == "" || strings.Trim(date, "0123456789") != "" || (len(date) > 1 && date[0] == '0') {
		return "bad date"
	}
	if len(tz) != 5 || (tz[0] != '+' && tz[0] != '-') || strings.Trim(tz[1:], "0123456789") != "" {
		return "bad time zone"
	}
	return ""
}

// commitObject reads and checks commit h. child, when not zero, is the commit that names h
// as a parent, for the message.
func (g *gitReader) commitObject(h, child Hash) (parsedCommit, error) {
	typ, data, err := g.rawObject(h)
	who := h
	if child != ZeroHash {
		who = child
	}
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		if child != ZeroHash {
			return parsedCommit{}, &TreeError{Commit: who, Problem: "parent " + short(h) + " is missing"}
		}
		return parsedCommit{}, fmt.Errorf("commit %s: %w", short(h), ErrBadRevision)
	}
	if err != nil {
		return parsedCommit{}, fmt.Errorf("read commit %s: %w", short(h), err)
	}
	if typ != plumbing.CommitObject {
		return parsedCommit{}, &TreeError{Commit: who, Object: h, Problem: fmt.Sprintf("%s is a %s, not a commit", short(h), typ)}
	}
	c, terr := parseCommit(h, data)
	if terr != nil {
		return c, terr
	}
	return c, nil
}

// newHistory lists the commits of head's history that known lacks, parents before
// children, each read and checked: the walk both CheckHistory and Copier.Copy make.
func (g *gitReader) newHistory(head Hash, known func(Hash) bool) ([]parsedCommit, error) {
	var order []parsedCommit
	seen := map[Hash]bool{}
	var visit func(h, child Hash) error
	visit = func(h, child Hash) error {
		// Iterative along first parents, where history is long; recursive for merges.
		var stack []parsedCommit
		for h != ZeroHash && !seen[h] && !known(h) {
			seen[h] = true
			c, err := g.commitObject(h, child)
			if err != nil {
				return err
			}
			stack = append(stack, c)
			for _, p := range c.parents[min(1, len(c.parents)):] {
				if err := visit(p, h); err != nil {
					return err
				}
			}
			h, child = ZeroHash, h
			if len(c.parents) > 0 {
				h = c.parents[0]
			}
		}
		for i := len(stack) - 1; i >= 0; i-- {
			order = append(order, stack[i])
		}
		return nil
	}
	if err := visit(head, ZeroHash); err != nil {
		return nil, err
	}
	return order, nil
}

// checkedTree reads and checks the tree of commit c, naming c in a refusal.
func (g *gitReader) checkedTree(c parsedCommit) ([]rawEntry, error) {
	entries, err := g.tree(c.tree)
	var terr *TreeError
	if errors.As(err, &terr) && terr.Commit == ZeroHash {
		terr.Commit = c.hash
	}
	return entries, err
}

// CheckHistory checks every commit of head's history in src that dst does not hold yet (all
// of it when dst is nil), the tree of each and the type of every object a tree names,
// before any of it is copied: what a pull calls first, so that a refusal leaves every
// session as it was. Copier.Copy checks the same again as it copies.
func CheckHistory(src *Repo, head Hash, dst *Repo) error {
	g := src.reader()
	known := func(Hash) bool { return false }
	if dst != nil {
		known = dst.has
	}
	commits, err := g.newHistory(head, known)
	if err != nil {
		return err
	}
	kinds := map[Hash]plumbing.ObjectType{} // what each object checked so far is
	for _, c := range commits {
		kinds[c.hash] = plumbing.CommitObject
	}
	for _, c := range commits {
		if kinds[c.tree] == plumbing.TreeObject {
			continue
		}
		entries, err := g.checkedTree(c)
		if err != nil {
			return err
		}
		kinds[c.tree] = plumbing.TreeObject
		for _, e := range entries {
			refuse := func(p string) error {
				return &TreeError{Commit: c.hash, Entry: e.name, HasEntry: true, Problem: p}
			}
			if k, ok := kinds[e.hash]; ok && k != plumbing.BlobObject {
				return refuse(fmt.Sprintf("%s is a %s, not a blob", short(e.hash), k))
			}
			if kinds[e.hash] == plumbing.BlobObject || known(e.hash) {
				continue
			}
			kinds[e.hash] = plumbing.BlobObject
			o, err := g.storage.EncodedObject(plumbing.AnyObject, e.hash)
			switch {
			case errors.Is(err, plumbing.ErrObjectNotFound):
				return refuse("blob " + short(e.hash) + " is missing")
			case err != nil:
				return fmt.Errorf("read blob %s: %w", short(e.hash), err)
			case o.Type() != plumbing.BlobObject:
				return refuse(fmt.Sprintf("%s is a %s, not a blob", short(e.hash), o.Type()))
			}
		}
	}
	return nil
}

// fileBlob reads the blob of file name in commit h: an object there that is not a blob is
// refused as the tree that names it would be.
func (g *gitReader) fileBlob(h Hash, name string, bh Hash) ([]byte, error) {
	b, err := g.blob(bh)
	if err != nil {
		if typ, _, rerr := g.rawObject(bh); rerr == nil && typ != plumbing.BlobObject {
			return nil, &TreeError{Commit: h, Entry: name, HasEntry: true, Problem: fmt.Sprintf("%s is a %s, not a blob", short(bh), typ)}
		}
	}
	return b, err
}

// withCommit names commit h in a refusal that does not name its commit yet.
func withCommit(err error, h Hash) error {
	var terr *TreeError
	if errors.As(err, &terr) && terr.Commit == ZeroHash {
		terr.Commit = h
	}
	return err
}
