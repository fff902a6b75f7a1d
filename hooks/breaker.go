package hooks

import (
	"fmt"
	"time"
)

// Breaker is a session's circuit breaker. Consecutive failed checkpoints open it; while
// open, ticks and hooks take only sparse checkpoints for the session. Nothing closes it
// but Reset: recovery after a degradation is a person's decision (seed 002).
type Breaker struct {
	Failures  int       `json:"failures,omitempty"`
	Open      bool      `json:"open,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	OpenedAt  time.Time `json:"opened_at,omitzero"`
	LastError string    `json:"last_error,omitempty"`
}

// Record counts the outcome of one checkpoint and reports whether this failure opened
// the breaker. A success resets the count of consecutive failures but leaves an open
// breaker open. A threshold below 1 never opens it.
func (b *Breaker) Record(ok bool, errText string, threshold int, now time.Time) (tripped bool) {
	if ok {
		b.Failures = 0
		b.LastError = ""
		return false
	}
	b.Failures++
	b.LastError = errText
	if b.Open || threshold < 1 || b.Failures < threshold {
		return false
	}
	b.Open = true
	b.OpenedAt = now
	b.Reason = fmt.Sprintf("%d consecutive failed checkpoints, last: %s", b.Failures, errText)
	return true
}

// Reset closes the breaker and forgets its failures.
func (b *Breaker) Reset() { *b = Breaker{} }

// BreakerReport is a session's breaker as ckpt status and ckpt breaker status show it.
type BreakerReport struct {
	Session   string `json:"session"`
	Open      bool   `json:"open"`
	Failures  int    `json:"failures"`
	Reason    string `json:"reason,omitempty"`
	OpenedAt  string `json:"opened_at,omitempty"`
	LastError string `json:"last_error,omitempty"`
}

// Report is b as the breaker of session shows it.
func (b Breaker) Report(session string) BreakerReport {
	r := BreakerReport{Session: session, Open: b.Open, Failures: b.Failures, Reason: b.Reason, LastError: b.LastError}
	if !b.OpenedAt.IsZero() {
		r.OpenedAt = b.OpenedAt.UTC().Format(time.RFC3339)
	}
	return r
}
