package hint

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

type own struct{}

func (own) Error() string { return "own" }
func (own) Hint() string  { return "its own hint" }

func TestOf(t *testing.T) {
	base := New(fs.ErrNotExist, "create it with %s", "ckpt init")
	tests := []struct {
		name       string
		err        error
		msg, hint  string
		isNotExist bool
	}{
		{"plain", errors.New("x"), "x", "", false},
		{"hinted", base, "file does not exist", "create it with ckpt init", true},
		{"wrapped", fmt.Errorf("alpha: %w", base), "alpha: file does not exist", "create it with ckpt init", true},
		{"a type of its own", fmt.Errorf("a: %w", own{}), "a: own", "its own hint", false},
		{"nil", nil, "", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Of(tc.err); got != tc.hint {
				t.Errorf("Of = %q, want %q", got, tc.hint)
			}
			if tc.err != nil && tc.err.Error() != tc.msg {
				t.Errorf("Error() = %q, want %q", tc.err.Error(), tc.msg)
			}
			if errors.Is(tc.err, fs.ErrNotExist) != tc.isNotExist {
				t.Errorf("errors.Is(ErrNotExist) = %v", !tc.isNotExist)
			}
		})
	}
}
