package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// userSettings is a settings file as Claude Code writes it (2-space indentation), with
// keys and hooks that ckpt must keep: a PreToolUse Bash hook and another tool's Stop hook.
const userSettings = `{
  "model": "opus",
  "permissions": {
    "allow": [
      "Bash(go test:*)",
      "Read(~/.zshrc)"
    ],
    "deny": []
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "jq -r '.tool_input.command' >> ~/.claude/bash.log && echo '<ok>'"
          }
        ]
      }
    ],
    "Stop": [
      {
        "matcher": "",
        "hooks": [
          {
            "type": "command",
            "command": "notify-send \"done ✓\"",
            "timeout": 5.0
          }
        ]
      }
    ]
  },
  "env": {
    "CKPT_HOME": "/home/u/.ckpt"
  },
  "cleanupPeriodDays": 1e2
}
`

func TestClaudeSettingsPath(t *testing.T) {
	tests := []struct {
		scope, want string
		wantErr     bool
	}{
		{scope: "project", want: "/p/.claude/settings.json"},
		{scope: "local", want: "/p/.claude/settings.local.json"},
		{scope: "user", want: "/h/.claude/settings.json"},
		{scope: "global", wantErr: true},
		{scope: "", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.scope, func(t *testing.T) {
			got, err := ClaudeSettingsPath(tc.scope, "/p", "/h")
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("ClaudeSettingsPath(%q) = %q, %v; want %q, error %v", tc.scope, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// tokens lists a JSON text's tokens: equal lists mean equal values with keys in the same
// order, whatever the formatting.
func tokens(t *testing.T, data []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("invalid JSON: %v\n%s", err, data)
		}
		out = append(out, fmt.Sprintf("%T:%v", tok, tok))
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestInstallUninstallClaude(t *testing.T) {
	tests := []struct {
		name      string
		before    string // "" for no file
		byteExact bool   // uninstall must restore the exact bytes
	}{
		{name: "no file"},
		{name: "user settings with unrelated hooks", before: userSettings, byteExact: true},
		{name: "no final newline", before: strings.TrimSuffix(userSettings, "\n"), byteExact: true},
		{name: "no hooks key", before: "{\n  \"model\": \"opus\"\n}\n", byteExact: true},
		{name: "empty object", before: "{}\n", byteExact: true},
		{name: "other formatting", before: `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"say hi"}]}]},"z":[1,2,{"a":null,"b":true}],"a":"\u00e9"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "proj", ".claude", "settings.json")
			if tc.before != "" {
				write(t, path, tc.before, 0o600)
			}

			changed, err := InstallClaude(path)
			if err != nil || !changed {
				t.Fatalf("InstallClaude = %v, %v; want true, nil", changed, err)
			}
			installed := readFile(t, path)
			installedInfo, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			events, err := StatusClaude(path)
			if err != nil {
				t.Fatal(err)
			}
			var ours []string
			for _, e := range events {
				if e == "PreCompact" || e == "Stop" || e == "SessionStart" || e == "SessionEnd" {
					ours = append(ours, e)
				}
			}
			if len(ours) != 4 || len(events) != 4 {
				t.Errorf("StatusClaude = %v, want the 4 ckpt events", events)
			}
			var v struct {
				Hooks map[string][]struct {
					Matcher *string `json:"matcher"`
					Hooks   []struct {
						Type    string  `json:"type"`
						Command string  `json:"command"`
						Timeout float64 `json:"timeout"`
					} `json:"hooks"`
				} `json:"hooks"`
			}
			if err := json.Unmarshal(installed, &v); err != nil {
				t.Fatalf("installed file is not JSON: %v\n%s", err, installed)
			}
			for _, event := range claudeEvents {
				groups := v.Hooks[event]
				last := groups[len(groups)-1]
				if last.Matcher == nil || *last.Matcher != "" || len(last.Hooks) != 1 ||
					last.Hooks[0] != (struct {
						Type    string  `json:"type"`
						Command string  `json:"command"`
						Timeout float64 `json:"timeout"`
					}{"command", "ckpt hook claude " + event, 30}) {
					t.Errorf("%s: last group %+v is not ckpt's", event, last)
				}
			}
			if fi, err := os.Stat(path); err != nil || (tc.before != "" && fi.Mode().Perm() != 0o600) {
				t.Errorf("mode after install: %v %v", fi.Mode(), err)
			}

			// Everything that was there is still there, in order.
			if tc.before != "" && !isSubsequence(tokens(t, []byte(tc.before)), tokens(t, installed)) {
				t.Errorf("install lost or reordered something:\n%s", installed)
			}

			changed, err = InstallClaude(path)
			if err != nil || changed {
				t.Fatalf("second InstallClaude = %v, %v; want false, nil", changed, err)
			}
			if again := readFile(t, path); !bytes.Equal(again, installed) {
				t.Errorf("second install changed the file")
			}
			if fi, err := os.Stat(path); err != nil || !os.SameFile(fi, installedInfo) {
				t.Errorf("second install rewrote the file")
			}

			changed, err = UninstallClaude(path)
			if err != nil || !changed {
				t.Fatalf("UninstallClaude = %v, %v; want true, nil", changed, err)
			}
			after := readFile(t, path)
			want := tc.before
			if want == "" {
				want = "{}\n"
			}
			if tc.byteExact && string(after) != want {
				t.Errorf("after uninstall:\n%s\nwant byte for byte\n%s", after, want)
			}
			if got, w := tokens(t, after), tokens(t, []byte(want)); !reflect.DeepEqual(got, w) {
				t.Errorf("after uninstall tokens\n%v\nwant\n%v", got, w)
			}
			if events, err := StatusClaude(path); err != nil || len(events) != 0 {
				t.Errorf("StatusClaude after uninstall = %v, %v", events, err)
			}
			changed, err = UninstallClaude(path)
			if err != nil || changed {
				t.Errorf("second UninstallClaude = %v, %v; want false, nil", changed, err)
			}
			if again := readFile(t, path); !bytes.Equal(again, after) {
				t.Errorf("second uninstall changed the file")
			}
		})
	}
}

func TestUninstallClaudeKeepsOthersInGroup(t *testing.T) {
	const before = `{
  "hooks": {
    "Stop": [
      {
        "matcher": "",
        "hooks": [
          {
            "type": "command",
            "command": "other-tool stop"
          },
          {
            "type": "command",
            "command": "ckpt hook claude Stop --strict",
            "timeout": 60
          }
        ]
      },
      {
        "hooks": []
      }
    ],
    "PreCompact": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "  ckpt hook claude PreCompact"
          }
        ]
      }
    ],
    "Notification": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "ckpt-notify"
          }
        ]
      }
    ]
  }
}
`
	const want = `{
  "hooks": {
    "Stop": [
      {
        "matcher": "",
        "hooks": [
          {
            "type": "command",
            "command": "other-tool stop"
          }
        ]
      },
      {
        "hooks": []
      }
    ],
    "Notification": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "ckpt-notify"
          }
        ]
      }
    ]
  }
}
`
	path := filepath.Join(t.TempDir(), "settings.json")
	write(t, path, before, 0o644)
	events, err := StatusClaude(path)
	if err != nil || strings.Join(events, ",") != "Stop,PreCompact" {
		t.Errorf("StatusClaude = %v, %v; want Stop,PreCompact", events, err)
	}
	// A tuned ckpt hook counts as installed: install adds only the missing events.
	if _, err := InstallClaude(path); err != nil {
		t.Fatal(err)
	}
	data := readFile(t, path)
	if n := strings.Count(string(data), "ckpt hook claude Stop"); n != 1 {
		t.Errorf("install added a second Stop hook (%d)", n)
	}
	if _, err := UninstallClaude(path); err != nil {
		t.Fatal(err)
	}
	if got := string(readFile(t, path)); got != want {
		t.Errorf("after uninstall:\n%s\nwant\n%s", got, want)
	}
}

func TestClaudeRefusesBadFiles(t *testing.T) {
	tests := []struct {
		name, content string
	}{
		{"invalid JSON", "{\n  \"hooks\": {\n"},
		{"trailing data", "{} {}"},
		{"comment", "// settings\n{}"},
		{"not an object", "[1, 2]"},
		{"hooks is an array", `{"hooks": []}`},
		{"event is an object", `{"hooks": {"Stop": {}}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "settings.json")
			write(t, path, tc.content, 0o644)
			_, err := InstallClaude(path)
			if !errors.Is(err, ErrSettings) || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "\n") {
				t.Errorf("InstallClaude err = %v, want one line wrapping ErrSettings naming %s", err, path)
			}
			if got := string(readFile(t, path)); got != tc.content {
				t.Errorf("file changed to %q", got)
			}
			entries, _ := os.ReadDir(filepath.Dir(path))
			if len(entries) != 1 {
				t.Errorf("left files behind: %v", entries)
			}
		})
	}
}

