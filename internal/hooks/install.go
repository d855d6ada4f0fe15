package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt"
)

// Scope says which settings file an agent's hooks go in.
type Scope string

// Scopes, named as Claude Code names its settings files.
const (
	// ScopeLocal: the workspace's settings for this machine only (Claude
	// Code's .claude/settings.local.json, which is not meant to be
	// committed) — the default for Claude Code, as the command in them is
	// this machine's path to ckpt.
	ScopeLocal Scope = "local"
	// ScopeProject: the workspace's shared settings (.claude/settings.json,
	// .gemini/settings.json), committed for everyone who works in it.
	ScopeProject Scope = "project"
	// ScopeUser: the user's settings (~/.claude/settings.json,
	// ~/.gemini/settings.json, ~/.codex/hooks.json), for every project.
	ScopeUser Scope = "user"
)

// DefaultScope is the scope install uses when none is given: the local
// settings for Claude Code; the project for Gemini CLI, which has no local
// settings file; the user for Codex, whose hooks (and the trust they need)
// are the user's ($CODEX_HOME), and for Copilot, which runs a
// repository's hooks only in a folder the user trusts.
func DefaultScope(agent string) Scope {
	switch agent {
	case Codex, Copilot:
		return ScopeUser
	case ClaudeCode:
		return ScopeLocal
	}
	return ScopeProject
}

// Scopes lists the scopes an agent reads hooks from, narrowest first.
func Scopes(agent string) []Scope {
	switch agent {
	case Codex:
		return []Scope{ScopeUser}
	case ClaudeCode:
		return []Scope{ScopeLocal, ScopeProject, ScopeUser}
	}
	return []Scope{ScopeProject, ScopeUser}
}

// InWorkspace reports whether the scope's settings file lies in the
// workspace.
func (s Scope) InWorkspace() bool { return s == ScopeLocal || s == ScopeProject }

// SettingsFile returns the file an agent reads its hooks from: for the
// project scope, under the workspace; for the user scope, under the home
// directory ($CLAUDE_CONFIG_DIR, $CODEX_HOME, $QWEN_HOME and Droid's
// $FACTORY_HOME_OVERRIDE are honored). For Codex
// it is hooks.json; the config.toml beside it holds the hooks' trust and
// the legacy notify program.
func SettingsFile(agent string, scope Scope, workspace string) (string, error) {
	if scope == ScopeLocal {
		if agent == ClaudeCode {
			return filepath.Join(workspace, ".claude", "settings.local.json"), nil
		}
		return "", fmt.Errorf("%s has no local settings file: use --project or --user", agent)
	}
	if scope == ScopeProject {
		switch agent {
		case ClaudeCode:
			return filepath.Join(workspace, ".claude", "settings.json"), nil
		case Gemini:
			return filepath.Join(workspace, ".gemini", "settings.json"), nil
		case QwenCode:
			return filepath.Join(workspace, ".qwen", "settings.json"), nil
		case OpenCode:
			return filepath.Join(workspace, ".opencode", "plugins", "ckpt.js"), nil
		case Droid:
			return filepath.Join(workspace, ".factory", "settings.json"), nil
		case Cursor:
			return filepath.Join(workspace, ".cursor", "hooks.json"), nil
		case Copilot:
			return filepath.Join(workspace, ".github", "hooks", "ckpt.json"), nil
		case Codex:
			return "", fmt.Errorf("ckpt installs Codex's hooks for the user only ($CODEX_HOME/hooks.json, trusted in its config.toml): use --user")
		}
		return "", fmt.Errorf("unknown agent %q", agent)
	}
	if scope != ScopeUser {
		return "", fmt.Errorf("unknown scope %q (want local, project or user)", scope)
	}
	home, err := os.UserHomeDir()
	switch agent {
	case ClaudeCode:
		if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
			return filepath.Join(d, "settings.json"), nil
		}
		if err != nil {
			return "", err
		}
		return filepath.Join(home, ".claude", "settings.json"), nil
	case Gemini:
		if err != nil {
			return "", err
		}
		return filepath.Join(home, ".gemini", "settings.json"), nil
	case OpenCode:
		d, err := opencodeConfigDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(d, "plugins", "ckpt.js"), nil
	case Copilot:
		d, err := copilotHome()
		if err != nil {
			return "", err
		}
		return filepath.Join(d, "hooks", "ckpt.json"), nil
	case QwenCode:
		if d := os.Getenv("QWEN_HOME"); d != "" {
			return filepath.Join(d, "settings.json"), nil
		}
		if err != nil {
			return "", err
		}
		return filepath.Join(home, ".qwen", "settings.json"), nil
	case Droid:
		if d := os.Getenv("FACTORY_HOME_OVERRIDE"); d != "" {
			home, err = d, nil
		}
		if err != nil {
			return "", err
		}
		return filepath.Join(home, ".factory", "settings.json"), nil
	case Cursor:
		if err != nil {
			return "", err
		}
		return filepath.Join(home, ".cursor", "hooks.json"), nil
	case Codex:
		if d := os.Getenv("CODEX_HOME"); d != "" {
			return filepath.Join(d, "hooks.json"), nil
		}
		if err != nil {
			return "", err
		}
		return filepath.Join(home, ".codex", "hooks.json"), nil
	}
	return "", fmt.Errorf("unknown agent %q", agent)
}

