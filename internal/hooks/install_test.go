package hooks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

const testCommand = "/opt/ckpt/bin/ckpt"

func installOpts(t *testing.T) InstallOptions {
	return InstallOptions{Command: testCommand, BackupDir: filepath.Join(t.TempDir(), "backups")}
}

// settingsCopy copies a recorded settings file to a temporary path.
func settingsCopy(t *testing.T, fixture, name string) (string, []byte) {
	t.Helper()
	orig, err := os.ReadFile(filepath.Join("testdata", "settings", fixture))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, orig, 0o640); err != nil {
		t.Fatal(err)
	}
	return p, orig
}

func read(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// stripComments removes // and /* */ comments outside strings (Gemini
// CLI's settings allow them) so encoding/json can check the result.
func stripComments(src []byte) []byte {
	var out []byte
	inStr := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case inStr:
			out = append(out, c)
			if c == '\\' && i+1 < len(src) {
				i++
				out = append(out, src[i])
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
			out = append(out, c)
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			out = append(out, '\n')
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(string(src[i+2:]), "*/")
			i += 2 + end + 1
		default:
			out = append(out, c)
		}
	}
	return out
}

func decode(t *testing.T, src []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(stripComments(src), &m); err != nil {
		t.Fatalf("not valid JSON: %v\n%s", err, src)
	}
	return m
}

