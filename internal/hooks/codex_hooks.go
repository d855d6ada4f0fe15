package hooks

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
)

// Codex (0.169 and later) reads hooks from $CODEX_HOME/hooks.json, in
// Claude Code's shape, but runs a user's hook only if $CODEX_HOME/
// config.toml trusts it:
//
//	[hooks.state."/home/u/.codex/hooks.json:stop:1:0"]
//	trusted_hash = "sha256:…"
//
// The key is the declaring file's absolute path, the event's snake-case
// label and the hook's group and handler indexes in that event's list; the
// hash is over the hook's normalized declaration (see [codexHookHash]). A
// hook without that entry, or with a hash that no longer matches, is
// silently skipped. Install therefore writes ckpt's entries into
// hooks.json (as for Claude Code) and then the trust of exactly those
// entries, at the indexes they landed on, into config.toml — appending one
// table per hook and checking, by decoding the file before and after, that
// nothing else changed. Uninstall removes both, and ckpt's legacy notify
// line; a trust entry whose hash is not that of ckpt's hook is never
// touched.

// codexEventLabels are the labels Codex's trust keys and hashes use.
var codexEventLabels = map[string]string{
	"PreToolUse": "pre_tool_use", "PermissionRequest": "permission_request", "PostToolUse": "post_tool_use",
	"PreCompact": "pre_compact", "PostCompact": "post_compact", "SessionStart": "session_start",
	"SessionEnd": "session_end", "UserPromptSubmit": "user_prompt_submit", "SubagentStart": "subagent_start",
	"SubagentStop": "subagent_stop", "Stop": "stop",
}

// codexSessionEndTimeout is the longest Codex gives a SessionEnd hook, in
// seconds (it clamps a longer timeout, with a warning).
const codexSessionEndTimeout = 3

// codexDecl is a command hook as declared in hooks.json: the fields its
// trust hash covers.
type codexDecl struct {
	Type                   string  `json:"type"`
	Command                string  `json:"command"`
	Timeout                *int64  `json:"timeout"`
	Async                  *bool   `json:"async"`
	StatusMessage          *string `json:"statusMessage"`
	AdditionalContextLimit *uint64 `json:"additionalContextLimit"`
}

