package history

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
)

// Commit is one commit of a session as history shows it.
type Commit struct {
	Session string    `json:"session"`
	Hash    string    `json:"commit"`
	Short   string    `json:"short"`
	Time    time.Time `json:"time"`
	// Trigger is what the commit took: manual, write, sparse, full, restore, merge,
	// autosave, redact. A sync is sparse or full whatever ran it; older histories' hook and
	// cron triggers are read as the sync they were (checkpoint.ReadTaken).
	Trigger string `json:"trigger"`
	// Cause is what ran a sync: cron, hook:pre-commit, claude:PreCompact, or hook in older
	// histories that did not say which; "" for a command run by hand.
	Cause string `json:"cause,omitempty"`
	// Full is true for a full checkpoint: a full sync, whatever triggered it (a hook before
	// a compaction, cron, the CLI). Compactions are full checkpoints.
	Full    bool   `json:"full"`
	Subject string `json:"subject"`
	Message string `json:"message"`
	// Sections are the checkpoint sections the commit changed (Ckpt-Sections).
	Sections []string `json:"sections"`
	// Files are the files the commit changed against its first parent; only filled when
	// the query asks for them (LogQuery.Files).
	Files   []string `json:"files,omitempty"`
	Parents []string `json:"parents"`
	// Trailers are the other trailers of the message (Ckpt-Checkpoint, Ckpt-Redacted, …).
	Trailers map[string]string `json:"trailers,omitempty"`
	// Ref is rejected/N for a rejected write.
	Ref string `json:"ref,omitempty"`
}

// Provenance of the commit, for a section ("" for none).
func (c Commit) Provenance(section string) Provenance {
	return Provenance{Session: c.Session, Commit: c.Hash, Time: c.Time, Section: section}
}

// knownTrailers are the trailers Commit has fields for.
var knownTrailers = map[string]bool{
	strings.ToLower(checkpoint.KeySession): true, strings.ToLower(checkpoint.KeyTrigger): true,
	strings.ToLower(checkpoint.KeySections): true, strings.ToLower(checkpoint.KeyMode): true,
	strings.ToLower(checkpoint.KeyCause): true,
}

func toCommit(session string, ci repo.CommitInfo) Commit {
	c := Commit{
		Session:  session,
		Hash:     ci.Hash.String(),
		Short:    repo.ShortHash(ci.Hash),
		Time:     ci.When,
		Subject:  ci.Subject,
		Message:  ci.Message,
		Sections: []string{},
		Parents:  make([]string, 0, len(ci.Parents)),
	}
	tk := checkpoint.ReadTaken(ci.Trailer)
	c.Trigger, c.Cause, c.Full = string(tk.Trigger), tk.Cause, tk.Full()
	for _, s := range strings.Split(ci.Trailer(checkpoint.KeySections), ",") {
		if s = strings.TrimSpace(s); s != "" {
			c.Sections = append(c.Sections, s)
		}
	}
	for _, p := range ci.Parents {
		c.Parents = append(c.Parents, p.String())
	}
	for _, t := range ci.Trailers {
		if !knownTrailers[strings.ToLower(t.Key)] {
			if c.Trailers == nil {
				c.Trailers = map[string]string{}
			}
			c.Trailers[t.Key] = t.Value
		}
	}
	return c
}

// LogQuery says which commits to list.
type LogQuery struct {
	// Section keeps the commits that changed it (an id, a number or the heading text).
	Section string
	// Trigger keeps the commits it names (checkpoint.Taken.Matches): a trigger ("full"
	// keeps every full checkpoint, "sparse" every sparse one), a cause ("claude:PreCompact"),
	// "hook" for whatever a git or agent hook ran, "cron" for a tick's.
	Trigger string
	// Since and Until keep commits in [Since, Until]; zero means unbounded.
	Since, Until time.Time
	// Cursor continues a listing where the previous page ended (LogPage.Next).
	Cursor string
	// Limit is the page size; 0 lists everything.
	Limit int
	// Scan bounds the commits one call reads while filtering (0: no bound). A page cut short
	// by it still has a Next cursor, so a rare section never makes one call walk 10,000
	// commits.
	Scan int
	// Files fills Commit.Files (two tree reads per listed commit).
	Files bool
	// Rejected lists the rejected writes (refs/ckpt/rejected/N), newest first, instead of
	// the main history; Section, Trigger and the times do not apply.
	Rejected bool
}

// LogPage is one page of a listing: commits newest first, and the cursor of the next page
// ("" at the end of history).
type LogPage struct {
	Session string   `json:"session"`
	Commits []Commit `json:"commits"`
	Next    string   `json:"next,omitempty"`
	// Scanned is how many commits this call read.
	Scanned int `json:"scanned"`
}