// The round trip every agent's settings must survive: install adds ckpt's
// entries (and nothing else changes), installing again changes nothing,
// uninstall gives back the original bytes.
func TestInstallUninstallRoundTrip(t *testing.T) {
	for _, c := range []struct {
		agent, fixture, name string
	}{
		{ClaudeCode, "claude-settings.json", ".claude/settings.json"},
		{Gemini, "gemini-settings.json", ".gemini/settings.json"},
	} {
		t.Run(c.agent, func(t *testing.T) {
			p, orig := settingsCopy(t, c.fixture, c.name)
			opts := installOpts(t)
			ch, err := Install(c.agent, ScopeProject, p, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !ch.Changed || !reflect.DeepEqual(ch.Added, Events[c.agent]) || len(ch.Updated) != 0 {
				t.Fatalf("install: %+v", ch)
			}
			if b := read(t, ch.Backup); string(b) != string(orig) {
				t.Fatalf("backup %s differs from the original", ch.Backup)
			}
			once := read(t, p)
			if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
				t.Errorf("mode %v, want 0640 kept", fi.Mode().Perm())
			}

			// Everything but hooks is as it was; the user's hooks are all
			// still there, ckpt's follow them.
			before, after := decode(t, orig), decode(t, once)
			bh, ah := before["hooks"].(map[string]any), after["hooks"].(map[string]any)
			delete(before, "hooks")
			delete(after, "hooks")
			if !reflect.DeepEqual(before, after) {
				t.Fatalf("other settings changed:\n%v\n%v", before, after)
			}
			for ev, v := range bh {
				got := ah[ev]
				if list, ok := v.([]any); ok {
					if !reflect.DeepEqual(got.([]any)[:len(list)], list) {
						t.Fatalf("hooks.%s changed: %v", ev, got)
					}
				} else if !reflect.DeepEqual(got, v) {
					t.Fatalf("hooks.%s changed: %v", ev, got)
				}
			}
			for _, ev := range Events[c.agent] {
				groups := ah[ev].([]any)
				last := groups[len(groups)-1].(map[string]any)["hooks"].([]any)[0].(map[string]any)
				if last["command"] != testCommand+" hook "+c.agent || last["type"] != "command" {
					t.Fatalf("hooks.%s: %v", ev, last)
				}
			}
			st := Status(c.agent, ScopeProject, p)
			if !reflect.DeepEqual(st.Events, Events[c.agent]) || len(st.Missing) != 0 || st.Commands[0] != testCommand+" hook "+c.agent {
				t.Fatalf("status %+v", st)
			}

			ch, err = Install(c.agent, ScopeProject, p, opts)
			if err != nil {
				t.Fatal(err)
			}
			if ch.Changed || len(ch.Added) != 0 || string(read(t, p)) != string(once) {
				t.Fatalf("second install changed the file: %+v", ch)
			}

			ch, err = Uninstall(c.agent, ScopeProject, p, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !ch.Changed || !reflect.DeepEqual(ch.Removed, Events[c.agent]) {
				t.Fatalf("uninstall: %+v", ch)
			}
			if got := read(t, p); string(got) != string(orig) {
				t.Fatalf("after install and uninstall:\n%s\nwant the original:\n%s", got, orig)
			}
			ch, err = Uninstall(c.agent, ScopeProject, p, opts)
			if err != nil || ch.Changed {
				t.Fatalf("second uninstall: %+v, %v", ch, err)
			}
			if st := Status(c.agent, ScopeProject, p); len(st.Events) != 0 {
				t.Fatalf("status after uninstall %+v", st)
			}
		})
	}
}

// Files in other shapes: none yet, one line, empty hooks, ckpt's entry
// sharing a group with the user's, a customized ckpt command.
func TestInstallShapes(t *testing.T) {
	opts := installOpts(t)
	dir := t.TempDir()

	// No file: created; uninstall leaves an empty object.
	p := filepath.Join(dir, "new", ".claude", "settings.json")
	if _, err := Install(ClaudeCode, ScopeProject, p, opts); err != nil {
		t.Fatal(err)
	}
	m := decode(t, read(t, p))
	if len(m) != 1 || len(m["hooks"].(map[string]any)) != len(Events[ClaudeCode]) {
		t.Fatalf("new file: %s", read(t, p))
	}
	if ch, _ := Uninstall(ClaudeCode, ScopeProject, p, opts); ch.Backup == "" {
		t.Fatal("no backup")
	}
	if got := string(read(t, p)); got != "{}\n" {
		t.Fatalf("after uninstall: %q", got)
	}

	for _, c := range []struct{ name, orig, after string }{
		{"one line", `{"model":"opus","permissions":{"allow":["Read"]}}`, ""},
		{"one line with hooks", `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}`, ""},
		{"tabs", "{\n\t\"model\": \"opus\"\n}\n", ""},
		{"empty", "", "{}\n"},
		// An empty container that was there before is removed too (it
		// holds nothing, so nothing is lost).
		{"empty hooks", "{\n  \"hooks\": {},\n  \"model\": \"opus\"\n}\n", "{\n  \"model\": \"opus\"\n}\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "settings.json")
			os.WriteFile(p, []byte(c.orig), 0o644)
			if _, err := Install(ClaudeCode, ScopeProject, p, opts); err != nil {
				t.Fatal(err)
			}
			once := read(t, p)
			decode(t, once)
			if strings.Contains(c.orig, "\t") && !strings.Contains(string(once), "\n\t\t\"SessionStart\"") {
				t.Errorf("not indented with tabs:\n%s", once)
			}
			if _, err := Install(ClaudeCode, ScopeProject, p, opts); err != nil || string(read(t, p)) != string(once) {
				t.Fatalf("second install changed:\n%s", read(t, p))
			}
			if _, err := Uninstall(ClaudeCode, ScopeProject, p, opts); err != nil {
				t.Fatal(err)
			}
			want := c.after
			if want == "" {
				want = c.orig
			}
			if got := string(read(t, p)); got != want {
				t.Fatalf("after uninstall %q, want %q (installed: %s)", got, want, once)
			}
		})
	}

	// A command of the user's that runs ckpt's hook with a flag added is
	// theirs: install adds no second one for that event, and uninstall
	// leaves it.
	p = filepath.Join(dir, "shared.json")
	shared := `{
  "hooks": {
    "Stop": [
      {
        "hooks": [
          { "type": "command", "command": "say done" },
          { "type": "command", "command": "ckpt hook claude-code --strict" }
        ]
      }
    ]
  }
}
`
	os.WriteFile(p, []byte(shared), 0o644)
	// A customized ckpt command is left as it is.
	ch, err := Install(ClaudeCode, ScopeProject, p, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Updated) != 0 || reflect.DeepEqual(ch.Added, Events[ClaudeCode]) || !reflect.DeepEqual(ch.Kept, []string{"Stop: ckpt hook claude-code --strict"}) ||
		strings.Count(string(read(t, p)), "hook claude-code") != len(Events[ClaudeCode]) {
		t.Fatalf("install over a customized entry: %+v\n%s", ch, read(t, p))
	}
	if ch, err := Uninstall(ClaudeCode, ScopeProject, p, opts); err != nil || !reflect.DeepEqual(ch.Kept, []string{"Stop: ckpt hook claude-code --strict"}) {
		t.Fatalf("%+v, %v", ch, err)
	}
	if got := string(read(t, p)); got != shared {
		t.Fatalf("got\n%s\nwant\n%s", got, shared)
	}

	// An entry as install writes it, from another ckpt binary, is updated.
	p = filepath.Join(dir, "moved.json")
	os.WriteFile(p, []byte(`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/old/ckpt hook claude-code", "timeout": 30}]}]}}`), 0o644)
	ch, err = Install(ClaudeCode, ScopeProject, p, opts)
	if err != nil || !reflect.DeepEqual(ch.Updated, []string{"Stop"}) {
		t.Fatalf("%+v, %v", ch, err)
	}
	if !strings.Contains(string(read(t, p)), `"command": "/opt/ckpt/bin/ckpt hook claude-code"`) {
		t.Fatalf("%s", read(t, p))
	}
}

