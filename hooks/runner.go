package hooks

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/internal/failpoint"
	"github.com/ckpt-dev/ckpt/internal/trailer"
	"github.com/ckpt-dev/ckpt/repo"
	ckptsync "github.com/ckpt-dev/ckpt/sync"
	"github.com/ckpt-dev/ckpt/templates"
)

// Runner runs the checkpoints that triggers decide: git hooks, agent hooks and cron ticks.
// Every checkpoint it runs feeds the session's circuit breaker and leaves a receipt.
type Runner struct {
	CP   *checkpoint.Service
	Sync *ckptsync.Service
	// Now is the clock of receipts and state.
	Now func() time.Time
}

// NewRunner returns a Runner that syncs with sy and commits through cp.
func NewRunner(cp *checkpoint.Service, sy *ckptsync.Service) *Runner {
	return &Runner{CP: cp, Sync: sy, Now: cp.Store.Opts.Now}
}

func (rn *Runner) home() string { return rn.CP.Store.Home }

// Outcome is what happened to one session.
type Outcome struct {
	Session string    `json:"session"`
	Action  Action    `json:"action"`
	Reason  string    `json:"reason"`
	Result  string    `json:"result"` // ok, nothing, error, busy, rejected, skipped
	Commit  string    `json:"commit,omitempty"`
	Error   string    `json:"error,omitempty"`
	Tripped bool      `json:"tripped,omitempty"`
	Time    time.Time `json:"time"`
	// Findings of a rejected checkpoint, for a strict pre-commit hook to show.
	Findings []string `json:"findings,omitempty"`
	// Warnings of a checkpoint taken: a transcript gone or not a regular file, lines skipped.
	Warnings []string `json:"warnings,omitempty"`
}