// Log lists a session's commits, newest first, following first parents.
func (h *Reader) Log(session string, q LogQuery) (LogPage, error) {
	page := LogPage{Session: session, Commits: []Commit{}}
	if q.Limit < 0 || q.Scan < 0 {
		return page, fmt.Errorf("%w: limit and scan must be 0 or more", ErrBadQuery)
	}
	err := h.with(session, func(src *source) error {
		if q.Rejected {
			return h.rejectedLog(src, q, &page)
		}
		var want sections.ID
		if q.Section != "" {
			t, err := h.template(src)
			if err != nil {
				return err
			}
			if want, err = sectionOf(t, q.Section); err != nil {
				return err
			}
		}
		start, err := startOf(src, q.Cursor)
		if err != nil {
			return err
		}
		var werr error
		err = src.walk(start, func(ci repo.CommitInfo) bool {
			if q.Limit > 0 && len(page.Commits) == q.Limit || q.Scan > 0 && page.Scanned == q.Scan {
				page.Next = ci.Hash.String()
				return false
			}
			page.Scanned++
			c := toCommit(src.id(), ci)
			if !matches(c, q, want) {
				return true
			}
			if q.Files {
				if c.Files, werr = changedFiles(src, ci); werr != nil {
					return false
				}
			}
			page.Commits = append(page.Commits, c)
			return true
		})
		if werr != nil {
			return werr
		}
		return err
	})
	return page, err
}

// startOf is where a listing starts: HEAD, or the commit a cursor names.
func startOf(src *source, cursor string) (repo.Hash, error) {
	if cursor == "" {
		h, err := src.head()
		if err == nil && h == repo.ZeroHash {
			err = fmt.Errorf("%s: %w: no commit yet", src.id(), repo.ErrBadRevision)
		}
		return h, err
	}
	if !fullHash().MatchString(cursor) {
		return repo.ZeroHash, fmt.Errorf("%w %q: pass the next cursor of the previous page", ErrBadCursor, cursor)
	}
	h, err := src.resolve(cursor)
	if err != nil {
		return repo.ZeroHash, fmt.Errorf("%w %q: no such commit in %s", ErrBadCursor, cursor, src.id())
	}
	return h, nil
}

var fullHash = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{40}$`) })

func matches(c Commit, q LogQuery, want sections.ID) bool {
	switch {
	case want != "" && !slices.Contains(c.Sections, string(want)):
		return false
	case q.Trigger != "" && !(checkpoint.Taken{Trigger: checkpoint.Trigger(c.Trigger), Cause: c.Cause}).Matches(q.Trigger):
		return false
	case !q.Since.IsZero() && c.Time.Before(q.Since), !q.Until.IsZero() && c.Time.After(q.Until):
		return false
	}
	return true
}

// changedFiles compares a commit's tree with its first parent's: blob ids only.
func changedFiles(src *source, ci repo.CommitInfo) ([]string, error) {
	cur, err := src.files(ci.Hash)
	if err != nil {
		return nil, err
	}
	var old map[string]repo.Hash
	if len(ci.Parents) > 0 {
		if old, err = src.files(ci.Parents[0]); err != nil {
			return nil, err
		}
	}
	out := []string{}
	for name, bh := range cur {
		if old[name] != bh {
			out = append(out, name)
		}
	}
	for name := range old {
		if _, ok := cur[name]; !ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out, nil
}

func (h *Reader) rejectedLog(src *source, q LogQuery, page *LogPage) error {
	refs, err := src.rejected()
	if err != nil {
		return err
	}
	skip := q.Cursor != ""
	for _, ref := range refs {
		name := strings.TrimPrefix(ref.Name, "refs/ckpt/")
		if skip {
			skip = name != q.Cursor
			if skip {
				continue
			}
		}
		if q.Limit > 0 && len(page.Commits) == q.Limit {
			page.Next = name
			return nil
		}
		ci, err := src.commit(ref.Hash)
		if err != nil {
			return err
		}
		c := toCommit(src.id(), ci)
		c.Ref = name
		if q.Files {
			if c.Files, err = changedFiles(src, ci); err != nil {
				return err
			}
		}
		page.Scanned++
		page.Commits = append(page.Commits, c)
	}
	if skip {
		return fmt.Errorf("%w %q: no such rejected write in %s", ErrBadCursor, q.Cursor, src.id())
	}
	return nil
}

// BeforeCompact is the revision that names the last commit before the newest full
// checkpoint: what the checkpoint said before the last compaction.
const BeforeCompact = "before-compact"

// Resolve turns a revision into a commit: everything repo takes (a full or abbreviated
// hash, HEAD, HEAD~N, HEAD^, main, rejected/N), before-compact, or a time (RFC 3339, or
// 2026-04-01T22:00Z as ckpt writes times, or a date), which names the newest commit at or
// before it on the first-parent history.
func (h *Reader) Resolve(session, rev string) (Commit, error) {
	var c Commit
	err := h.with(session, func(src *source) error {
		hash, err := resolve(src, rev)
		if err != nil {
			return err
		}
		ci, err := src.commit(hash)
		if err != nil {
			return err
		}
		c = toCommit(src.id(), ci)
		return nil
	})
	return c, err
}

// timeLayouts are the times a revision may be, tried in order.
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00", "2006-01-02T15:04", "2006-01-02"}

// ParseTime reads a time as a revision may be one: RFC 3339, 2026-04-01T22:00Z as ckpt
// writes times, 2026-04-01T22:00 (UTC), or a date (its last instant).
func ParseTime(s string) (time.Time, error) {
	if t, ok := parseTime(strings.TrimSpace(s)); ok {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%w: time %q: want RFC 3339 or 2026-04-01T22:00Z or 2026-04-01", ErrBadQuery, s)
}

func parseTime(rev string) (time.Time, bool) {
	// Hashes are hex; every time layout has a '-' in it.
	if !strings.Contains(rev, "-") || strings.HasPrefix(rev, "-") {
		return time.Time{}, false
	}
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, rev); err == nil {
			if l == "2006-01-02" {
				t = t.Add(24*time.Hour - time.Nanosecond) // a date is its whole day
			}
			return t, true
		}
	}
	return time.Time{}, false
}

// ancestry matches a revision that ends in first-parent steps: HEAD~3, before-compact^,
// 1a2b3c4~2^.
var ancestry = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.*?)((?:~[0-9]{0,9}|\^1?)+)$`) })