// A settings file ckpt cannot read is left alone, and so is a symlink:
// the file it points to is edited.
func TestInstallRefusesAndFollowsSymlinks(t *testing.T) {
	opts := installOpts(t)
	dir := t.TempDir()
	for _, bad := range []string{`{"hooks": `, `["not", "an", "object"]`, `{"hooks": []}`, `{"hooks": {"Stop": {}}}`} {
		p := filepath.Join(dir, "bad.json")
		os.WriteFile(p, []byte(bad), 0o644)
		if _, err := Install(ClaudeCode, ScopeProject, p, opts); err == nil {
			t.Errorf("installed into %q", bad)
		}
		if got := string(read(t, p)); got != bad {
			t.Errorf("changed %q to %q", bad, got)
		}
	}

	real, orig := settingsCopy(t, "claude-settings.json", "dotfiles/claude.json")
	link := filepath.Join(dir, "settings.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(ClaudeCode, ScopeUser, link, opts); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v", err)
	}
	if !strings.Contains(string(read(t, real)), "hook claude-code") {
		t.Fatal("the file the link points to was not changed")
	}
	if _, err := Uninstall(ClaudeCode, ScopeUser, link, opts); err != nil {
		t.Fatal(err)
	}
	if string(read(t, real)) != string(orig) {
		t.Fatal("not restored")
	}
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(real), ".*ckpt-tmp*"))
	if len(matches) > 0 {
		t.Fatalf("temporary files left: %v", matches)
	}
}