// Events lists the events ckpt installs a hook for, per agent.
var Events = map[string][]string{
	ClaudeCode: {"SessionStart", "UserPromptSubmit", "PreToolUse", "Stop", "SessionEnd"},
	Gemini:     {"SessionStart", "BeforeAgent", "BeforeTool", "AfterAgent", "SessionEnd"},
	Codex:      {"SessionStart", "UserPromptSubmit", "PreToolUse", "Stop", "SessionEnd"},
	QwenCode:   {"SessionStart", "UserPromptSubmit", "PreToolUse", "Stop", "SessionEnd"},
	Droid:      {"SessionStart", "UserPromptSubmit", "PreToolUse", "Stop", "SessionEnd"},
	// Cursor's two events that carry a turn: its sessionStart and
	// sessionEnd add nothing ckpt needs (the prompt's hook opens the
	// session; stop comes also for an aborted turn).
	Cursor: {"beforeSubmitPrompt", "stop"},
	// OpenCode's plugin hooks and event that ckpt's plugin file acts on.
	OpenCode: {"chat.message", "tool.execute.before", "tool.execute.after", "session.idle"},
	// Copilot's PascalCase names, for which its payloads name the event.
	Copilot: {"SessionStart", "UserPromptSubmit", "PreToolUse", "Stop", "SessionEnd"},
}

// hookTimeout is the time the installed entries give a hook, in seconds:
// above DefaultTimeout, so ckpt gives up (and says why) before the agent
// kills it.
const hookTimeout = 30

// claudeHandler and geminiHandler are the entries install writes, with
// their keys in this order.
type claudeHandler struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
	Async   bool   `json:"async,omitempty"`
}

type geminiHandler struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Command     string `json:"command"`
	Timeout     int    `json:"timeout"`
	Description string `json:"description"`
}

type hookGroup struct {
	// Matcher limits a tool event's hook to the agent's edit tools.
	Matcher string `json:"matcher,omitempty"`
	Hooks   []any  `json:"hooks"`
}

// toolEvents are the events before a tool runs, whose hook install limits
// to the agent's edit tools (see editTools).
var toolEvents = map[string]bool{"PreToolUse": true, "BeforeTool": true}

// editMatcher is the matcher of an agent's edit tools: their names as a
// regular expression's alternatives, as Claude Code, Gemini CLI and Qwen
// Code match tool names.
func editMatcher(agent string) string {
	var names []string
	for n := range editTools[agent] {
		names = append(names, regexp.QuoteMeta(n))
	}
	sort.Strings(names)
	return strings.Join(names, "|")
}

var geminiDescriptions = map[string]string{
	"SessionStart": "ckpt: open this session's record",
	"BeforeAgent":  "ckpt: checkpoint the workspace as the turn begins",
	"BeforeTool":   "ckpt: keep an ignored file an edit tool is about to change",
	"AfterAgent":   "ckpt: checkpoint the workspace as the turn ends",
	"SessionEnd":   "ckpt: end a turn still in progress",
}

// cursorHandler is the entry install writes in Cursor's hooks.json:
// the command alone (Cursor's default timeout applies).
type cursorHandler struct {
	Command string `json:"command"`
}

func handlerFor(agent, event, command string, opts InstallOptions) any {
	if agent == Cursor {
		return cursorHandler{Command: command}
	}
	if agent == Gemini {
		return geminiHandler{Name: "ckpt-" + event, Type: "command", Command: command,
			Timeout: hookTimeout * 1000, Description: geminiDescriptions[event]}
	}
	timeout := hookTimeout
	if agent == Codex && event == "SessionEnd" {
		timeout = codexSessionEndTimeout
	}
	return claudeHandler{Type: "command", Command: command, Timeout: timeout, Async: asyncStop(agent, event, opts)}
}

func asyncStop(agent, event string, opts InstallOptions) bool {
	return opts.AsyncStop && agent == ClaudeCode && event == "Stop"
}

