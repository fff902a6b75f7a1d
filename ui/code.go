package ui

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/hooks"
	"github.com/ckpt-dev/ckpt/repo"
)

// Code commits point at checkpoints, not the other way round: the git hooks add
// `Ckpt-Checkpoint: <session>@<short hash>` to each code commit made in a work tree bound
// to a session. To show the code commit next to its checkpoint, the UI reads the trailers
// of the newest commits of the session's bound work tree with the git CLI (as the hooks
// themselves call git), a bounded read kept until the work tree's HEAD moves.

// codeScan is how many code commits are read; older checkpoints show no code link.
const codeScan = 2000

// codeTTL is how long one read of a work tree's log is used when it has no HEAD reflog to
// tell that it changed.
const codeTTL = 5 * time.Second

type codeLink struct {
	Hash, Short, Subject, Repo string
}

type codeCache struct {
	mu      sync.Mutex
	entries map[string]codeEntry // by work tree
}

type codeEntry struct {
	at    time.Time
	stamp string // the work tree's HEAD reflog as of the read ("" when it has none)
	// links maps session, then short checkpoint hash, to the code commits naming it.
	links map[string]map[string][]codeLink
}

// codeLinks returns the code commits that name each checkpoint of session id, by short
// checkpoint hash. A session bound to no work tree, or a work tree git cannot read, has
// none.
func (s *Server) codeLinks(id repo.SessionID) map[string][]codeLink {
	st, err := hooks.LoadSessions(s.opts.Store.Home, []string{string(id)})
	if err != nil {
		return nil
	}
	ss := st.Sessions[string(id)]
	if ss == nil || ss.Bound == "" || !filepath.IsAbs(ss.Bound) {
		return nil
	}
	s.code.mu.Lock()
	defer s.code.mu.Unlock()
	if s.code.entries == nil {
		s.code.entries = map[string]codeEntry{}
	}
	// A new code commit appends to the HEAD reflog: while it is unchanged the read holds.
	stamp := reflogStamp(ss.Bound)
	e, ok := s.code.entries[ss.Bound]
	if !ok || stamp != e.stamp || stamp == "" && time.Since(e.at) > codeTTL {
		e = codeEntry{at: time.Now(), stamp: stamp, links: readCodeLinks(ss.Bound)}
		s.code.entries[ss.Bound] = e
	}
	return e.links[string(id)]
}

// reflogStamp identifies the state of the HEAD reflog of the repository at dir, "" when
// there is none to look at (a linked work tree, reflogs off).
func reflogStamp(dir string) string {
	fi, err := os.Stat(filepath.Join(dir, ".git", "logs", "HEAD"))
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d %d", fi.Size(), fi.ModTime().UnixNano())
}

// readCodeLinks reads the Ckpt-Checkpoint trailers of the newest codeScan commits of the
// repository at dir.
func readCodeLinks(dir string) map[string]map[string][]codeLink {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "-C", dir, "log", "--no-color", "-n", strconv.Itoa(codeScan),
		"--format=%H%x1f%s%x1f%(trailers:key="+checkpoint.KeyCheckpoint+",valueonly,separator=%x1d)%x1e", "--")
	cmd.Env = append(cmd.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
	out, err := cmd.Output()
	if err != nil {
		return nil
	}
	links := map[string]map[string][]codeLink{}
	for _, rec := range bytes.Split(out, []byte{0x1e}) {
		f := strings.Split(strings.TrimSpace(string(rec)), "\x1f")
		if len(f) != 3 || f[2] == "" {
			continue
		}
		for _, v := range strings.Split(strings.TrimSpace(f[2]), "\x1d") {
			session, short, ok := strings.Cut(strings.TrimSpace(v), "@")
			if !ok || len(short) < 7 {
				continue
			}
			short = short[:7]
			if links[session] == nil {
				links[session] = map[string][]codeLink{}
			}
			links[session][short] = append(links[session][short], codeLink{Hash: f[0], Short: f[0][:min(7, len(f[0]))], Subject: f[1], Repo: dir})
		}
	}
	return links
}
