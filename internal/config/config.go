// Package config reads <home>/config.toml. Every setting has a default, so a store without a
// config file works; an unknown key is an error that names the file and the key, so a typo
// never goes silently unapplied.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Config is the whole of config.toml.
type Config struct {
	Core struct {
		// Fsync makes every write durable before ckpt reports it (default true).
		Fsync *bool `toml:"fsync"`
		// LockTimeout bounds the wait for a busy session (default 10s).
		LockTimeout Duration `toml:"lock_timeout"`
		// PackThreshold is the loose-object count past which a commit packs (default 1000).
		PackThreshold int `toml:"pack_threshold"`
	} `toml:"core"`
	Hooks struct {
		// Strict lets an invalid checkpoint block a git commit and fail an agent hook.
		Strict bool `toml:"strict"`
		// Template is the checkpoint template of sessions an agent hook creates (six).
		Template string `toml:"template"`
	} `toml:"hooks"`
	Claude struct {
		// Session is the ckpt session every Claude Code conversation of the store's projects
		// writes to ("": one session per project, found or created by the hooks).
		Session string `toml:"session"`
		// PerConversation gives each Claude Code conversation a session of its own instead.
		PerConversation bool `toml:"per_conversation"`
	} `toml:"claude"`
	Promote struct {
		// Review sends promoted decisions to "Pending review" first (default true).
		Review *bool `toml:"review"`
	} `toml:"promote"`
	Breaker struct {
		// Failures is the count of consecutive failed checkpoints that opens the breaker (3).
		Failures int `toml:"failures"`
	} `toml:"breaker"`
	Full struct {
		// Tokens of transcript growth (characters/4) that call for a full checkpoint (20000).
		Tokens int `toml:"tokens"`
		// Every is the count of sparse ticks after which a full one runs (default 10).
		Every int `toml:"every"`
	} `toml:"full"`
	// Routing overrides a template's notes routing: [routing.six] tag = "section id".
	Routing map[string]map[string]string `toml:"routing"`
	// Budgets overrides section budgets in bytes: [budgets.eleven] "§7" = 2048.
	Budgets map[string]map[string]int `toml:"budgets"`
	Secrets struct {
		// Allow lists literal strings or rule:id pairs the secret scan lets through.
		Allow []string `toml:"allow"`
	} `toml:"secrets"`
	Shrink struct {
		// MaxShare is the share of a section's entries one write may remove (default 0.5);
		// Key Decisions lose none, whatever it says.
		MaxShare float64 `toml:"max_share"`
		// Exempt lists more section ids the guard lets shrink freely.
		Exempt []string `toml:"exempt"`
	} `toml:"shrink"`
	Remote struct {
		// Git is "auto" (system git when installed), "system" or "go-git".
		Git string `toml:"git"`
	} `toml:"remote"`

	// Path is the file this was read from ("" when there is none).
	Path string `toml:"-"`
}

// Duration is a time.Duration written as "10s" in TOML.
type Duration struct{ time.Duration }

// UnmarshalText parses a Go duration.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// Load reads <home>/config.toml; a missing file gives the defaults.
func Load(home string) (*Config, error) {
	c := &Config{}
	path := filepath.Join(home, "config.toml")
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	md, err := toml.Decode(string(b), c)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if un := md.Undecoded(); len(un) > 0 {
		keys := make([]string, len(un))
		for i, k := range un {
			keys[i] = k.String()
		}
		return nil, fmt.Errorf("%s: unknown setting %s", path, strings.Join(keys, ", "))
	}
	c.Path = path
	return c, nil
}

// FsyncOn reports whether writes are fsynced (default true).
func (c *Config) FsyncOn() bool { return c.Core.Fsync == nil || *c.Core.Fsync }

// Review reports whether promotions wait for review (default true).
func (c *Config) Review() bool { return c.Promote.Review == nil || *c.Promote.Review }

// BreakerFailures is the breaker's threshold (default 3).
func (c *Config) BreakerFailures() int { return orDefault(c.Breaker.Failures, 3) }

// FullTokens is the transcript growth that calls for a full checkpoint (default 20,000).
func (c *Config) FullTokens() int { return orDefault(c.Full.Tokens, 20000) }

// FullEvery is the count of sparse ticks between full ones (default 10).
func (c *Config) FullEvery() int { return orDefault(c.Full.Every, 10) }

func orDefault(v, d int) int {
	if v > 0 {
		return v
	}
	return d
}
