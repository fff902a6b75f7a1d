package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ckpt-dev/ckpt/repo"
)

// Receipt is one line of <home>/state/ticks.jsonl: what a tick, hook or breaker command did.
type Receipt struct {
	Time       time.Time `json:"time"`
	Session    string    `json:"session,omitempty"`
	Action     string    `json:"action"`
	Result     string    `json:"result"`
	Trigger    string    `json:"trigger,omitempty"`
	Error      string    `json:"error,omitempty"`
	DurationMS float64   `json:"duration_ms"`
}

// ReceiptsPath is the append-only receipts file of the store at home.
func ReceiptsPath(home string) string { return filepath.Join(stateDir(home), "ticks.jsonl") }

// AppendReceipt adds r as one JSON line to the receipts file. The file is only ever
// appended to, with one write, so concurrent ticks and hooks never interleave lines.
func AppendReceipt(home string, r Receipt) error {
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	r.Time = r.Time.UTC()
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("receipt: %w", err)
	}
	path := ReceiptsPath(home)
	if err := os.MkdirAll(filepath.Dir(path), repo.DirPerm); err != nil {
		return fmt.Errorf("%s: %w", filepath.Dir(path), err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, repo.FilePerm) // RDWR: the torn-line check reads
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	// A crash in the middle of an earlier write may have left a line without its newline;
	// start on a fresh line so that only that torn line is lost, not this one too.
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, fi.Size()-1); err == nil && last[0] != '\n' {
			line = append([]byte("\n"), line...)
		}
	}
	line = append(line, '\n')
	if _, err := f.Write(line); err != nil {
		_ = f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// ReadReceipts returns the last n receipts, oldest first (all of them when n < 1). It reads
// the file from its end, so status stays fast however long the history grows. A torn line
// (a crash during a write) is skipped; any other line that is not a receipt is an error.
func ReadReceipts(home string, n int) ([]Receipt, error) {
	path := ReceiptsPath(home)
	f, err := os.OpenFile(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	data, err := tail(f, fi.Size(), n)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	lines := bytes.Split(data, []byte("\n"))
	var out []Receipt
	for _, l := range lines {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		var r Receipt
		if err := json.Unmarshal(l, &r); err != nil {
			// A torn line is the cut-off start of a receipt; AppendReceipt kept it alone.
			if !json.Valid(l) && bytes.HasPrefix(l, []byte(`{"time":`)) {
				continue
			}
			return nil, fmt.Errorf("%s: line %q: %w", path, l, err)
		}
		out = append(out, r)
	}
	if n > 0 && len(out) > n {
		out = out[len(out)-n:]
	}
	return out, nil
}

// tail returns the end of the file that holds at least n complete lines (everything
// when n < 1).
func tail(f io.ReaderAt, size int64, n int) ([]byte, error) {
	if n < 1 {
		buf := make([]byte, size)
		_, err := f.ReadAt(buf, 0)
		if err == io.EOF {
			err = nil
		}
		return buf, err
	}
	const chunk = 64 << 10
	var buf []byte
	off := size
	for off > 0 && bytes.Count(buf, []byte("\n")) <= n+1 {
		step := int64(chunk)
		if off < step {
			step = off
		}
		off -= step
		b := make([]byte, step)
		if _, err := f.ReadAt(b, off); err != nil && err != io.EOF {
			return nil, err
		}
		buf = append(b, buf...)
	}
	if off > 0 {
		// Drop the partial first line.
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		}
	}
	return buf, nil
}

// TickRecord is the last cron tick: when, and how many checkpoints it took.
type TickRecord struct {
	Time        time.Time `json:"time"`
	Sessions    int       `json:"sessions"`
	Checkpoints int       `json:"checkpoints"`
}

func lastTickPath(home string) string { return filepath.Join(stateDir(home), "last-tick.json") }

// recordTick replaces the record of the last tick; a tick with nothing to do leaves no
// receipt, so this is how status knows that cron runs at all.
func recordTick(home string, t TickRecord) error {
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	return repo.WriteFileAtomic(lastTickPath(home), append(b, '\n'), repo.FilePerm, false)
}

// LastTick returns the last cron tick of the store at home, nil when none ran.
func LastTick(home string) (*TickRecord, error) {
	b, err := os.ReadFile(lastTickPath(home))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var t TickRecord
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", lastTickPath(home), ErrCorruptState, err)
	}
	return &t, nil
}