// codexHookHash returns the hash Codex compares a hook's trusted_hash
// with: "sha256:" and the hex SHA-256 of the compact JSON, keys sorted and
// nothing escaped that need not be, of {"event_name": LABEL, "matcher":
// M, "hooks": [HANDLER]} — the handler normalized as Codex normalizes it
// (timeout and async always present, the timeout defaulted and clamped;
// statusMessage if set; additionalContextLimit if set, not the default
// 2500 and the event can add context), the matcher left out where Codex
// ignores it (UserPromptSubmit, Stop) or none is set. This is Codex's
// internal format (codex-rs hooks discovery, command_hook_hash): a Codex
// that changes it sees ckpt's hooks as modified and skips them.
func codexHookHash(event string, matcher *string, d codexDecl) string {
	label := codexEventLabels[event]
	timeout := int64(600)
	if event == "SessionEnd" {
		timeout = 1
	}
	if d.Timeout != nil {
		timeout = *d.Timeout
	}
	timeout = max(timeout, 1)
	if event == "SessionEnd" {
		timeout = min(timeout, codexSessionEndTimeout)
	}
	h := map[string]any{"type": "command", "command": d.Command, "timeout": timeout, "async": d.Async != nil && *d.Async}
	if d.StatusMessage != nil {
		h["statusMessage"] = *d.StatusMessage
	}
	switch event {
	case "PreToolUse", "PostToolUse", "SessionStart", "UserPromptSubmit", "SubagentStart":
		if l := d.AdditionalContextLimit; l != nil && *l != 2500 {
			h["additionalContextLimit"] = *l
		}
	}
	id := map[string]any{"event_name": label, "hooks": []any{h}}
	if matcher != nil && event != "UserPromptSubmit" && event != "Stop" {
		id["matcher"] = *matcher
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(id)
	sum := sha256.Sum256(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// codexTrust is the trust entry of one of ckpt's hooks in hooks.json.
type codexTrust struct {
	Event, Key, Hash string
}

// codexConfigFile is the config.toml beside a hooks.json.
func codexConfigFile(hooksFile string) string {
	return filepath.Join(filepath.Dir(hooksFile), "config.toml")
}

// codexKeySource is hooks.json's path as Codex spells it in trust keys:
// Codex resolves the symlinks of $CODEX_HOME when it is set (not of
// ~/.codex).
func codexKeySource(hooksFile string) string {
	p, err := filepath.Abs(hooksFile)
	if err != nil {
		p = hooksFile
	}
	if os.Getenv("CODEX_HOME") != "" {
		if d, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
			p = filepath.Join(d, filepath.Base(p))
		}
	}
	return p
}

// codexTrusts returns the trust entries of ckpt's own hooks (exactly as
// install writes them) in a hooks.json's content, at the indexes they are
// at.
func codexTrusts(src []byte, keySource string, all bool) []codexTrust {
	root, err := parseJSONSpans(src)
	if err != nil || root.kind != '{' {
		return nil
	}
	hooksN := root.member("hooks")
	if hooksN == nil || hooksN.kind != '{' {
		return nil
	}
	var out []codexTrust
	for _, f := range ckptHandlers(src, hooksN, Codex) {
		label, ok := codexEventLabels[f.event]
		if !ok || !f.ours && !all {
			continue
		}
		var d codexDecl
		if json.Unmarshal(src[f.handlerNode.start:f.handlerNode.end], &d) != nil || d.Type != "command" {
			continue
		}
		var matcher *string
		if m, ok := hooksN.members[f.eventIdx].val.elems[f.group].member("matcher").str(src); ok {
			matcher = &m
		}
		out = append(out, codexTrust{Event: f.event, Hash: codexHookHash(f.event, matcher, d),
			Key: fmt.Sprintf("%s:%s:%d:%d", keySource, label, f.group, f.handler)})
	}
	// In install's order of events, then the others.
	rank := func(e string) int {
		if i := slices.Index(Events[Codex], e); i >= 0 {
			return i
		}
		return len(Events[Codex])
	}
	slices.SortStableFunc(out, func(a, b codexTrust) int { return rank(a.Event) - rank(b.Event) })
	return out
}

// trustedHash returns the trusted_hash config.toml records for key, and
// whether it has a table for key at all.
func trustedHash(m map[string]any, key string) (string, bool) {
	h, _ := m["hooks"].(map[string]any)
	st, _ := h["state"].(map[string]any)
	e, ok := st[key].(map[string]any)
	if !ok {
		return "", false
	}
	s, _ := e["trusted_hash"].(string)
	return s, true
}

// withTrust returns m (decoded afresh by the caller) with key's
// trusted_hash set to hash, or removed with hash "".
func withTrust(m map[string]any, key, hash string) (map[string]any, error) {
	sub := func(parent map[string]any, k string) (map[string]any, error) {
		v, ok := parent[k]
		if !ok {
			c := map[string]any{}
			parent[k] = c
			return c, nil
		}
		c, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%q is not a table", k)
		}
		return c, nil
	}
	h, err := sub(m, "hooks")
	if err != nil {
		return nil, err
	}
	st, err := sub(h, "state")
	if err != nil {
		return nil, err
	}
	e, err := sub(st, key)
	if err != nil {
		return nil, err
	}
	if hash != "" {
		e["trusted_hash"] = hash
		return m, nil
	}
	delete(e, "trusted_hash")
	if len(e) == 0 {
		delete(st, key)
	}
	return m, nil
}

// pruneHooks drops an empty hooks.state and an empty hooks table: a file
// whose last trust entry is removed no longer has them.
func pruneHooks(m map[string]any) map[string]any {
	h, ok := m["hooks"].(map[string]any)
	if !ok {
		return m
	}
	if st, ok := h["state"].(map[string]any); ok && len(st) == 0 {
		delete(h, "state")
	}
	if len(h) == 0 {
		delete(m, "hooks")
	}
	return m
}

func trustHeader(key string) string { return "[hooks.state." + tomlString(key) + "]" }

var trustedHashRE = lazyRE(`^[ \t]*trusted_hash[ \t]*=`)

// trustBlock finds key's table header line (as Codex and ckpt write it)
// and the trusted_hash line in it (-1 if none) among ls.
func trustBlock(ls [][]byte, key string) (header, line int) {
	header, line = -1, -1
	want := trustHeader(key)
	for i, l := range ls {
		if string(bytes.TrimSpace(l)) != want {
			continue
		}
		header = i
		for j := i + 1; j < len(ls); j++ {
			t := bytes.TrimSpace(ls[j])
			if len(t) > 0 && t[0] == '[' {
				break
			}
			if trustedHashRE().Match(ls[j]) {
				line = j
				break
			}
		}
		return header, line
	}
	return -1, -1
}

func joinLines(ls [][]byte) []byte { return bytes.Join(ls, nil) }

// checkTOML reports whether out decodes to want (empty hooks tables
// aside).
func checkTOML(out []byte, want map[string]any, file string) bool {
	got, err := decodeTOML(out, file)
	return err == nil && reflect.DeepEqual(pruneHooks(got), pruneHooks(want))
}

// setTrust records each entry's trusted_hash in config.toml's content:
// the line replaced in a table already there, else a table appended.
func setTrust(src []byte, entries []codexTrust, ch *Change) ([]byte, error) {
	for _, e := range entries {
		m, err := decodeTOML(src, ch.File)
		if err != nil {
			return nil, err
		}
		cur, has := trustedHash(m, e.Key)
		if cur == e.Hash {
			continue
		}
		want, err := withTrust(m, e.Key, e.Hash)
		if err != nil {
			return nil, fmt.Errorf("%s: cannot record the trust of ckpt's %s hook: %v: trust it in Codex (/hooks) instead", ch.File, e.Event, err)
		}
		line := "trusted_hash = " + tomlString(e.Hash) + "\n"
		var out []byte
		if has {
			ls := lines(src)
			h, l := trustBlock(ls, e.Key)
			switch {
			case h < 0:
				return nil, fmt.Errorf("%s: cannot find the [hooks.state] table of ckpt's %s hook (%s): trust it in Codex (/hooks) instead", ch.File, e.Event, e.Key)
			case l >= 0:
				if !bytes.HasSuffix(ls[l], []byte("\n")) {
					line = strings.TrimSuffix(line, "\n")
				}
				ls[l] = []byte(line)
			default:
				if !bytes.HasSuffix(ls[h], []byte("\n")) {
					ls[h] = append(bytes.Clone(ls[h]), '\n')
				}
				ls = append(ls[:h+1], append([][]byte{[]byte(line)}, ls[h+1:]...)...)
			}
			out = joinLines(ls)
			ch.Updated = append(ch.Updated, e.Event)
		} else {
			out = bytes.Clone(src)
			if len(out) > 0 {
				if !bytes.HasSuffix(out, []byte("\n")) {
					out = append(out, '\n')
				}
				out = append(out, '\n')
			}
			out = append(out, trustHeader(e.Key)+"\n"+line...)
			ch.Added = append(ch.Added, e.Event)
		}
		if !checkTOML(out, want, ch.File) {
			return nil, fmt.Errorf("%s: recording the trust of ckpt's %s hook would change other settings: trust it in Codex (/hooks) instead", ch.File, e.Event)
		}
		src = out
	}
	return src, nil
}

// removeTrust removes each entry's trust from config.toml's content, if
// it is that hook's (the hash matches): the table, when trusted_hash is
// all it holds (with the blank line before it), else that line.
func removeTrust(src []byte, entries []codexTrust, ch *Change) ([]byte, error) {
	for _, e := range entries {
		m, err := decodeTOML(src, ch.File)
		if err != nil {
			return nil, err
		}
		if cur, _ := trustedHash(m, e.Key); cur != e.Hash {
			continue
		}
		want, err := withTrust(m, e.Key, "")
		if err != nil {
			return nil, err
		}
		ls := lines(src)
		h, l := trustBlock(ls, e.Key)
		if h < 0 || l < 0 {
			return nil, fmt.Errorf("%s: cannot find the trust of ckpt's %s hook (%s): remove it by hand", ch.File, e.Event, e.Key)
		}
		var out []byte
		if l == h+1 {
			from := h
			if h > 0 && len(bytes.TrimSpace(ls[h-1])) == 0 {
				from--
			}
			out = joinLines(append(append([][]byte{}, ls[:from]...), ls[l+1:]...))
			if !checkTOML(out, want, ch.File) {
				out = nil
			}
		}
		if out == nil {
			out = joinLines(append(append([][]byte{}, ls[:l]...), ls[l+1:]...))
			if !checkTOML(out, want, ch.File) {
				return nil, fmt.Errorf("%s: removing the trust of ckpt's %s hook would change other settings: remove %s by hand", ch.File, e.Event, trustHeader(e.Key))
			}
		}
		src = out
		ch.Removed = append(ch.Removed, e.Event)
	}
	return src, nil
}

// readOptional reads a settings file, nil if there is none.
func readOptional(file string) ([]byte, bool, error) {
	src, _, err := readSettings(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	return src, err == nil, err
}

// codexHooksInstall writes ckpt's hooks into hooks.json and their trust
// into config.toml, replacing ckpt's legacy notify line there. A notify
// program of the user's that runs ckpt's hook is theirs: install leaves
// both files as they are (the hooks would record every turn twice).
func codexHooksInstall(file string, opts InstallOptions, ch *Change) error {
	conf := codexConfigFile(file)
	csrc, cexists, err := readOptional(conf)
	if err != nil {
		return err
	}
	m, err := decodeTOML(csrc, conf)
	if err != nil {
		return err
	}
	if argv, ok := notifyArgv(m["notify"]); ok && isCkptHook(argv, Codex) && !isOurs(argv, Codex) {
		ch.Kept = append(ch.Kept, "notify: "+formatNotify(m["notify"]))
		return nil
	}
	if err := editFile(file, opts, ch, func(src []byte) ([]byte, error) { return jsonInstall(src, Codex, opts, ch) }); err != nil {
		return err
	}
	src, _, err := readSettings(file)
	if err != nil {
		return err
	}
	entries := codexTrusts(src, codexKeySource(file), false)
	if len(entries) == 0 && !cexists {
		return nil // nothing to trust, and no config.toml to make
	}
	cc := &Change{Agent: Codex, Scope: ch.Scope, File: conf}
	err = editFile(conf, opts, cc, func(src []byte) ([]byte, error) {
		out, err := removeOurNotify(src, cc)
		if err != nil {
			return nil, err
		}
		return setTrust(out, entries, cc)
	})
	mergeConfigChange(ch, cc)
	if err != nil {
		return fmt.Errorf("ckpt's hooks are in %s, but Codex skips them until they are trusted: %w", file, err)
	}
	return nil
}

// codexHooksUninstall removes ckpt's hooks from hooks.json, their trust
// and (unless keepNotify) ckpt's legacy notify line from config.toml.
func codexHooksUninstall(file string, opts InstallOptions, ch *Change, keepNotify bool) error {
	src, exists, err := readOptional(file)
	if err != nil {
		return err
	}
	var entries []codexTrust
	if exists {
		entries = codexTrusts(src, codexKeySource(file), false)
		if err := editFile(file, opts, ch, func(src []byte) ([]byte, error) { return jsonUninstall(src, Codex, ch) }); err != nil {
			return err
		}
	}
	conf := codexConfigFile(file)
	if _, exists, err := readOptional(conf); err != nil || !exists {
		return err
	}
	cc := &Change{Agent: Codex, Scope: ch.Scope, File: conf}
	err = editFile(conf, opts, cc, func(src []byte) ([]byte, error) {
		if !keepNotify {
			var err error
			if src, err = codexUninstall(src, cc); err != nil {
				return nil, err
			}
		}
		return removeTrust(src, entries, cc)
	})
	mergeConfigChange(ch, cc)
	return err
}

// removeOurNotify removes ckpt's own notify line (never another's).
func removeOurNotify(src []byte, cc *Change) ([]byte, error) {
	m, err := decodeTOML(src, cc.File)
	if err != nil {
		return nil, err
	}
	if argv, ok := notifyArgv(m["notify"]); !ok || !isOurs(argv, Codex) {
		return src, nil
	}
	return codexUninstall(src, cc)
}

// mergeConfigChange adds what an edit of config.toml did to ch: the
// trust entries written or removed, the notify line removed.
func mergeConfigChange(ch, cc *Change) {
	if !cc.Changed {
		return
	}
	ch.Changed = true
	ch.Config, ch.ConfigBackup = cc.File, cc.Backup
	ch.Trusted = append(ch.Trusted, cc.Added...)
	ch.Trusted = append(ch.Trusted, cc.Updated...)
	for _, e := range cc.Removed {
		if e == "notify" {
			ch.Removed = append(ch.Removed, "notify")
		} else {
			ch.Untrusted = append(ch.Untrusted, e)
		}
	}
	ch.Kept = append(ch.Kept, cc.Kept...)
}

// codexHooksStatus reports ckpt's hooks in hooks.json, whether config.toml
// trusts each (the hash matches), and a legacy notify line.
func codexHooksStatus(in *Installed) {
	src, exists, err := readOptional(in.File)
	have := map[string]bool{}
	switch {
	case err != nil:
		in.Error = err.Error()
	case exists:
		in.Exists = true
		have = jsonStatus(src, in.File, Codex, in)
	}
	conf := codexConfigFile(in.File)
	in.Config = conf
	csrc, cexists, err := readOptional(conf)
	var m map[string]any
	if err == nil && cexists {
		in.Exists = true
		m, err = decodeTOML(csrc, conf)
	}
	if err != nil && in.Error == "" {
		in.Error = err.Error()
	}
	for _, t := range codexTrusts(src, codexKeySource(in.File), true) {
		if cur, _ := trustedHash(m, t.Key); cur == t.Hash {
			in.Trusted = appendOnce(in.Trusted, t.Event)
		} else {
			in.Untrusted = appendOnce(in.Untrusted, t.Event)
		}
	}
	for _, e := range Events[Codex] {
		if !have[e] {
			in.Missing = append(in.Missing, e)
		}
	}
	if v, ok := m["notify"]; ok {
		if argv, ok := notifyArgv(v); ok && isCkptHook(argv, Codex) {
			in.Events = append(in.Events, "notify")
			in.Commands = append(in.Commands, strings.Join(argv, " "))
		} else {
			in.Other = formatNotify(v)
		}
	}
}

func appendOnce(list []string, s string) []string {
	for _, e := range list {
		if e == s {
			return list
		}
	}
	return append(list, s)
}
