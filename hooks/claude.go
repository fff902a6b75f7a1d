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
	"strings"

	"github.com/ckpt-dev/ckpt/repo"
)

// claudeEvents are the Claude Code events ckpt hooks into. SessionStart has no source
// matcher: `ckpt hook claude SessionStart` itself acts only on source compact or resume.
var claudeEvents = []string{"PreCompact", "Stop", "SessionStart", "SessionEnd"}

// claudeCommandPrefix identifies ckpt's entries in a settings file.
const claudeCommandPrefix = "ckpt hook claude"

// claudeTimeout is the seconds Claude Code gives each of ckpt's hooks.
const claudeTimeout = 30

// ErrSettings is returned for a settings file whose shape ckpt cannot edit safely.
var ErrSettings = errors.New("invalid settings")

// ClaudeSettingsPath returns the settings file of a Claude Code scope.
func ClaudeSettingsPath(scope, projectDir, homeDir string) (string, error) {
	switch scope {
	case "project":
		return filepath.Join(projectDir, ".claude", "settings.json"), nil
	case "local":
		return filepath.Join(projectDir, ".claude", "settings.local.json"), nil
	case "user":
		return filepath.Join(homeDir, ".claude", "settings.json"), nil
	}
	return "", fmt.Errorf("scope %q: want project, local or user", scope)
}

// ClaudeCommand is the command ckpt's hook for event runs, with flags (-s NAME, --scope
// user) before the event. Each flag is one shell word: none holds a character the shell
// would read.
func ClaudeCommand(event string, flags ...string) string {
	return strings.Join(append(append([]string{claudeCommandPrefix}, flags...), event), " ")
}

// InstallClaude adds ckpt's hooks to the settings file at path, creating it if needed and
// keeping every other key and hook in its place. An event that already has a ckpt hook
// keeps it as it is (the user may have tuned its timeout), its command made the one flags
// ask for; so installing twice writes nothing.
func InstallClaude(path string, flags ...string) (changed bool, err error) {
	s, err := readSettings(path)
	if err != nil {
		return false, err
	}
	hooksVal, ok := s.root.get("hooks")
	if !ok {
		hooksVal = &jsonObject{}
		s.root.set("hooks", hooksVal)
	}
	hooks, ok := hooksVal.(*jsonObject)
	if !ok {
		return false, fmt.Errorf("%s: %w: \"hooks\" is not an object", path, ErrSettings)
	}
	for _, event := range claudeEvents {
		groupsVal, ok := hooks.get(event)
		if !ok {
			groupsVal = []any{}
		}
		groups, ok := groupsVal.([]any)
		if !ok {
			return false, fmt.Errorf("%s: %w: \"hooks\".%q is not an array", path, ErrSettings, event)
		}
		if hasCkptHook(groups) {
			if setCkptCommand(groups, ClaudeCommand(event, flags...)) {
				changed = true
			}
			continue
		}
		group := &jsonObject{}
		group.set("matcher", "")
		entry := &jsonObject{}
		entry.set("type", "command")
		entry.set("command", ClaudeCommand(event, flags...))
		entry.set("timeout", json.Number(fmt.Sprint(claudeTimeout)))
		group.set("hooks", []any{entry})
		hooks.set(event, append(groups, group))
		changed = true
	}
	if !changed {
		return false, nil
	}
	return true, s.write()
}