func resolve(src *source, rev string) (repo.Hash, error) {
	rev = strings.TrimSpace(rev)
	if len(rev) > 200 {
		return repo.ZeroHash, fmt.Errorf("%q: %w: too long", rev[:40]+"…", repo.ErrBadRevision)
	}
	switch m := ancestry().FindStringSubmatch(rev); {
	case rev == BeforeCompact:
		return beforeCompact(src)
	case m != nil && m[1] != "":
		// Walk the steps here, through the commits already read, instead of having go-git
		// decode every commit of HEAD~5000 again.
		h, err := resolve(src, m[1])
		if err != nil {
			return h, err
		}
		return firstParents(src, rev, h, steps(m[2]))
	}
	if t, ok := parseTime(rev); ok {
		return atTime(src, rev, t)
	}
	return src.resolve(rev)
}

// steps counts the first-parent steps of "~3^~": 5.
func steps(s string) int {
	n := 0
	for len(s) > 0 {
		op := s[0]
		s = s[1:]
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		k := 1
		if i > 0 {
			fmt.Sscan(s[:i], &k)
		}
		if op == '^' {
			k = 1 // ^ and ^1 are the first parent
		}
		n += k
		s = s[i:]
	}
	return n
}

func firstParents(src *source, rev string, h repo.Hash, n int) (repo.Hash, error) {
	for ; n > 0; n-- {
		c, err := src.commit(h)
		if err != nil {
			return repo.ZeroHash, err
		}
		if len(c.Parents) == 0 {
			return repo.ZeroHash, fmt.Errorf("%q: %w: history is shorter than that", rev, repo.ErrBadRevision)
		}
		h = c.Parents[0]
	}
	return h, nil
}

func beforeCompact(src *source) (repo.Hash, error) {
	head, err := startOf(src, "")
	if err != nil {
		return repo.ZeroHash, err
	}
	found := repo.ZeroHash
	var full bool
	err = src.walk(head, func(ci repo.CommitInfo) bool {
		if full = toCommit("", ci).Full; !full {
			return true
		}
		if len(ci.Parents) > 0 {
			found = ci.Parents[0]
		}
		return false
	})
	if err != nil {
		return repo.ZeroHash, err
	}
	if !full {
		return repo.ZeroHash, fmt.Errorf("%s: %w: no full checkpoint in %s's history yet", BeforeCompact, repo.ErrBadRevision, src.id())
	}
	if found == repo.ZeroHash {
		return repo.ZeroHash, fmt.Errorf("%s: %w: the newest full checkpoint of %s is its first commit", BeforeCompact, repo.ErrBadRevision, src.id())
	}
	return found, nil
}

func atTime(src *source, rev string, t time.Time) (repo.Hash, error) {
	head, err := startOf(src, "")
	if err != nil {
		return repo.ZeroHash, err
	}
	found := repo.ZeroHash
	err = src.walk(head, func(ci repo.CommitInfo) bool {
		if !ci.When.After(t) {
			found = ci.Hash
			return false
		}
		return true
	})
	if err != nil {
		return repo.ZeroHash, err
	}
	if found == repo.ZeroHash {
		return repo.ZeroHash, fmt.Errorf("%s: %w: %s has no commit that old", rev, repo.ErrBadRevision, src.id())
	}
	return found, nil
}

// isNotFound reports a missing file or section: absence, not failure.
func isNotFound(err error) bool { return errors.Is(err, repo.ErrNoFile) }
