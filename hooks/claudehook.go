package hooks

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/templates"
)

// ClaudePayload is what Claude Code sends a hook on standard input (the fields ckpt uses;
// every event has session_id, transcript_path, cwd and hook_event_name).
type ClaudePayload struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	Source         string `json:"source"`  // SessionStart: startup, resume, clear, compact
	Trigger        string `json:"trigger"` // PreCompact: manual, auto
	Reason         string `json:"reason"`  // SessionEnd: clear, logout, prompt_input_exit, other
}

// ParseClaudePayload reads a hook's JSON.
func ParseClaudePayload(b []byte) (ClaudePayload, error) {
	var p ClaudePayload
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("hook input: not JSON: %w", err)
	}
	if p.SessionID == "" {
		return p, errors.New("hook input: no session_id")
	}
	if strings.ContainsAny(p.SessionID+p.TranscriptPath, "\n\r\x00") {
		return p, errors.New("hook input: session_id or transcript_path holds a line break")
	}
	return p, nil
}

// ClaudeSessionID turns a Claude Code session id into a ckpt session id.
func ClaudeSessionID(s string) repo.SessionID {
	if id, err := repo.ParseSessionID(s); err == nil {
		return id
	}
	if id := sanitizeID(s); id != "" {
		return id
	}
	return "claude"
}

// sanitizeID makes s a session id: other characters become "-", and what git would refuse
// in a branch name goes; "" when nothing is left.
func sanitizeID(s string) repo.SessionID {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '-'
		}
	}
	out := strings.TrimLeft(string(b), "._-")
	for strings.Contains(out, "..") {
		out = strings.ReplaceAll(out, "..", ".")
	}
	if len(out) > 128 {
		out = out[:128]
	}
	out = strings.TrimRight(out, ".")
	if strings.HasSuffix(strings.ToLower(out), ".lock") {
		out = out[:len(out)-len(".lock")]
	}
	id, err := repo.ParseSessionID(out)
	if err != nil {
		return ""
	}
	return id
}

// ProjectSessionID is the name of a project's session: the name of its directory, and in a
// store that holds many projects (keyed: the user store) a key of its path too, so that two
// checkouts called "app" keep two sessions.
func ProjectSessionID(project string, keyed bool) repo.SessionID {
	base := string(sanitizeID(filepath.Base(project)))
	if base == "" {
		base = "project"
	}
	if !keyed {
		return repo.SessionID(base)
	}
	sum := sha256.Sum256([]byte(project))
	if len(base) > 100 {
		base = strings.TrimRight(base[:100], "._-")
	}
	return repo.SessionID(base + "-" + hex.EncodeToString(sum[:4]))
}

// ClaudeOptions say which session a Claude Code hook writes to, and how to make it.
type ClaudeOptions struct {
	// Session is the session named by -s, $CKPT_SESSION or [claude] session; "" for the
	// project's.
	Session string
	// PerConversation gives each conversation a session named after its session_id.
	PerConversation bool
	// Template is the template of a session the hook creates.
	Template string
	// Project is the project: the main work tree of the payload's cwd, else the cwd.
	Project string
	// Keyed says the store holds many projects (the user store).
	Keyed bool
	// UserHome is shown as ~ in the transcript path a commit records.
	UserHome string
}

// ClaudeSession returns the session a Claude Code conversation writes to and whether it
// exists. By default that is the project's one session: the one session bound to the
// project (ckpt init -s NAME in it, say), else, when several are, the one named after the
// project or else the one that checkpointed last; with none bound, the project's name (with
// -2, -3, … when a session of that name is archived, unbound or tracks a directory).
// Archived sessions and tracked memory directories are never picked.
func (rn *Runner) ClaudeSession(conversation string, o ClaudeOptions) (repo.SessionID, bool, error) {
	switch {
	case o.Session != "":
		id, err := repo.ParseSessionID(o.Session)
		if err != nil {
			return "", false, err
		}
		return id, rn.exists(id), nil
	case o.PerConversation:
		id := ClaudeSessionID(conversation)
		return id, rn.exists(id), nil
	}
	bound, err := BoundToProject(rn.home(), o.Project)
	if err != nil {
		return "", false, err
	}
	st, err := LoadSessions(rn.home(), bound)
	if err != nil {
		return "", false, err
	}
	name := ProjectSessionID(o.Project, o.Keyed)
	var pick string
	for _, id := range bound {
		s := st.Session(id)
		if s.Archived || s.Free || !rn.exists(repo.SessionID(id)) {
			continue
		}
		switch {
		case pick == "":
			pick = id
		case repo.SessionID(id) == name:
			pick = id
		case repo.SessionID(pick) != name && s.LastCheckpoint.After(st.Session(pick).LastCheckpoint):
			pick = id
		}
	}
	if pick != "" {
		return repo.SessionID(pick), true, nil
	}
	id := name
	for n := 2; rn.exists(id); n++ {
		id = repo.SessionID(fmt.Sprintf("%s-%d", name, n))
	}
	return id, false, nil
}

func (rn *Runner) exists(id repo.SessionID) bool {
	_, err := os.Stat(filepath.Join(rn.CP.Store.SessionDir(id), ".git", "config"))
	return err == nil
}