// UninstallClaude removes ckpt's hooks (commands starting with "ckpt hook claude") from the
// settings file at path, under every event. A matcher group, an event or a "hooks" object
// that only ckpt's hooks filled goes too; everything else stays. A missing file is fine.
func UninstallClaude(path string) (changed bool, err error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	s, err := readSettings(path)
	if err != nil {
		return false, err
	}
	hooksVal, ok := s.root.get("hooks")
	if !ok {
		return false, nil
	}
	hooks, ok := hooksVal.(*jsonObject)
	if !ok {
		return false, fmt.Errorf("%s: %w: \"hooks\" is not an object", path, ErrSettings)
	}
	for i := 0; i < len(hooks.members); i++ {
		groups, ok := hooks.members[i].value.([]any)
		if !ok {
			continue
		}
		kept, removed := removeCkptHooks(groups)
		if !removed {
			continue
		}
		changed = true
		if len(kept) == 0 {
			hooks.members = append(hooks.members[:i], hooks.members[i+1:]...)
			i--
			continue
		}
		hooks.members[i].value = kept
	}
	if !changed {
		return false, nil
	}
	if len(hooks.members) == 0 {
		s.root.remove("hooks")
	}
	return true, s.write()
}

// StatusClaude returns the events of the settings file at path that have a ckpt hook, in
// the file's order. A missing file has none.
func StatusClaude(path string) ([]string, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	s, err := readSettings(path)
	if err != nil {
		return nil, err
	}
	hooksVal, _ := s.root.get("hooks")
	hooks, ok := hooksVal.(*jsonObject)
	if !ok {
		return nil, nil
	}
	var events []string
	for _, m := range hooks.members {
		if groups, ok := m.value.([]any); ok && hasCkptHook(groups) {
			events = append(events, m.key)
		}
	}
	return events, nil
}

func isCkptHook(v any) bool {
	h, ok := v.(*jsonObject)
	if !ok {
		return false
	}
	cmd, _ := h.get("command")
	s, ok := cmd.(string)
	return ok && strings.HasPrefix(strings.TrimSpace(s), claudeCommandPrefix)
}

func hasCkptHook(groups []any) bool {
	for _, g := range groups {
		group, ok := g.(*jsonObject)
		if !ok {
			continue
		}
		list, _ := group.get("hooks")
		entries, _ := list.([]any)
		for _, e := range entries {
			if isCkptHook(e) {
				return true
			}
		}
	}
	return false
}

// setCkptCommand makes the command of ckpt's entries in an event's groups cmd, and reports
// whether one changed.
func setCkptCommand(groups []any, cmd string) (changed bool) {
	for _, g := range groups {
		group, ok := g.(*jsonObject)
		if !ok {
			continue
		}
		list, _ := group.get("hooks")
		entries, _ := list.([]any)
		for _, e := range entries {
			if isCkptHook(e) {
				h := e.(*jsonObject)
				if cur, _ := h.get("command"); cur != cmd {
					h.set("command", cmd)
					changed = true
				}
			}
		}
	}
	return changed
}

// removeCkptHooks drops ckpt's entries from an event's matcher groups, and a group that
// they alone filled; groups that were empty before are none of ckpt's business.
func removeCkptHooks(groups []any) (kept []any, removed bool) {
	kept = make([]any, 0, len(groups))
	for _, g := range groups {
		group, ok := g.(*jsonObject)
		if !ok {
			kept = append(kept, g)
			continue
		}
		list, _ := group.get("hooks")
		entries, ok := list.([]any)
		if !ok {
			kept = append(kept, g)
			continue
		}
		rest := make([]any, 0, len(entries))
		for _, e := range entries {
			if isCkptHook(e) {
				removed = true
				continue
			}
			rest = append(rest, e)
		}
		if len(rest) == len(entries) {
			kept = append(kept, g)
			continue
		}
		if len(rest) > 0 {
			group.set("hooks", rest)
			kept = append(kept, g)
		}
	}
	return kept, removed
}

// settings is a parsed settings file.
type settings struct {
	path string
	root *jsonObject
	mode fs.FileMode
	// trailer is what followed the JSON value (usually "\n"), written back unchanged.
	trailer string
}