// codexFiles copies the recorded hooks.json and config.toml into a
// CODEX_HOME of the test's own.
func codexFiles(t *testing.T) (hooksFile string, origHooks, origConf []byte) {
	t.Helper()
	hooksFile, origHooks = settingsCopy(t, "codex-hooks.json", ".codex/hooks.json")
	origConf, err := os.ReadFile(filepath.Join("testdata", "settings", "codex-config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(codexConfigFile(hooksFile), origConf, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CODEX_HOME", filepath.Dir(hooksFile))
	return hooksFile, origHooks, origConf
}

// Codex's hooks: ckpt's entries go after the user's in hooks.json, and
// their trust — at the indexes they landed on — is appended to
// config.toml; uninstall gives both files back byte for byte.
func TestCodexInstall(t *testing.T) {
	opts := installOpts(t)
	p, origHooks, origConf := codexFiles(t)
	conf := codexConfigFile(p)
	ch, err := Install(Codex, ScopeUser, p, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !ch.Changed || !reflect.DeepEqual(ch.Added, Events[Codex]) || !reflect.DeepEqual(ch.Trusted, Events[Codex]) ||
		ch.Command != testCommand+" hook codex" || ch.Config != conf || ch.ConfigBackup == "" {
		t.Fatalf("%+v", ch)
	}
	hooksOnce, confOnce := read(t, p), read(t, conf)
	if fi, _ := os.Stat(conf); fi.Mode().Perm() != 0o600 {
		t.Errorf("config.toml mode %v, want 0600 kept", fi.Mode().Perm())
	}
	m := decode(t, hooksOnce)["hooks"].(map[string]any)
	stop := m["Stop"].([]any)
	if len(stop) != 2 || !strings.Contains(string(hooksOnce), `"command": "/opt/ckpt/bin/ckpt hook codex",`) {
		t.Fatalf("hooks.json:\n%s", hooksOnce)
	}
	end := m["SessionEnd"].([]any)[0].(map[string]any)["hooks"].([]any)[0].(map[string]any)
	if end["timeout"] != float64(codexSessionEndTimeout) {
		t.Fatalf("SessionEnd entry %v: want Codex's longest timeout", end)
	}
	// config.toml: the original bytes, then one table per hook.
	if !strings.HasPrefix(string(confOnce), string(origConf)) {
		t.Fatalf("config.toml was changed, not appended to:\n%s", confOnce)
	}
	// ckpt's four entries, at the indexes they landed on (the user's
	// SessionStart and Stop come first), with the hashes that the rules
	// checked against Codex 0.169 (the research's trust.py, which made
	// hooks run in a real `codex exec`) give them.
	var cm map[string]any
	if _, err := toml.Decode(string(confOnce), &cm); err != nil {
		t.Fatal(err)
	}
	state := cm["hooks"].(map[string]any)["state"].(map[string]any)
	for k, want := range map[string]string{
		p + ":session_start:1:0":      "sha256:bf6e55f8f950612f0cb9184899ca7c8003a5998bdf5646d76c6ee9b738c8dfb5",
		p + ":user_prompt_submit:0:0": "sha256:0ca4d0804c62d80bf982eb6479d2dcd68d79273669e153a5deeb27fcc75015b6",
		p + ":stop:1:0":               "sha256:fe415dcc2fb669b3b763fe7baec832602e753b36d96126bea098a30498b9f0bd",
		p + ":session_end:0:0":        "sha256:525d2a7a0a6b9938b939a6115c2287b04d3405e7992a5fd92cd8229ffd9d2906",
		// Its matcher is in the hash; test/agents' TestCodexIgnoredEdits
		// shows the real Codex runs the hook so trusted.
		p + ":pre_tool_use:1:0": codexHookHash("PreToolUse", ptr("apply_patch"), codexDecl{Type: "command", Command: "/opt/ckpt/bin/ckpt hook codex", Timeout: ptr(int64(30))}),
	} {
		e, _ := state[k].(map[string]any)
		if got, _ := e["trusted_hash"].(string); got != want {
			t.Errorf("trust for %s: %q, want %q\n%s", k, got, want, confOnce)
		}
	}
	if len(state) != len(Events[Codex]) || cm["model"] != "gpt-5.1-codex" {
		t.Fatalf("config.toml:\n%s", confOnce)
	}
	st := Status(Codex, ScopeUser, p)
	if !reflect.DeepEqual(st.Events, Events[Codex]) || !reflect.DeepEqual(st.Trusted, Events[Codex]) || len(st.Untrusted) != 0 || len(st.Missing) != 0 {
		t.Fatalf("status %+v", st)
	}
	if ch, err := Install(Codex, ScopeUser, p, opts); err != nil || ch.Changed || string(read(t, p)) != string(hooksOnce) || string(read(t, conf)) != string(confOnce) {
		t.Fatalf("second install: %+v, %v", ch, err)
	}

	// A trust that no longer matches is reported, and install renews it
	// in place.
	stale := strings.Replace(string(confOnce), hashOf(t, confOnce, p+":stop:1:0"), "sha256:00", 1)
	os.WriteFile(conf, []byte(stale), 0o600)
	if st := Status(Codex, ScopeUser, p); !reflect.DeepEqual(st.Untrusted, []string{"Stop"}) {
		t.Fatalf("status %+v", st)
	}
	if ch, err := Install(Codex, ScopeUser, p, opts); err != nil || !reflect.DeepEqual(ch.Trusted, []string{"Stop"}) || string(read(t, conf)) != string(confOnce) {
		t.Fatalf("renew: %+v, %v\n%s", ch, err, read(t, conf))
	}

	ch, err = Uninstall(Codex, ScopeUser, p, opts)
	if err != nil || !reflect.DeepEqual(ch.Removed, Events[Codex]) || !reflect.DeepEqual(ch.Untrusted, Events[Codex]) {
		t.Fatalf("uninstall: %+v, %v", ch, err)
	}
	if got := read(t, p); string(got) != string(origHooks) {
		t.Fatalf("hooks.json after install and uninstall:\n%s", got)
	}
	if got := read(t, conf); string(got) != string(origConf) {
		t.Fatalf("config.toml after install and uninstall:\n%s", got)
	}
	if ch, err := Uninstall(Codex, ScopeUser, p, opts); err != nil || ch.Changed {
		t.Fatalf("second uninstall: %+v, %v", ch, err)
	}
}

// hashOf returns the trusted_hash config.toml records for key.
func hashOf(t *testing.T, conf []byte, key string) string {
	t.Helper()
	m, err := decodeTOML(conf, "config.toml")
	if err != nil {
		t.Fatal(err)
	}
	h, _ := trustedHash(m, key)
	if h == "" {
		t.Fatalf("no trust for %s", key)
	}
	return h
}

// The legacy notify program: install replaces ckpt's with the hooks, but
// leaves another program's, and a notify of the user's that runs ckpt's
// hook keeps install from adding hooks that would record every turn
// twice. --notify installs it (for a Codex without hooks).
func TestCodexNotifyInstall(t *testing.T) {
	opts := installOpts(t)
	p, _, origConf := codexFiles(t)
	conf := codexConfigFile(p)
	os.Remove(p)

	// ckpt's legacy notify is replaced by the hooks.
	withNotify := `notify = ["/usr/bin/ckpt", "hook", "codex"]` + "\n" + string(origConf)
	os.WriteFile(conf, []byte(withNotify), 0o644)
	ch, err := Install(Codex, ScopeUser, p, opts)
	if err != nil || !reflect.DeepEqual(ch.Removed, []string{"notify"}) {
		t.Fatalf("%+v, %v", ch, err)
	}
	if got := string(read(t, conf)); strings.Contains(got, "notify =") || !strings.HasPrefix(got, string(origConf)) {
		t.Fatalf("config.toml:\n%s", got)
	}
	if !strings.HasPrefix(string(read(t, p)), "{\n  \"hooks\": {\n    \"SessionStart\": [\n") {
		t.Fatalf("a new hooks.json is not two-space-indented JSON:\n%s", read(t, p))
	}
	if _, err := Uninstall(Codex, ScopeUser, p, opts); err != nil {
		t.Fatal(err)
	}
	if got := string(read(t, conf)); got != string(origConf) {
		t.Fatalf("config.toml after uninstall:\n%s", got)
	}

	// --notify: the legacy line, and ckpt's hooks out of hooks.json.
	if _, err := Install(Codex, ScopeUser, p, opts); err != nil {
		t.Fatal(err)
	}
	legacy := opts
	legacy.Notify = true
	ch, err = Install(Codex, ScopeUser, p, legacy)
	if err != nil || !reflect.DeepEqual(ch.Added, []string{"notify"}) || ch.File != conf || !reflect.DeepEqual(ch.Removed, Events[Codex]) {
		t.Fatalf("--notify: %+v, %v", ch, err)
	}
	once := read(t, conf)
	if !strings.HasPrefix(string(once), "# Codex CLI configuration\nnotify = [\"/opt/ckpt/bin/ckpt\", \"hook\", \"codex\"]\n") ||
		strings.Contains(string(once), "hooks.state") || strings.Contains(string(read(t, p)), "hook codex") {
		t.Fatalf("config.toml:\n%s\nhooks.json:\n%s", once, read(t, p))
	}
	if st := Status(Codex, ScopeUser, p); !reflect.DeepEqual(st.Events, []string{"notify"}) || len(st.Missing) != len(Events[Codex]) {
		t.Fatalf("status %+v", st)
	}
	if ch, err := Install(Codex, ScopeUser, p, legacy); err != nil || ch.Changed {
		t.Fatalf("second --notify install: %+v, %v", ch, err)
	}
	if ch, err := Uninstall(Codex, ScopeUser, p, opts); err != nil || !reflect.DeepEqual(ch.Removed, []string{"notify"}) {
		t.Fatalf("uninstall: %+v, %v", ch, err)
	}
	if got := read(t, conf); string(got) != string(origConf) {
		t.Fatalf("after --notify and uninstall:\n%s", got)
	}

	// Another notify program is never replaced; hooks go in beside it.
	other := "notify = [\"python3\", \"/home/alice/.codex/notify.py\"]\nmodel = \"o3\"\n"
	os.WriteFile(conf, []byte(other), 0o644)
	_, err = Install(Codex, ScopeUser, p, legacy)
	if err == nil || !strings.Contains(err.Error(), `already has a notify program: notify = ["python3", "/home/alice/.codex/notify.py"]`) {
		t.Fatalf("err %v", err)
	}
	if string(read(t, conf)) != other {
		t.Fatal("changed a config with another notify")
	}
	if _, err := Install(Codex, ScopeUser, p, opts); err != nil {
		t.Fatal(err)
	}
	if st := Status(Codex, ScopeUser, p); st.Other == "" || len(st.Trusted) != len(Events[Codex]) {
		t.Fatalf("status %+v", st)
	}
	if _, err := Uninstall(Codex, ScopeUser, p, opts); err != nil || string(read(t, conf)) != other {
		t.Fatalf("uninstall: %v\n%s", err, read(t, conf))
	}

	// The user's own notify that runs ckpt's hook: nothing is added.
	hooksBefore := read(t, p)
	own := "notify = [\"ckpt\", \"hook\", \"codex\", \"--no-watch\"]\n"
	os.WriteFile(conf, []byte(own), 0o644)
	if ch, err := Install(Codex, ScopeUser, p, opts); err != nil || ch.Changed || len(ch.Kept) != 1 {
		t.Fatalf("%+v, %v", ch, err)
	}
	if string(read(t, conf)) != own || string(read(t, p)) != string(hooksBefore) {
		t.Fatal("install changed a config whose notify runs ckpt's hook")
	}

	// No files yet; a config that does not parse.
	home := t.TempDir()
	p = filepath.Join(home, "hooks.json")
	if _, err := Install(Codex, ScopeUser, p, legacy); err != nil {
		t.Fatal(err)
	}
	if got := string(read(t, codexConfigFile(p))); got != `notify = ["/opt/ckpt/bin/ckpt", "hook", "codex"]`+"\n" {
		t.Fatalf("%q", got)
	}
	os.WriteFile(codexConfigFile(p), []byte("model = \n"), 0o644)
	for _, o := range []InstallOptions{opts, legacy} {
		if _, err := Install(Codex, ScopeUser, p, o); err == nil {
			t.Fatal("installed into a config that does not parse")
		}
	}
	if _, err := os.Stat(p); err == nil {
		t.Fatal("wrote hooks.json with a config.toml it cannot record their trust in")
	}
	if _, err := SettingsFile(Codex, ScopeProject, "/ws"); err == nil {
		t.Fatal("codex has a project scope")
	}
}

// The trust hash, against the hashes the real Codex 0.169 computed: each
// declaration below was in a hooks.json of an isolated CODEX_HOME, and the
// hash is the currentHash Codex's app-server returned for it (hooks/list;
// see docs/hooks.md). The last one, trusted in config.toml, made Codex
// run that hook end to end.
func TestCodexHookHash(t *testing.T) {
	i64 := func(n int64) *int64 { return &n }
	u64 := func(n uint64) *uint64 { return &n }
	str := func(s string) *string { return &s }
	yes := true
	for _, c := range []struct {
		event   string
		matcher *string
		decl    codexDecl
		want    string
	}{
		{"Stop", nil, codexDecl{Command: "ckpt hook codex stop", Timeout: i64(60), StatusMessage: str("checkpointing")},
			"sha256:1b80371b77f7d1e454e3f73a896143c91fb61bc242a72f9317b2b65d8aedc764"},
		{"PreToolUse", str("Bash"), codexDecl{Command: "ckpt hook codex pre-tool-use", Async: &yes},
			"sha256:5542cc69d7e0af28b786024ceeec89d9b0992dbc28742bf9523d4cdf3008af75"},
		{"SessionStart", str("startup|resume"), codexDecl{Command: "ckpt hook codex session-start"},
			"sha256:38a902629619da206af176c60a7387b734bbe0b5c3c2caaef22b420e52be2028"},
		{"SessionEnd", nil, codexDecl{Command: "ckpt hook codex session-end"},
			"sha256:9842e40289f2e67e173d4fa9a098e4ac0c6bb5ab9969c5d36057db6551ef8f8a"},
		{"SessionEnd", nil, codexDecl{Command: "e", Timeout: i64(10)}, // clamped to 3
			"sha256:1c961b1feb2ddfd034b56b57216af374518582fbf5dc0173dcebc20889d389f5"},
		{"UserPromptSubmit", nil, codexDecl{Command: "ckpt hook codex user-prompt-submit", Timeout: i64(30)},
			"sha256:daca3aedb133e71affda43c729791a696e58265fa557f1c70a92c0719ce38e0c"},
		{"UserPromptSubmit", nil, codexDecl{Command: "a", AdditionalContextLimit: u64(2500)},
			"sha256:aed49e880e6f0f325bf01279b70ae96881385dd833b37dc1c840c5c6f0137787"},
		{"UserPromptSubmit", nil, codexDecl{Command: "b", AdditionalContextLimit: u64(7)},
			"sha256:0b7b39f1212911a02631474a0453f12368877b3d09a14af1dc22e956b5533654"},
		{"SessionStart", str(""), codexDecl{Command: "c"},
			"sha256:f846310b2ff47516cb30506ce5da1e200a5ec42f6f175eee2bc1e6b1e54abef7"},
		{"SessionStart", str("*"), codexDecl{Command: "d"},
			"sha256:883c92a6fbf306de7c46f37241316370dbdbd683aaadda9b3e91abcde8e5166d"},
		{"Stop", nil, codexDecl{Command: "cd \"/x y\" && ckpt save > /dev/null 2>&1 <in \u00fc\t'q'"},
			"sha256:4c277bf3f88b6f01a1f0deb2da7c6875efe6440dac2f699d12d378e7cdfad232"},
		{"Stop", nil, codexDecl{Command: "/root/codexlab/dump.sh Stop"},
			"sha256:80746df517e22178ae5bbf9c2cd797da20ac52f020f349c33bb6878ccac30878"},
	} {
		if got := codexHookHash(c.event, c.matcher, c.decl); got != c.want {
			t.Errorf("%s %+v: %s, want %s", c.event, c.decl, got, c.want)
		}
	}
}

func TestShellWords(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		want bool
	}{
		{"ckpt hook claude-code", true},
		{"/usr/local/bin/ckpt hook claude-code", true},
		{"'/Users/a b/bin/ckpt' hook claude-code", true},
		{`"/Users/a b/bin/ckpt" --store /s hook claude-code --strict`, true},
		{"ckpt hook gemini", false},
		{"echo ckpt hook claude-code", false},
		{"/bin/ckpt-other hook claude-code", false},
	} {
		if got := isCkptHook(shellFields(c.cmd), ClaudeCode); got != c.want {
			t.Errorf("%s: %v", c.cmd, got)
		}
	}
	// Only what install writes is ckpt's own entry.
	for _, c := range []struct {
		cmd  string
		want bool
	}{
		{"ckpt hook claude-code", true},
		{"/usr/local/bin/ckpt hook claude-code", true},
		{"'/Users/a b/bin/ckpt' hook claude-code", true},
		{`"/Users/a b/bin/ckpt" hook claude-code`, false}, // not as install quotes it
		{"ckpt hook claude-code && notify-send done", false},
		{"ckpt hook claude-code; rm -rf ~", false},
		{"ckpt hook claude-code --strict", false},
		{"ckpt  hook claude-code", false},
		{"ckpt hook claude-code > /tmp/log", false},
		{"ckpt hook gemini", false},
	} {
		if got := isOursCommand(c.cmd, ClaudeCode); got != c.want {
			t.Errorf("ours %s: %v", c.cmd, got)
		}
	}
	if got := hookCommand("/Users/a b/ckpt", Gemini); got != "'/Users/a b/ckpt' hook gemini" {
		t.Errorf("%s", got)
	}
	if got := shellFields(hookCommand("/it's/ckpt", Gemini)); !reflect.DeepEqual(got, []string{"/it's/ckpt", "hook", "gemini"}) {
		t.Errorf("%q", got)
	}
}

// --async-stop marks the Stop entry "async": true, on a new install or
// on one already there; uninstall still gives the original back.
func TestInstallAsyncStop(t *testing.T) {
	p, orig := settingsCopy(t, "claude-settings.json", ".claude/settings.json")
	opts := installOpts(t)
	async := opts
	async.AsyncStop = true
	if _, err := Install(ClaudeCode, ScopeProject, p, async); err != nil {
		t.Fatal(err)
	}
	m := decode(t, read(t, p))
	stop := m["hooks"].(map[string]any)["Stop"].([]any)
	if h := stop[len(stop)-1].(map[string]any)["hooks"].([]any)[0].(map[string]any); h["async"] != true {
		t.Fatalf("Stop entry %v", h)
	}
	if st := Status(ClaudeCode, ScopeProject, p); !reflect.DeepEqual(st.Background, []string{"Stop"}) {
		t.Fatalf("status %+v", st)
	}
	if _, err := Uninstall(ClaudeCode, ScopeProject, p, opts); err != nil {
		t.Fatal(err)
	}
	if string(read(t, p)) != string(orig) {
		t.Fatal("not restored")
	}

	// Installed without, then with: only the async member is added.
	if _, err := Install(ClaudeCode, ScopeProject, p, opts); err != nil {
		t.Fatal(err)
	}
	sync := read(t, p)
	ch, err := Install(ClaudeCode, ScopeProject, p, async)
	if err != nil || !reflect.DeepEqual(ch.Updated, []string{"Stop"}) {
		t.Fatalf("%+v %v", ch, err)
	}
	got := string(read(t, p))
	if strings.Count(got, `"async": true`) != strings.Count(string(sync), `"async": true`)+1 {
		t.Fatalf("%s", got)
	}
	if ch, _ := Install(ClaudeCode, ScopeProject, p, async); ch.Changed {
		t.Fatal("second --async-stop install changed the file")
	}
	if _, err := Uninstall(ClaudeCode, ScopeProject, p, opts); err != nil {
		t.Fatal(err)
	}
	if string(read(t, p)) != string(orig) {
		t.Fatal("not restored")
	}
}

// TestLocalScope: Claude Code's hooks go by default in the workspace's
// settings.local.json (Gemini CLI and Codex have none), and a settings
// file install creates is two-space-indented JSON, as the agents write
// theirs.
func TestLocalScope(t *testing.T) {
	ws := t.TempDir()
	if got := DefaultScope(ClaudeCode); got != ScopeLocal {
		t.Errorf("DefaultScope(claude-code) = %s, want local", got)
	}
	if got := DefaultScope(Gemini); got != ScopeProject {
		t.Errorf("DefaultScope(gemini) = %s, want project", got)
	}
	file, err := SettingsFile(ClaudeCode, ScopeLocal, ws)
	if err != nil || file != filepath.Join(ws, ".claude", "settings.local.json") {
		t.Fatalf("SettingsFile(claude-code, local) = %q, %v", file, err)
	}
	for _, agent := range []string{Gemini, Codex} {
		if _, err := SettingsFile(agent, ScopeLocal, ws); err == nil || !strings.Contains(err.Error(), "has no local settings file") {
			t.Errorf("SettingsFile(%s, local): %v, want a refusal", agent, err)
		}
	}
	if !ScopeLocal.InWorkspace() || !ScopeProject.InWorkspace() || ScopeUser.InWorkspace() {
		t.Error("InWorkspace: want local and project only")
	}
	opts := InstallOptions{Command: "/opt/ckpt", BackupDir: t.TempDir(), Project: ws}
	if _, err := Install(ClaudeCode, ScopeLocal, file, opts); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "{\n  \"hooks\": {\n    \"SessionStart\": [\n      {\n") || !strings.HasSuffix(string(b), "\n}\n") {
		t.Errorf("a new settings file is not two-space-indented JSON:\n%s", b)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if in := Status(ClaudeCode, ScopeLocal, file); len(in.Events) != len(Events[ClaudeCode]) {
		t.Errorf("status: %+v", in)
	}
}

// Trust tables Codex or the user wrote: install sets the hash in the
// table there, uninstall removes only the hash it recorded (a table that
// holds more keeps them), and a hash that is not ckpt's stays.
func TestCodexTrustEdits(t *testing.T) {
	e := []codexTrust{{Event: "Stop", Key: "/h/hooks.json:stop:0:0", Hash: "sha256:aa"}}
	header := `[hooks.state."/h/hooks.json:stop:0:0"]` + "\n"
	for _, c := range []struct{ name, src, set, unset string }{
		{"new", "model = \"o3\"", "model = \"o3\"\n\n" + header + "trusted_hash = \"sha256:aa\"\n", "model = \"o3\"\n"},
		{"empty", "", header + "trusted_hash = \"sha256:aa\"\n", ""},
		{"disabled", header + "enabled = false\n", header + "trusted_hash = \"sha256:aa\"\nenabled = false\n", header + "enabled = false\n"},
		{"stale", header + "trusted_hash = \"sha256:00\" # old\n[tui]\n", header + "trusted_hash = \"sha256:aa\"\n[tui]\n", "[tui]\n"},
	} {
		out, err := setTrust([]byte(c.src), e, &Change{File: "config.toml"})
		if err != nil || string(out) != c.set {
			t.Errorf("%s: set: %q, %v; want %q", c.name, out, err, c.set)
			continue
		}
		back, err := removeTrust(out, e, &Change{File: "config.toml"})
		if err != nil || string(back) != c.unset {
			t.Errorf("%s: unset: %q, %v; want %q", c.name, back, err, c.unset)
		}
	}
	// Another hash under ckpt's key (the user trusted something else
	// there) is not ckpt's to remove; a hooks key that is no table is not
	// edited at a guess.
	other := header + "trusted_hash = \"sha256:bb\"\n"
	if out, err := removeTrust([]byte(other), e, &Change{File: "config.toml"}); err != nil || string(out) != other {
		t.Errorf("removed another hash: %q, %v", out, err)
	}
	if _, err := setTrust([]byte("hooks = 1\n"), e, &Change{File: "config.toml"}); err == nil {
		t.Error("recorded trust under a hooks key that is not a table")
	}
}

// With $CODEX_HOME a symlink, Codex keys trust by the path it resolves to.
func TestCodexTrustKeyResolvesCodexHome(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "codex")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CODEX_HOME", link)
	p := filepath.Join(link, "hooks.json")
	if _, err := Install(Codex, ScopeUser, p, installOpts(t)); err != nil {
		t.Fatal(err)
	}
	conf := string(read(t, filepath.Join(real, "config.toml")))
	if !strings.Contains(conf, `[hooks.state."`+filepath.Join(real, "hooks.json")+`:stop:0:0"]`) {
		t.Fatalf("config.toml:\n%s", conf)
	}
	if st := Status(Codex, ScopeUser, p); len(st.Trusted) != len(Events[Codex]) {
		t.Fatalf("status %+v", st)
	}
}