// InstallOptions configure [Install] and [Uninstall].
type InstallOptions struct {
	// Command is how the agent runs ckpt: an absolute path or "ckpt" (on
	// PATH). Default: [DefaultCommand].
	Command string
	// BackupDir receives a copy of a settings file before it is changed
	// ("" for hook-backups in ckpt's state directory).
	BackupDir string
	// Project is the project a project-scope settings file belongs to
	// ("" for the directory above the file's): the file must lie inside
	// it, also through symlinks.
	Project string
	// AsyncStop makes Claude Code run the Stop hook in the background
	// ("async": true), so the end-of-turn checkpoint is off the agent's
	// path (see docs/hooks.md for what that trades).
	AsyncStop bool
	// Notify installs Codex's legacy notify program in config.toml (for
	// a Codex without hooks) instead of its hooks.
	Notify bool
}

// Change is what [Install] or [Uninstall] did to a settings file.
type Change struct {
	Agent string `json:"agent"`
	Scope Scope  `json:"scope"`
	File  string `json:"file"`
	// Command is the command the installed entries run.
	Command string `json:"command,omitempty"`
	// Added, Updated (a different ckpt command) and Removed name events.
	Added   []string `json:"added"`
	Updated []string `json:"updated"`
	Removed []string `json:"removed"`
	// Kept are events whose hooks already run ckpt's hook through a
	// command of the user's ("EVENT: COMMAND"): install adds no second
	// one, and uninstall leaves them as they are.
	Kept []string `json:"kept,omitempty"`
	// Changed is false when the file already was as asked.
	Changed bool `json:"changed"`
	// Backup is the copy of the file as it was before.
	Backup string `json:"backup,omitempty"`
	// Config is Codex's config.toml, when it changed too: Trusted are
	// the events whose hooks' trust install recorded there, Untrusted
	// those whose trust uninstall removed; ConfigBackup is its copy.
	Config       string   `json:"config,omitempty"`
	ConfigBackup string   `json:"config_backup,omitempty"`
	Trusted      []string `json:"trusted,omitempty"`
	Untrusted    []string `json:"untrusted,omitempty"`
}

// DefaultCommand returns the command installed hooks run: the absolute
// path of the running ckpt — through the PATH entry that leads to it when
// there is one (a package manager's symlink keeps working across
// upgrades). It refuses a binary `go run` built in a temporary directory.
func DefaultCommand() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot find the running ckpt: %w (use --command)", err)
	}
	real, err := filepath.EvalSymlinks(exe)
	if err != nil {
		real = exe
	}
	if p, err := exec.LookPath("ckpt"); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			if r, err := filepath.EvalSymlinks(abs); err == nil && r == real {
				return abs, nil
			}
		}
	}
	if strings.Contains(real, string(filepath.Separator)+"go-build") {
		return "", fmt.Errorf("ckpt is running from a temporary `go run` build (%s): install it (go install ./cmd/ckpt) or pass --command", real)
	}
	return exe, nil
}

// hookCommand is the shell command line an agent runs.
func hookCommand(command, agent string) string {
	return shellQuote(command) + " hook " + agent
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellFields splits a command line into words the way sh would for
// plain words and quoted strings (no expansions).
func shellFields(s string) []string {
	var out []string
	var cur strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			in = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				cur.WriteString(s[i+1:])
				i = len(s)
			} else {
				cur.WriteString(s[i+1 : i+1+j])
				i += j + 1
			}
		case c == '"':
			in = true
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				cur.WriteByte(s[i])
			}
		case c == '\\' && i+1 < len(s):
			in = true
			i++
			cur.WriteByte(s[i])
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			in = true
			cur.WriteByte(c)
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// isOurs reports whether argv is exactly what install writes for agent
// — CKPT hook AGENT, CKPT a program named ckpt — so that install may
// update it and uninstall remove it. A command that merely runs ckpt's
// hook among other things (ckpt hook claude-code && notify-send done, or
// with flags added) is the user's: see isCkptHook.
func isOurs(argv []string, agent string) bool {
	if len(argv) != 3 || argv[1] != "hook" || argv[2] != agent {
		return false
	}
	base := filepath.Base(argv[0])
	return base == "ckpt" || base == "ckpt.exe"
}

// isOursCommand reports whether a hook's shell command is exactly one
// install writes: its words are ours (see isOurs) and it is spelled as
// install spells it (no operators, redirections or other quoting).
func isOursCommand(cmd, agent string) bool {
	argv := shellFields(cmd)
	return isOurs(argv, agent) && cmd == hookCommand(argv[0], agent)
}

