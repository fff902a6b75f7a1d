package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDefaults(t *testing.T) {
	c, err := Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !c.FsyncOn() || !c.Review() || c.BreakerFailures() != 3 || c.FullTokens() != 20000 || c.FullEvery() != 10 || c.Path != "" {
		t.Errorf("defaults = %+v", c)
	}
}

func TestLoad(t *testing.T) {
	for _, tc := range []struct {
		name, toml, err string
		check           func(*Config) bool
	}{
		{"settings", "[core]\nfsync = false\nlock_timeout = \"250ms\"\n[promote]\nreview = false\n[breaker]\nfailures = 5\n[routing.six]\nnote = \"🔑\"\n[budgets.eleven]\n\"§7\" = 100\n", "",
			func(c *Config) bool {
				return !c.FsyncOn() && c.Core.LockTimeout.Duration == 250*time.Millisecond && !c.Review() &&
					c.BreakerFailures() == 5 && c.Routing["six"]["note"] == "🔑" && c.Budgets["eleven"]["§7"] == 100
			}},
		{"unknown key", "[core]\nfsnyc = true\n", "unknown setting core.fsnyc", nil},
		{"bad duration", "[core]\nlock_timeout = \"soon\"\n", "config.toml", nil},
		{"not toml", "[core\n", "config.toml", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			os.WriteFile(filepath.Join(home, "config.toml"), []byte(tc.toml), 0o644)
			c, err := Load(home)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !tc.check(c) {
				t.Errorf("Load = %+v, %v", c, err)
			}
		})
	}
}