// Hooks of the user's own that run ckpt's hook are theirs: install adds
// none beside them, trusts none of them, and makes no config.toml.
func TestCodexInstallKeepsTheUsersHooks(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CODEX_HOME", dir)
	var b strings.Builder
	b.WriteString("{\"hooks\": {")
	for i, ev := range Events[Codex] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`"` + ev + `": [{"hooks": [{"type": "command", "command": "ckpt hook codex --no-watch"}]}]`)
	}
	b.WriteString("}}\n")
	p := filepath.Join(dir, "hooks.json")
	os.WriteFile(p, []byte(b.String()), 0o644)
	ch, err := Install(Codex, ScopeUser, p, installOpts(t))
	if err != nil || ch.Changed || len(ch.Kept) != len(Events[Codex]) {
		t.Fatalf("%+v, %v", ch, err)
	}
	if _, err := os.Stat(codexConfigFile(p)); err == nil {
		t.Fatal("made a config.toml with nothing to trust")
	}
	if st := Status(Codex, ScopeUser, p); len(st.Events) != len(Events[Codex]) || !reflect.DeepEqual(st.Untrusted, Events[Codex]) {
		t.Fatalf("status %+v", st)
	}
}

// TestInstallCommandNotNamedCkpt: ckpt knows its entries by a program
// named ckpt, so a command of another name (a binary built as ckpt-dev)
// would be an entry that install doubles on every run and uninstall never
// removes: install refuses it, for every agent.
func TestInstallCommandNotNamedCkpt(t *testing.T) {
	for _, agent := range []string{ClaudeCode, Gemini, Codex} {
		file := filepath.Join(t.TempDir(), "settings")
		opts := installOpts(t)
		opts.Command = "/opt/bin/ckpt-dev"
		for range 2 {
			if _, err := Install(agent, ScopeProject, file, opts); err == nil || !strings.Contains(err.Error(), "ckpt-dev") {
				t.Errorf("%s: install with a command not named ckpt: %v", agent, err)
			}
		}
		if _, err := os.Stat(file); err == nil {
			t.Errorf("%s: install wrote %s", agent, read(t, file))
		}
	}
}