// isCkptHook reports whether argv runs `ckpt ... hook AGENT` at all —
// install's own entry, or a command of the user's that runs it (which
// install then does not double, and uninstall leaves alone).
func isCkptHook(argv []string, agent string) bool {
	if len(argv) < 3 {
		return false
	}
	base := filepath.Base(argv[0])
	if base != "ckpt" && base != "ckpt.exe" {
		return false
	}
	for i := 1; i+1 < len(argv); i++ {
		if argv[i] == "hook" {
			return argv[i+1] == agent
		}
	}
	return false
}

// found is a handler that runs ckpt's hook in a settings file's hooks
// object: its event, (group, handler) indexes and command, and whether
// it is exactly install's (ours) or a command of the user's. handler is
// -1 for an entry that is itself the handler (Cursor's hooks.json).
type found struct {
	event          string
	eventIdx       int
	group, handler int
	handlerNode    *jsonNode
	command        *jsonNode
	ours           bool
}

func ckptHandlers(src []byte, hooksN *jsonNode, agent string) []found {
	var out []found
	for ei, m := range hooksN.members {
		if m.val.kind != '[' {
			continue
		}
		for gi, g := range m.val.elems {
			hs := g.member("hooks")
			if hs == nil && g.kind == '{' && g.member("command") != nil {
				// Cursor's hooks.json: the entry is the handler.
				cmdN := g.member("command")
				cmd, ok := cmdN.str(src)
				if ok && isCkptHook(shellFields(cmd), agent) {
					out = append(out, found{event: m.key, eventIdx: ei, group: gi, handler: -1, handlerNode: g, command: cmdN,
						ours: isOursCommand(cmd, agent)})
				}
				continue
			}
			if hs == nil || hs.kind != '[' {
				continue
			}
			for hi, h := range hs.elems {
				cmdN := h.member("command")
				cmd, ok := cmdN.str(src)
				if ok && isCkptHook(shellFields(cmd), agent) {
					out = append(out, found{event: m.key, eventIdx: ei, group: gi, handler: hi, handlerNode: h, command: cmdN,
						ours: isOursCommand(cmd, agent)})
				}
			}
		}
	}
	return out
}

// Install merges ckpt's hook entries into an agent's settings file (see
// [SettingsFile]), creating it if needed. It is idempotent: entries
// already there are left as they are (or their command updated to
// opts.Command), and nothing else in the file changes. The file is
// replaced atomically, after a copy of it is kept in opts.BackupDir.
func Install(agent string, scope Scope, file string, opts InstallOptions) (*Change, error) {
	if opts.Command == "" {
		c, err := DefaultCommand()
		if err != nil {
			return nil, err
		}
		opts.Command = c
	}
	// ckpt knows its entries by a program named ckpt (see isOurs): an
	// entry of another name would be doubled by every install and never
	// removed by uninstall.
	if base := filepath.Base(opts.Command); base != "ckpt" && base != "ckpt.exe" {
		return nil, fmt.Errorf("the hook command %s is not a program named ckpt: ckpt would not know the entries as its own (install would add them again, uninstall would not remove them); install the binary as ckpt, or pass --command with a path to it named ckpt", opts.Command)
	}
	ch := &Change{Agent: agent, Scope: scope, File: file, Command: opts.Command, Added: []string{}, Updated: []string{}, Removed: []string{}}
	if agent == Codex && opts.Notify {
		return ch, codexNotifyInstall(file, opts, ch)
	}
	if agent == Codex {
		ch.Command = hookCommand(opts.Command, agent)
		return ch, codexHooksInstall(file, opts, ch)
	}
	if agent == OpenCode {
		return ch, opencodeInstall(file, opts, ch)
	}
	if agent == Copilot {
		return ch, copilotInstall(file, opts, ch)
	}
	if _, ok := Events[agent]; !ok {
		return nil, fmt.Errorf("unknown agent %q", agent)
	}
	return ch, editFile(file, opts, ch, func(src []byte) ([]byte, error) { return jsonInstall(src, agent, opts, ch) })
}

// Uninstall removes ckpt's entries from an agent's settings file, and the
// containers (an event's list, the hooks object) that are left empty.
func Uninstall(agent string, scope Scope, file string, opts InstallOptions) (*Change, error) {
	ch := &Change{Agent: agent, Scope: scope, File: file, Added: []string{}, Updated: []string{}, Removed: []string{}}
	if agent == Codex {
		return ch, codexHooksUninstall(file, opts, ch, false)
	}
	if agent == OpenCode {
		return ch, opencodeUninstall(file, opts, ch)
	}
	if agent == Copilot {
		return ch, copilotUninstall(file, opts, ch)
	}
	if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
		return ch, nil
	}
	if _, ok := Events[agent]; !ok {
		return nil, fmt.Errorf("unknown agent %q", agent)
	}
	return ch, editFile(file, opts, ch, func(src []byte) ([]byte, error) { return jsonUninstall(src, agent, ch) })
}