// Bind records a session in the trigger state: its work tree, the git work tree it belongs
// to, the transcript it follows, and a baseline observation so that the first tick does not
// take a needless full checkpoint.
func (rn *Runner) Bind(r *repo.Repo, bound, transcript string) error {
	return UpdateSessions(rn.home(), []string{r.ID}, func(st *State) error {
		s := st.Session(r.ID)
		s.WorkDir = r.WorkDir
		if bound != "" {
			s.Bound = bound
		}
		if transcript != "" {
			s.Transcript = transcript
		}
		s.Free = r.Template() == templates.Free
		if s.LastCheckpoint.IsZero() {
			obs, err := ObserveSession(s.WorkDir, s.Transcript)
			if err != nil {
				return err
			}
			s.Recorded(ActionFull, obs, rn.Now())
			if s.Free {
				if s.DirSig, err = DirSignature(s.WorkDir); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// checkpoint runs one sparse or full sync of a session, then updates its state: the
// breaker (a failure counts, a busy session does not), the observation, a receipt.
func (rn *Runner) checkpoint(id string, s *SessionState, action Action, reason string, cause string) Outcome {
	out := Outcome{Session: id, Action: action, Reason: reason, Time: rn.Now()}
	start := time.Now()
	commit, warnings, err := rn.sync(id, s, action, cause)
	out.Warnings = warnings
	threshold := rn.CP.Config.BreakerFailures()
	var rej *checkpoint.RejectedError
	switch {
	case errors.Is(err, repo.ErrBusy):
		out.Result, out.Error = "busy", err.Error()
	case errors.As(err, &rej):
		out.Result, out.Error = "rejected", err.Error()
		for _, f := range rej.Findings {
			out.Findings = append(out.Findings, fmt.Sprintf("%s:%d: %s: %s", checkpoint.File, f.Line, f.Severity, f.Message))
		}
		out.Tripped = s.Breaker.Record(false, err.Error(), threshold, out.Time)
	case err != nil:
		out.Result, out.Error = "error", err.Error()
		out.Tripped = s.Breaker.Record(false, err.Error(), threshold, out.Time)
	default:
		out.Result, out.Commit = "ok", commit
		if commit == "" {
			out.Result = "nothing"
		}
		s.Breaker.Record(true, "", threshold, out.Time)
		if obs, err := ObserveSession(s.WorkDir, s.Transcript); err == nil {
			s.Recorded(action, obs, out.Time)
		}
		if s.Free {
			s.DirSig, _ = DirSignature(s.WorkDir)
		}
	}
	rec := Receipt{Time: out.Time, Session: id, Action: string(action), Result: out.Result, Trigger: cause, Error: out.Error, DurationMS: float64(time.Since(start).Microseconds()) / 1000}
	_ = AppendReceipt(rn.home(), rec)
	if out.Tripped {
		_ = AppendReceipt(rn.home(), Receipt{Time: out.Time, Session: id, Action: "breaker-open", Result: "open", Trigger: cause, Error: s.Breaker.Reason})
	}
	return out
}

// sync runs the checkpoint and returns the commit it made ("" for none) and its warnings.
// The remembered transcript is the agent's file: gone, or a device, a FIFO or a directory,
// it costs the checkpoint its delta (a warning), never the checkpoint, so Stop hooks and
// ticks keep committing and the breaker does not count it.
func (rn *Runner) sync(id string, s *SessionState, action Action, cause string) (string, []string, error) {
	if err := failpoint.Check("hook-checkpoint"); err != nil {
		return "", nil, err
	}
	sid, err := repo.ParseSessionID(id)
	if err != nil {
		return "", nil, err
	}
	r, err := rn.CP.Store.Open(sid)
	if err != nil {
		return "", nil, err
	}
	if s.WorkDir == "" {
		s.WorkDir = r.WorkDir
	}
	if r.Template() == templates.Free { // a memory directory: its files as they are
		s.Free = true
		res, err := rn.CP.CommitDisk(r, checkpoint.CommitOptions{Trigger: checkpoint.TriggerSparse, Cause: cause})
		if err != nil || !res.Changed {
			return "", nil, err
		}
		return res.Commit.String(), nil, nil
	}
	mode := ckptsync.Sparse
	if action == ActionFull {
		mode = ckptsync.Full
	}
	rep, err := rn.Sync.Sync(r, ckptsync.Options{Mode: mode, Transcript: s.Transcript, Cause: cause})
	if err != nil {
		return "", nil, err
	}
	if !rep.Changed {
		return "", rep.Warnings, nil
	}
	return rep.Commit, rep.Warnings, nil
}

// Tick is one `ckpt cron tick`: for every session, decide (from stat calls only) and run
// the checkpoint it needs. ran is false when another tick holds the tick lock.
func (rn *Runner) Tick() (outs []Outcome, ran bool, err error) {
	unlock, ok, err := TryTickLock(rn.home())
	if err != nil || !ok {
		return nil, false, err
	}
	defer unlock()
	ids, err := rn.CP.Store.SessionIDs()
	if err != nil {
		return nil, true, err
	}
	cfg := rn.CP.Config
	st, err := LoadState(rn.home())
	if err != nil {
		return nil, true, err
	}
	// Checkpoints run without the state lock, which agent hooks need meanwhile; the
	// sessions' new state is written back in one update at the end.
	updated := map[string]*SessionState{}
	for _, id := range ids {
		s := st.Session(string(id))
		if s.Archived {
			continue
		}
		if s.WorkDir == "" {
			s.WorkDir = rn.CP.Store.SessionDir(id)
		}
		action, reason, err := decide(s, cfg.FullTokens(), cfg.FullEvery())
		if err != nil {
			outs = append(outs, Outcome{Session: string(id), Result: "error", Error: err.Error(), Time: rn.Now()})
			continue
		}
		if action == ActionNone {
			continue
		}
		outs = append(outs, rn.checkpoint(string(id), s, action, reason, checkpoint.CauseCron))
		updated[string(id)] = s
	}
	if err := recordTick(rn.home(), TickRecord{Time: rn.Now(), Sessions: len(ids), Checkpoints: len(outs)}); err != nil {
		return outs, true, err
	}
	return outs, true, rn.saveSessions(updated)
}

// saveSessions writes sessions' state back in one update.
func (rn *Runner) saveSessions(updated map[string]*SessionState) error {
	if len(updated) == 0 {
		return nil
	}
	ids := make([]string, 0, len(updated))
	for id := range updated {
		ids = append(ids, id)
	}
	return UpdateSessions(rn.home(), ids, func(st *State) error {
		for id, s := range updated {
			st.Sessions[id] = s
		}
		return nil
	})
}

// decide is Decide for a session from its files' stat data; a tracked memory directory
// takes a (sparse) commit of its files when their names, sizes or times changed.
func decide(s *SessionState, fullTokens, fullEvery int) (Action, string, error) {
	if s.Free {
		sig, err := DirSignature(s.WorkDir)
		if err != nil || sig == s.DirSig {
			return ActionNone, "nothing changed", err
		}
		return ActionSparse, "memory files changed", nil
	}
	obs, err := ObserveSession(s.WorkDir, s.Transcript)
	if err != nil {
		return ActionNone, "", err
	}
	action, reason := Decide(s, obs, fullTokens, fullEvery)
	return action, reason, nil
}

// PreCommit is the git pre-commit hook: a sparse checkpoint (full when notes are pending;
// sparse only while the breaker is open) for each session bound to workTree, whose result
// passed check or is reported. Sessions with nothing new cost three stat calls each.
func (rn *Runner) PreCommit(workTree string) ([]Outcome, error) {
	ids, st, err := BoundSessions(rn.home(), workTree)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	var outs []Outcome
	cfg := rn.CP.Config
	updated := map[string]*SessionState{}
	for _, id := range ids {
		s := st.Session(id)
		action, reason, err := decide(s, cfg.FullTokens(), 0)
		if err != nil {
			outs = append(outs, Outcome{Session: id, Result: "error", Error: err.Error(), Time: rn.Now()})
			continue
		}
		if action == ActionNone {
			continue
		}
		outs = append(outs, rn.checkpoint(id, s, action, reason, checkpoint.GitHookCause("pre-commit")))
		updated[id] = s
	}
	return outs, rn.saveSessions(updated)
}

// PrepareCommitMsg is the git prepare-commit-msg hook: it links the code commit to the
// current checkpoint of each session bound to workTree (or to its main work tree) that
// changed since the code commit that last linked it (or, never linked, has more than its
// first commit), one trailer per session, without a duplicate on amend. A session nothing
// happened to adds nothing to the message.
func (rn *Runner) PrepareCommitMsg(workTree, msgFile string) error {
	pending := filepath.Join(filepath.Dir(msgFile), PendingTrailers)
	_ = os.Remove(pending) // left by a commit that was aborted in the editor
	ids, st, err := BoundSessions(rn.home(), workTree)
	if err != nil || len(ids) == 0 {
		return err
	}
	b, err := os.ReadFile(msgFile)
	if err != nil {
		return err
	}
	// The sessions that could be named, with their heads; then what the code commits last
	// named, read only as far back as those sessions need.
	type cand struct {
		id  string
		sid repo.SessionID
		h   repo.Hash
	}
	var cands []cand
	var want []string
	for _, id := range ids {
		sid, err := repo.ParseSessionID(id)
		if err != nil || st.Session(id).Archived {
			continue
		}
		h, err := rn.CP.Store.HeadOf(sid)
		if err != nil || h == repo.ZeroHash {
			continue
		}
		cands = append(cands, cand{id, sid, h})
		want = append(want, id)
	}
	linked := rn.lastLinked(workTree, want)
	var trailers []string
	for _, c := range cands {
		v := c.id + "@" + repo.ShortHash(c.h)
		if old, ok := linked[c.id]; ok && old == v {
			continue // unchanged since a code commit named it
		}
		if _, ok := linked[c.id]; !ok {
			// Never named: a session with nothing but its first commit has nothing to say.
			if r, err := rn.CP.Store.Open(c.sid); err == nil {
				if ci, err := r.CommitInfo(c.h); err == nil && len(ci.Parents) == 0 {
					continue
				}
			}
		}
		trailers = append(trailers, v)
	}
	if len(trailers) == 0 {
		return nil
	}
	if trailer.MessageEmpty(string(b)) {
		// The editor has yet to run: a trailer now would make an aborted, empty commit a
		// commit whose message is the trailer. commit-msg adds them to what was written.
		return os.WriteFile(pending, []byte(strings.Join(trailers, "\n")+"\n"), 0o644)
	}
	return addTrailers(msgFile, b, trailers)
}

// CommitMsg is the git commit-msg hook: it adds the trailers prepare-commit-msg left for a
// message written in the editor.
func (rn *Runner) CommitMsg(msgFile string) error {
	pending := filepath.Join(filepath.Dir(msgFile), PendingTrailers)
	list, err := os.ReadFile(pending)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer os.Remove(pending)
	b, err := os.ReadFile(msgFile)
	if err != nil {
		return err
	}
	return addTrailers(msgFile, b, strings.Fields(string(list)))
}

func addTrailers(msgFile string, b []byte, values []string) error {
	msg := string(b)
	for _, v := range values {
		msg = trailer.Add(msg, checkpoint.KeyCheckpoint, v)
	}
	if msg == string(b) {
		return nil
	}
	return os.WriteFile(msgFile, []byte(msg), 0o644)
}

// Reset closes a session's breaker (recovery is manual, seed 002) and leaves a receipt.
func (rn *Runner) Reset(id string) (Breaker, error) {
	var before Breaker
	err := UpdateSessions(rn.home(), []string{id}, func(st *State) error {
		s := st.Session(id)
		before = s.Breaker
		s.Breaker.Reset()
		return nil
	})
	if err != nil {
		return before, err
	}
	return before, AppendReceipt(rn.home(), Receipt{Time: rn.Now(), Session: id, Action: "breaker-reset", Result: "closed", Trigger: string(checkpoint.TriggerManual)})
}