func ptr[T any](v T) *T { return &v }

// projectInstallRoundTrip installs an agent's hooks into a project settings
// file that already holds the user's keys, comments and a hook of theirs
// (orig), checks what install added and status reports, installs again
// (nothing changes), uninstalls, and checks orig comes back byte for
// byte. file's directory is made if needed.
func projectInstallRoundTrip(t *testing.T, agent, ws, file, orig string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := InstallOptions{Command: "/opt/bin/ckpt", BackupDir: t.TempDir(), Project: ws}
	ch, err := Install(agent, ScopeProject, file, opts)
	if err != nil || !ch.Changed || !reflect.DeepEqual(ch.Added, Events[agent]) {
		t.Fatalf("install: %+v, %v", ch, err)
	}
	data, _ := os.ReadFile(file)
	flat := strings.Join(strings.Fields(string(data)), "")
	for _, want := range []string{`"command":"saydone"`, "//theuser's", `{"type":"command","command":"/opt/bin/ckpthook` + agent + `","timeout":30}`} {
		if !strings.Contains(flat, want) {
			t.Errorf("installed file lacks %s:\n%s", want, data)
		}
	}
	st := Status(agent, ScopeProject, file)
	if !reflect.DeepEqual(st.Events, Events[agent]) || len(st.Missing) != 0 || !reflect.DeepEqual(st.Commands, []string{"/opt/bin/ckpt hook " + agent}) {
		t.Errorf("status %+v", st)
	}
	if ch, err := Install(agent, ScopeProject, file, opts); err != nil || ch.Changed {
		t.Errorf("install again: %+v, %v", ch, err)
	}
	if ch, err := Uninstall(agent, ScopeProject, file, opts); err != nil || !reflect.DeepEqual(ch.Removed, Events[agent]) {
		t.Fatalf("uninstall: %+v, %v", ch, err)
	}
	if data, _ := os.ReadFile(file); string(data) != orig {
		t.Errorf("after uninstall:\n%s\nwant\n%s", data, orig)
	}
}