func parseSettings(src []byte, file string) (*jsonNode, error) {
	root, err := parseJSONSpans(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %v: fix it by hand first; ckpt changes only settings it can read", file, err)
	}
	if root.kind != '{' {
		return nil, fmt.Errorf("%s: not a JSON object", file)
	}
	return root, nil
}

func jsonInstall(src []byte, agent string, opts InstallOptions, ch *Change) ([]byte, error) {
	if len(bytes.TrimSpace(src)) > 0 {
		return jsonMerge(src, agent, opts, ch)
	}
	// A file ckpt makes is formatted as the agents write theirs
	// (JSON.stringify(settings, null, 2)); Cursor's hooks.json says
	// which version of the format it is.
	empty := "{}\n"
	if agent == Cursor {
		empty = `{"version": 1}` + "\n"
	}
	out, err := jsonMerge([]byte(empty), agent, opts, ch)
	if err != nil {
		return nil, err
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, out, "", "  "); err != nil {
		return out, nil
	}
	return append(bytes.TrimRight(pretty.Bytes(), "\n"), '\n'), nil
}

// jsonMerge adds ckpt's entries to a settings file's content, editing only
// the spans it adds or changes.
func jsonMerge(src []byte, agent string, opts InstallOptions, ch *Change) ([]byte, error) {
	st := detectStyle(src)
	want := hookCommand(opts.Command, agent)
	for _, event := range Events[agent] {
		root, err := parseSettings(src, ch.File)
		if err != nil {
			return nil, err
		}
		hooksN := root.member("hooks")
		if hooksN == nil {
			src = addMember(src, root, "hooks", struct{}{}, st)
			if root, err = parseSettings(src, ch.File); err != nil {
				return nil, err
			}
			hooksN = root.member("hooks")
		}
		if hooksN.kind != '{' {
			return nil, fmt.Errorf("%s: \"hooks\" is not an object: fix it by hand first", ch.File)
		}
		var group any = hookGroup{Hooks: []any{handlerFor(agent, event, want, opts)}}
		if toolEvents[event] {
			group = hookGroup{Matcher: editMatcher(agent), Hooks: []any{handlerFor(agent, event, want, opts)}}
		}
		if agent == Cursor {
			group = handlerFor(agent, event, want, opts)
		}
		evN := hooksN.member(event)
		if evN == nil {
			src = addMember(src, hooksN, event, []any{group}, st)
			ch.Added = append(ch.Added, event)
			continue
		}
		if evN.kind != '[' {
			return nil, fmt.Errorf("%s: hooks.%s is not a list: fix it by hand first", ch.File, event)
		}
		var mine, theirs []found
		for _, f := range ckptHandlers(src, hooksN, agent) {
			switch {
			case f.event != event:
			case f.ours:
				mine = append(mine, f)
			default:
				theirs = append(theirs, f)
			}
		}
		if len(mine) == 0 && len(theirs) > 0 {
			// The user's own command runs ckpt's hook (with flags, or
			// among other things): it is theirs, and a second entry
			// would checkpoint twice.
			cmd, _ := theirs[0].command.str(src)
			ch.Kept = append(ch.Kept, event+": "+cmd)
			continue
		}
		if len(mine) == 0 {
			src = addElem(src, evN, group, st)
			ch.Added = append(ch.Added, event)
			continue
		}
		// An entry as install writes it, with another ckpt binary, is
		// updated.
		if cur, _ := mine[0].command.str(src); cur != want {
			q, _ := json.Marshal(want)
			src = splice(src, mine[0].command.start, mine[0].command.end, string(q))
			ch.Updated = append(ch.Updated, event)
			continue
		}
		// Asked to run in the background: say so on the entry there.
		if asyncStop(agent, event, opts) {
			h := mine[0].handlerNode
			switch a := h.member("async"); {
			case a == nil:
				src = addMember(src, h, "async", true, st)
			case string(src[a.start:a.end]) != "true":
				src = splice(src, a.start, a.end, "true")
			default:
				continue
			}
			ch.Updated = append(ch.Updated, event)
		}
	}
	return src, nil
}