// EnsureClaudeSession returns the session a conversation writes to, creating it (bound to
// the project) when it does not exist yet.
func (rn *Runner) EnsureClaudeSession(conversation string, o ClaudeOptions) (r *repo.Repo, created bool, err error) {
	id, exists, err := rn.ClaudeSession(conversation, o)
	if err != nil {
		return nil, false, err
	}
	if exists {
		r, err = rn.CP.Store.Open(id)
		return r, false, err
	}
	tmpl := o.Template
	if tmpl == "" {
		tmpl = templates.Default
	}
	extra := map[string]string{"agent": "claude-code"}
	if o.Project != "" {
		extra["repo"] = o.Project
	}
	r, _, err = rn.CP.InitSession(id, tmpl, "", extra)
	if errors.Is(err, repo.ErrExists) { // another hook made it meanwhile
		r, err = rn.CP.Store.Open(id)
		return r, false, err
	}
	if err != nil {
		return nil, false, err
	}
	return r, true, rn.Bind(r, o.Project, "")
}

// ClaudeResult is what an agent hook did, and, for SessionStart, the context to give back.
type ClaudeResult struct {
	Session string
	Created bool
	// Outcomes are the checkpoints taken: the session's, then the tracked memory
	// directories bound to the project.
	Outcomes []Outcome
	// Context is the current checkpoint, for SessionStart after a compaction or a resume.
	Context string
}

// Claude handles one Claude Code hook event: PreCompact takes a full checkpoint, Stop and
// SessionEnd a sparse one (creating the session on first use), each commit naming the
// conversation and its transcript; the memory directories tracked for the project are
// committed too. SessionStart creates nothing: after a compaction or a resume it returns
// the session's checkpoint, when there is one, as context.
func (rn *Runner) Claude(event string, p ClaudePayload, o ClaudeOptions) (ClaudeResult, error) {
	var action Action
	switch event {
	case "PreCompact":
		action = ActionFull
	case "Stop", "SessionEnd":
		action = ActionSparse
	case "SessionStart":
		return rn.claudeStart(p, o)
	default:
		return ClaudeResult{}, fmt.Errorf("unknown Claude Code hook event %q (want PreCompact, Stop, SessionStart or SessionEnd)", event)
	}
	r, created, err := rn.EnsureClaudeSession(p.SessionID, o)
	if err != nil {
		return ClaudeResult{}, err
	}
	res := ClaudeResult{Session: r.ID, Created: created}
	rn.CP.Conversation = conversationValue(p, o.UserHome)
	if err := rn.Bind(r, o.Project, p.TranscriptPath); err != nil {
		return res, err
	}
	ids := []string{r.ID}
	tracked, err := rn.trackedFor(o.Project, r.ID)
	if err != nil {
		return res, err
	}
	ids = append(ids, tracked...)
	st, err := LoadSessions(rn.home(), ids)
	if err != nil {
		return res, err
	}
	updated := map[string]*SessionState{}
	for i, id := range ids {
		s := st.Session(id)
		act, reason := action, event+" hook"
		if s.Free {
			act = ActionSparse
			if sig, err := DirSignature(s.WorkDir); err == nil && sig == s.DirSig {
				continue
			}
		}
		if i == 0 && act == ActionFull && s.Breaker.Open {
			act, reason = ActionSparse, event+" hook; breaker open, full sync skipped: "+s.Breaker.Reason
		}
		res.Outcomes = append(res.Outcomes, rn.checkpoint(id, s, act, reason, checkpoint.ClaudeCause(event)))
		updated[id] = s
	}
	return res, rn.saveSessions(updated)
}

// claudeStart is SessionStart: nothing at startup or after /clear; after a compaction or
// a resume, the checkpoint of the session the conversation writes to, if it has one.
func (rn *Runner) claudeStart(p ClaudePayload, o ClaudeOptions) (ClaudeResult, error) {
	if p.Source != "compact" && p.Source != "resume" {
		return ClaudeResult{}, nil
	}
	id, exists, err := rn.ClaudeSession(p.SessionID, o)
	if err != nil || !exists {
		return ClaudeResult{}, err
	}
	r, err := rn.CP.Store.Open(id)
	if err != nil {
		return ClaudeResult{}, err
	}
	b, err := os.ReadFile(r.WorkPath(checkpoint.File))
	if errors.Is(err, fs.ErrNotExist) {
		return ClaudeResult{Session: r.ID}, nil
	}
	if err != nil {
		return ClaudeResult{}, err
	}
	return ClaudeResult{Session: r.ID, Context: string(b)}, nil
}

// trackedFor lists the tracked memory directories (free sessions) bound to the project,
// but not skip, and not archived ones.
func (rn *Runner) trackedFor(project, skip string) ([]string, error) {
	if project == "" {
		return nil, nil
	}
	ids, err := BoundToProject(rn.home(), project)
	if err != nil {
		return nil, err
	}
	st, err := LoadSessions(rn.home(), ids)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, id := range ids {
		if s := st.Session(id); id != skip && s.Free && !s.Archived {
			out = append(out, id)
		}
	}
	return out, nil
}

// conversationValue is the Ckpt-Conversation trailer's value: the conversation id and the
// transcript, the user's home shown as ~.
func conversationValue(p ClaudePayload, userHome string) string {
	t := p.TranscriptPath
	if userHome != "" {
		if rest, ok := strings.CutPrefix(t, filepath.Clean(userHome)+string(filepath.Separator)); ok {
			t = "~/" + filepath.ToSlash(rest)
		}
	}
	return strings.TrimSpace(p.SessionID + " " + t)
}