func TestClaudeEmptyFileAndSymlink(t *testing.T) {
	t.Run("empty file is an empty object", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "settings.json")
		write(t, path, "", 0o644)
		if changed, err := InstallClaude(path); err != nil || !changed {
			t.Fatalf("InstallClaude = %v, %v", changed, err)
		}
		if events, _ := StatusClaude(path); len(events) != 4 {
			t.Errorf("events = %v", events)
		}
	})
	t.Run("a symlinked settings file stays a symlink", func(t *testing.T) {
		dir := t.TempDir()
		target := filepath.Join(dir, "dotfiles", "settings.json")
		write(t, target, "{\n  \"model\": \"opus\"\n}\n", 0o644)
		link := filepath.Join(dir, ".claude", "settings.json")
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		if _, err := InstallClaude(link); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("link replaced: %v %v", fi.Mode(), err)
		}
		if !strings.Contains(string(readFile(t, target)), "ckpt hook claude Stop") {
			t.Errorf("target not updated")
		}
	})
}

func isSubsequence(sub, seq []string) bool {
	i := 0
	for _, s := range seq {
		if i < len(sub) && sub[i] == s {
			i++
		}
	}
	return i == len(sub)
}

// A .mcp.json kept elsewhere and linked into the project (a dotfile manager) is written
// through, and emptying it never deletes the link's target.
func TestClaudeMCPThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles-mcp.json")
	if err := os.WriteFile(target, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, ".mcp.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if changed, err := InstallClaudeMCP(link); err != nil || !changed {
		t.Fatalf("install: %v %v", changed, err)
	}
	if ok, err := StatusClaudeMCP(link); err != nil || !ok {
		t.Fatalf("status: %v %v", ok, err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v", err)
	}
	if changed, err := UninstallClaudeMCP(link); err != nil || !changed {
		t.Fatalf("uninstall: %v %v", changed, err)
	}
	b, err := os.ReadFile(target)
	if err != nil || string(b) != "{}\n" {
		t.Fatalf("target after uninstall: %q, %v", b, err)
	}
}