func jsonUninstall(src []byte, agent string, ch *Change) ([]byte, error) {
	removed := map[string]bool{}
	for {
		root, err := parseSettings(src, ch.File)
		if err != nil {
			return nil, err
		}
		hooksN := root.member("hooks")
		if hooksN == nil || hooksN.kind != '{' {
			break
		}
		var fs []found
		for _, f := range ckptHandlers(src, hooksN, agent) {
			if f.ours { // the user's own commands stay
				fs = append(fs, f)
			}
		}
		if len(fs) == 0 {
			for _, f := range ckptHandlers(src, hooksN, agent) {
				cmd, _ := f.command.str(src)
				ch.Kept = append(ch.Kept, f.event+": "+cmd)
			}
			break
		}
		// Remove the last one found (spans before it stay valid, but
		// re-parsing is simpler and the file is small).
		f := fs[len(fs)-1]
		evN := hooksN.members[f.eventIdx].val
		g := evN.elems[f.group]
		hs := g.member("hooks")
		onlyHooks := f.handler >= 0
		for _, m := range g.members {
			if m.key != "hooks" && m.key != "matcher" {
				onlyHooks = false
			}
		}
		switch {
		case f.handler >= 0 && (len(hs.elems) > 1 || !onlyHooks):
			src = removeElem(src, hs, f.handler)
		case len(evN.elems) > 1:
			src = removeElem(src, evN, f.group)
		case len(hooksN.members) > 1:
			src = removeMember(src, hooksN, f.eventIdx)
		default:
			src = removeMember(src, root, root.memberIndex("hooks"))
		}
		if !removed[f.event] {
			removed[f.event] = true
			ch.Removed = append(ch.Removed, f.event)
		}
	}
	// List events in the order install uses.
	var order []string
	for _, e := range Events[agent] {
		if removed[e] {
			order = append(order, e)
			delete(removed, e)
		}
	}
	for _, e := range ch.Removed {
		if removed[e] {
			order = append(order, e)
		}
	}
	ch.Removed = order
	return src, nil
}

// editFile applies edit to the file's content and, if that changes it,
// keeps a backup and replaces the file atomically, keeping its owner and
// mode (through a symlink, the file it leads to; see settingsTarget). If
// the file changes while being edited, it starts over.
func editFile(file string, opts InstallOptions, ch *Change, edit func([]byte) ([]byte, error)) error {
	target, err := settingsTarget(file, scopeProject(file, opts, ch))
	if err != nil {
		return err
	}
	removeStaleTemps(target)
	for attempt := 0; ; attempt++ {
		old, fi, err := readSettings(target)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		out, err := edit(bytes.Clone(old))
		if err != nil {
			return err
		}
		if exists && bytes.Equal(out, old) {
			return nil
		}
		ch.Changed = true
		if exists && ch.Backup == "" {
			if ch.Backup, err = backup(target, old, ch.Agent, opts.BackupDir); err != nil {
				return fmt.Errorf("back up %s: %w", target, err)
			}
		}
		again, _, err := readSettings(target)
		if (err == nil) != exists || !bytes.Equal(again, old) {
			if attempt < 3 {
				*ch = Change{Agent: ch.Agent, Scope: ch.Scope, File: ch.File, Command: ch.Command, Backup: ch.Backup,
					Added: []string{}, Updated: []string{}, Removed: []string{}}
				continue
			}
			return fmt.Errorf("%s keeps changing while ckpt edits it; try again", file)
		}
		return writeAtomic(target, out, fi, 0o644)
	}
}

// scopeProject is the project a workspace scope's file must stay in ("" for
// the user scope).
func scopeProject(file string, opts InstallOptions, ch *Change) string {
	if !ch.Scope.InWorkspace() {
		return ""
	}
	if opts.Project != "" {
		return opts.Project
	}
	return filepath.Dir(filepath.Dir(file)) // WS/.claude/settings.json
}

// ownFileInProject checks, before uninstall removes file, a file of
// ckpt's own (OpenCode's plugin, Copilot's hooks file) that it takes out
// whole, that in a workspace scope the directory it is removed from lies
// inside the project: a
// repository can ship .github/hooks as a link to the user's own hooks
// directory, and a project uninstall must not remove the user's file
// there. (A file that is itself a link is removed as a link.)
func ownFileInProject(file string, opts InstallOptions, ch *Change) error {
	if project := scopeProject(file, opts, ch); project != "" {
		dir, root := resolveExisting(filepath.Dir(file)), resolveExisting(project)
		if dir != root && !strings.HasPrefix(dir, root+string(filepath.Separator)) {
			return fmt.Errorf("%s leads out of the project, to %s (through a symlink): ckpt does not remove a file outside the project through a link the project holds; remove the link (or uninstall with --user)", file, filepath.Join(dir, filepath.Base(file)))
		}
	}
	return nil
}

// maxSettings bounds a settings file install reads.
const maxSettings = 16 << 20

