// Package failpoint lets tests make ckpt fail at a named point of a multi-step operation,
// to prove that a failure in the middle leaves every repository as it was. A point fails
// when CKPT_FAILPOINT names it; in normal use the variable is unset and Check costs one
// environment lookup.
package failpoint

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// ErrInjected is the error a failing point returns.
var ErrInjected = errors.New("injected failure")

// Check returns ErrInjected (wrapped with the point's name) when CKPT_FAILPOINT lists name
// (comma separated), else nil.
func Check(name string) error {
	v := os.Getenv("CKPT_FAILPOINT")
	if v == "" {
		return nil
	}
	for _, p := range strings.Split(v, ",") {
		if strings.TrimSpace(p) == name {
			return fmt.Errorf("%s: %w", name, ErrInjected)
		}
	}
	return nil
}