func readSettings(path string) (*settings, error) {
	// Write through a symbolic link (dotfile managers) instead of replacing it.
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	s := &settings{path: path, root: &jsonObject{}, mode: 0o644, trailer: "\n"}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if fi, err := os.Stat(path); err == nil {
		s.mode = fi.Mode().Perm()
	}
	// An empty file (created with touch) is an empty object.
	if len(bytes.TrimSpace(data)) == 0 {
		return s, nil
	}
	v, rest, err := decodeOrdered(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", path, ErrSettings, err)
	}
	root, ok := v.(*jsonObject)
	if !ok {
		return nil, fmt.Errorf("%s: %w: not a JSON object", path, ErrSettings)
	}
	s.root = root
	s.trailer = rest
	return s, nil
}

func (s *settings) write() error {
	var buf bytes.Buffer
	encodeOrdered(&buf, s.root, "")
	buf.WriteString(s.trailer)
	if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
		return fmt.Errorf("%s: %w", filepath.Dir(s.path), err)
	}
	return repo.WriteFileAtomic(s.path, buf.Bytes(), s.mode, true)
}

// jsonObject is a JSON object that keeps its members in their order (and duplicates, if
// any), so that editing one key leaves the rest of a user's file as it was. Values are
// *jsonObject, []any, string, json.Number, bool or nil.
type jsonObject struct {
	members []jsonMember
}

type jsonMember struct {
	key   string
	value any
}

func (o *jsonObject) get(key string) (any, bool) {
	for _, m := range o.members {
		if m.key == key {
			return m.value, true
		}
	}
	return nil, false
}

// set replaces the value of key where it is, or appends the key at the end.
func (o *jsonObject) set(key string, v any) {
	for i := range o.members {
		if o.members[i].key == key {
			o.members[i].value = v
			return
		}
	}
	o.members = append(o.members, jsonMember{key, v})
}

func (o *jsonObject) remove(key string) {
	for i := range o.members {
		if o.members[i].key == key {
			o.members = append(o.members[:i], o.members[i+1:]...)
			return
		}
	}
}

// decodeOrdered parses one JSON value and returns it with the whitespace that followed it;
// anything else after the value is an error.
func decodeOrdered(data []byte) (any, string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, "", err
	}
	off := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			err = errors.New("data after the top-level value")
		}
		return nil, "", err
	}
	return v, string(data[off:]), nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err == io.EOF {
		return nil, io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := &jsonObject{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				obj.members = append(obj.members, jsonMember{k.(string), v})
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return obj, nil
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return arr, nil
		}
		return nil, fmt.Errorf("unexpected %q", t)
	default:
		return tok, nil
	}
}

// encodeOrdered writes v the way json.MarshalIndent(v, "", "  ") and JSON.stringify(v,
// null, 2) do, so a file in that common format comes back byte for byte.
func encodeOrdered(buf *bytes.Buffer, v any, indent string) {
	switch t := v.(type) {
	case *jsonObject:
		if len(t.members) == 0 {
			buf.WriteString("{}")
			return
		}
		buf.WriteString("{")
		for i, m := range t.members {
			if i > 0 {
				buf.WriteString(",")
			}
			buf.WriteString("\n" + indent + "  ")
			encodeString(buf, m.key)
			buf.WriteString(": ")
			encodeOrdered(buf, m.value, indent+"  ")
		}
		buf.WriteString("\n" + indent + "}")
	case []any:
		if len(t) == 0 {
			buf.WriteString("[]")
			return
		}
		buf.WriteString("[")
		for i, e := range t {
			if i > 0 {
				buf.WriteString(",")
			}
			buf.WriteString("\n" + indent + "  ")
			encodeOrdered(buf, e, indent+"  ")
		}
		buf.WriteString("\n" + indent + "]")
	case string:
		encodeString(buf, t)
	case json.Number:
		buf.WriteString(t.String())
	case bool:
		if t {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case nil:
		buf.WriteString("null")
	default:
		panic(fmt.Sprintf("hooks: cannot encode %T", v))
	}
}

// encodeString quotes s without json.Marshal's HTML escaping, which would turn a user's
// "&&" in a hook command into "\u0026\u0026".
func encodeString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	buf.Truncate(buf.Len() - 1) // Encode's newline
}