// readSettings reads a settings file: a regular file only (a FIFO or a
// device there is an error, not a read that never ends), at most
// maxSettings bytes. fi is the file's.
func readSettings(file string) ([]byte, fs.FileInfo, error) {
	f, fi, err := ckpt.OpenRegularFile(file)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if fi.Size() > maxSettings {
		return nil, nil, fmt.Errorf("%s: %d bytes, more than a settings file holds (%d): ckpt leaves it alone", file, fi.Size(), maxSettings)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSettings+1))
	if err == nil && len(data) > maxSettings {
		err = fmt.Errorf("%s: grew past %d bytes while read: ckpt leaves it alone", file, maxSettings)
	}
	return data, fi, err
}

// settingsTarget returns the file install edits for file: file itself,
// or the file a symlink (or a chain of them, or a symlinked directory on
// the way) leads to, so a dotfiles repository keeps its link. With project
// set (the project scope), that file must lie inside the project: a
// repository can ship .claude/settings.json, or .claude, as a symlink to
// any file of the user's — ~/.docker/config.json — and install must not
// edit that. A symlink within the project is followed. A symlink that
// leads nowhere is refused (replacing it with a file would break it).
func settingsTarget(file, project string) (string, error) {
	target := file
	fi, err := os.Lstat(file)
	switch {
	case err == nil:
		real, err := filepath.EvalSymlinks(file)
		if err != nil {
			return "", fmt.Errorf("%s is a symlink that leads nowhere (%v): ckpt edits a settings file through a link, never the link itself; create the file it names, or replace the link with a file", file, unwrapPathErr(err))
		}
		target = real
		if fi.Mode()&fs.ModeSymlink == 0 && fi.IsDir() {
			return "", fmt.Errorf("%s is a directory, not a settings file", file)
		}
	case errors.Is(err, fs.ErrNotExist):
		// To be created: in the directory its path really leads to.
		target = resolveExisting(file)
	default:
		return "", err
	}
	if project == "" {
		return target, nil
	}
	root := resolveExisting(project)
	if target != root && !strings.HasPrefix(target, root+string(filepath.Separator)) {
		return "", fmt.Errorf("%s leads out of the project, to %s (through a symlink): ckpt does not write a file outside the project through a link the project holds; remove the link (or install with --user)", file, target)
	}
	return target, nil
}

// resolveExisting resolves the symlinks of p's longest existing prefix.
func resolveExisting(p string) string {
	rest := ""
	for d := p; ; d = filepath.Dir(d) {
		if real, err := filepath.EvalSymlinks(d); err == nil {
			return filepath.Join(real, rest)
		}
		if d == filepath.Dir(d) {
			return p
		}
		rest = filepath.Join(filepath.Base(d), rest)
	}
}

func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func backup(file string, data []byte, agent, dir string) (string, error) {
	if dir == "" {
		sd, err := ckpt.StateDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(sd, "hook-backups")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	name := fmt.Sprintf("%s-%s-%s", agent, time.Now().UTC().Format("20060102T150405.000000000Z"), filepath.Base(file))
	p := filepath.Join(dir, name)
	return p, os.WriteFile(p, data, 0o600)
}

// writeAtomic replaces file with data: a temporary file in the same
// directory (named for this process, see removeStaleTemps), synced,
// renamed over it. The new file has old's owner and mode (old: the file
// replaced), or mode when there was none; an owner it cannot keep (another
// user's file, when ckpt does not run as root) is an error, and nothing is
// replaced.
func writeAtomic(file string, data []byte, old fs.FileInfo, mode fs.FileMode) error {
	dir := filepath.Dir(file)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if old != nil {
		mode = old.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	}
	f, err := os.CreateTemp(dir, tempPrefix(file)+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := keepOwner(f, old, file); err != nil {
		return err
	}
	if err := f.Chmod(mode); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, file); err != nil {
		return err
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// keepOwner gives the temporary file f the owner of old, the file it
// replaces, when that is not who runs ckpt.
func keepOwner(f *os.File, old fs.FileInfo, file string) error {
	if old == nil {
		return nil
	}
	uid, gid, ok := fileOwner(old)
	if !ok {
		return nil
	}
	if uid == os.Geteuid() && gid == os.Getegid() {
		return nil
	}
	if err := f.Chown(uid, gid); err != nil {
		return fmt.Errorf("%s belongs to uid %d (gid %d), and ckpt cannot keep that owner on the new file (%v): it leaves the file alone; install as its owner", file, uid, gid, unwrapPathErr(err))
	}
	return nil
}

// tempPrefix is the name of file's temporary files, with this process's
// id, so that one a killed install left can be told from one a running
// install is writing.
func tempPrefix(file string) string {
	return fmt.Sprintf(".%s.ckpt-tmp-%d-", filepath.Base(file), os.Getpid())
}

// removeStaleTemps removes the temporary files an install killed before
// its rename left beside file (those of processes no longer running).
func removeStaleTemps(file string) {
	pattern := "." + filepath.Base(file) + ".ckpt-tmp-"
	des, err := os.ReadDir(filepath.Dir(file))
	if err != nil {
		return
	}
	for _, de := range des {
		rest, ok := strings.CutPrefix(de.Name(), pattern)
		if !ok || !de.Type().IsRegular() {
			continue
		}
		pidStr, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if processGone(pid) {
			os.Remove(filepath.Join(filepath.Dir(file), de.Name()))
		}
	}
}

// Installed is what [Status] finds in a settings file.
type Installed struct {
	Agent  string `json:"agent"`
	Scope  Scope  `json:"scope"`
	File   string `json:"file"`
	Exists bool   `json:"exists"`
	// Events have a ckpt hook; Commands are the commands they run.
	Events   []string `json:"events"`
	Commands []string `json:"commands"`
	// Missing are events install would add.
	Missing []string `json:"missing"`
	// Background are events whose ckpt hook the agent runs in the
	// background ("async": true).
	Background []string `json:"background,omitempty"`
	// Other is another notify program Codex runs.
	Other string `json:"other,omitempty"`
	// Config is Codex's config.toml, where it records which hooks it
	// trusts: Trusted are the events whose ckpt hook it trusts (the
	// recorded hash matches), Untrusted those it skips.
	Config    string   `json:"config,omitempty"`
	Trusted   []string `json:"trusted,omitempty"`
	Untrusted []string `json:"untrusted,omitempty"`
	Error     string   `json:"error,omitempty"`
}

// Status reports ckpt's entries in an agent's settings file.
func Status(agent string, scope Scope, file string) *Installed {
	in := &Installed{Agent: agent, Scope: scope, File: file, Events: []string{}, Commands: []string{}, Missing: []string{}}
	if agent == Codex {
		codexHooksStatus(in)
		return in
	}
	if agent == OpenCode {
		opencodeStatus(in)
		return in
	}
	if agent == Copilot {
		copilotStatus(in)
		return in
	}
	src, _, err := readSettings(file)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			in.Error = err.Error()
		}
		in.Missing = append(in.Missing, Events[agent]...)
		return in
	}
	in.Exists = true
	have := jsonStatus(src, file, agent, in)
	for _, e := range Events[agent] {
		if !have[e] {
			in.Missing = append(in.Missing, e)
		}
	}
	return in
}

// jsonStatus adds the events and commands of ckpt's hooks in a JSON
// settings file to in, and returns the events that have one.
func jsonStatus(src []byte, file, agent string, in *Installed) map[string]bool {
	have := map[string]bool{}
	if root, err := parseSettings(src, file); err != nil {
		in.Error = err.Error()
	} else if hooksN := root.member("hooks"); hooksN != nil && hooksN.kind == '{' {
		seen := map[string]bool{}
		var others []string
		for _, f := range ckptHandlers(src, hooksN, agent) {
			if !have[f.event] {
				have[f.event] = true
				others = append(others, f.event)
			}
			if a := f.handlerNode.member("async"); a != nil && string(src[a.start:a.end]) == "true" && !slices.Contains(in.Background, f.event) {
				in.Background = append(in.Background, f.event)
			}
			if c, _ := f.command.str(src); !seen[c] {
				seen[c] = true
				in.Commands = append(in.Commands, c)
			}
		}
		// Events in install's order, then any others ckpt's hook is on.
		for _, e := range Events[agent] {
			if have[e] {
				in.Events = append(in.Events, e)
			}
		}
		for _, e := range others {
			if !slices.Contains(in.Events, e) {
				in.Events = append(in.Events, e)
			}
		}
	}
	return have
}

// removeOwnFile uninstalls a file ckpt writes whole for an agent (Copilot
// CLI's hooks file, OpenCode's plugin): never one out of the project for
// a project install; a missing file is nothing to do. judge tells whether
// the content is ckpt's and its events: removed (ckpt's; the file goes,
// kept in the backups first) or, for a file that is not ckpt's, kept as
// they are (ch.Kept, "EVENT: COMMAND").
func removeOwnFile(agent, file string, opts InstallOptions, ch *Change, judge func(src []byte) (ours bool, events []string)) error {
	if err := ownFileInProject(file, opts, ch); err != nil {
		return err
	}
	src, _, err := readSettings(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	ours, events := judge(src)
	if !ours {
		ch.Kept = append(ch.Kept, events...)
		return nil
	}
	if ch.Backup, err = backup(file, src, agent, opts.BackupDir); err != nil {
		return fmt.Errorf("back up %s: %w", file, err)
	}
	if err := os.Remove(file); err != nil {
		return err
	}
	ch.Changed = true
	ch.Removed = append(ch.Removed, events...)
	return nil
}