// ClaudeMCPName is the name ckpt's MCP server has in Claude Code's .mcp.json.
const ClaudeMCPName = "ckpt"

// ClaudeMCPPath is the project-scoped MCP configuration Claude Code reads: .mcp.json at the
// top of the project, meant to be committed and shared.
func ClaudeMCPPath(projectDir string) string { return filepath.Join(projectDir, ".mcp.json") }

// InstallClaudeMCP registers `ckpt mcp` as a stdio server under "mcpServers" in the
// .mcp.json at path, creating the file if needed and keeping every other key and server in
// its place. A "ckpt" server already there is left as it is (the user may have added
// --home or --allow-notes), so installing twice writes nothing.
func InstallClaudeMCP(path string) (changed bool, err error) {
	s, err := readSettings(path)
	if err != nil {
		return false, err
	}
	servers, err := mcpServers(s, true)
	if err != nil {
		return false, err
	}
	if _, ok := servers.get(ClaudeMCPName); ok {
		return false, nil
	}
	entry := &jsonObject{}
	entry.set("type", "stdio")
	entry.set("command", "ckpt")
	entry.set("args", []any{"mcp"})
	servers.set(ClaudeMCPName, entry)
	return true, s.write()
}

// UninstallClaudeMCP removes ckpt's server from the .mcp.json at path: the "ckpt" entry,
// when it runs ckpt mcp (an entry of that name that runs something else is the user's).
// "mcpServers" goes when ckpt's was its only server, and the file when nothing is left in
// it; everything else stays byte for byte where the file was in the usual two-space
// format. A missing file is fine.
func UninstallClaudeMCP(path string) (changed bool, err error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	s, err := readSettings(path)
	if err != nil {
		return false, err
	}
	servers, err := mcpServers(s, false)
	if err != nil || servers == nil {
		return false, err
	}
	v, ok := servers.get(ClaudeMCPName)
	if !ok || !isCkptMCP(v) {
		return false, nil
	}
	servers.remove(ClaudeMCPName)
	if len(servers.members) == 0 {
		s.root.remove("mcpServers")
	}
	if len(s.root.members) == 0 && fi.Mode().IsRegular() { // a link's target is not ours to delete
		if err := os.Remove(s.path); err != nil {
			return false, fmt.Errorf("%s: %w", s.path, err)
		}
		return true, nil
	}
	return true, s.write()
}

// StatusClaudeMCP reports whether the .mcp.json at path registers ckpt mcp.
func StatusClaudeMCP(path string) (bool, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	s, err := readSettings(path)
	if err != nil {
		return false, err
	}
	servers, err := mcpServers(s, false)
	if err != nil || servers == nil {
		return false, err
	}
	v, ok := servers.get(ClaudeMCPName)
	return ok && isCkptMCP(v), nil
}

// mcpServers returns the "mcpServers" object of a configuration, adding it when create is
// set (nil when absent otherwise).
func mcpServers(s *settings, create bool) (*jsonObject, error) {
	v, ok := s.root.get("mcpServers")
	if !ok {
		if !create {
			return nil, nil
		}
		v = &jsonObject{}
		s.root.set("mcpServers", v)
	}
	servers, ok := v.(*jsonObject)
	if !ok {
		return nil, fmt.Errorf("%s: %w: \"mcpServers\" is not an object", s.path, ErrSettings)
	}
	return servers, nil
}

// isCkptMCP reports whether a server entry runs ckpt mcp.
func isCkptMCP(v any) bool {
	e, ok := v.(*jsonObject)
	if !ok {
		return false
	}
	cmd, _ := e.get("command")
	name, _ := cmd.(string)
	if filepath.Base(strings.TrimSpace(name)) != "ckpt" {
		return false
	}
	args, _ := e.get("args")
	list, _ := args.([]any)
	for _, a := range list {
		if a == "mcp" {
			return true
		}
	}
	return false
}
