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
	if len(m) != 1 || len(m["hooks"].(map[string]any)) != 4 {
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
		strings.Count(string(read(t, p)), "hook claude-code") != 4 {
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

func TestCodexInstall(t *testing.T) {
	opts := installOpts(t)
	p, orig := settingsCopy(t, "codex-config.toml", ".codex/config.toml")
	ch, err := Install(Codex, ScopeUser, p, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !ch.Changed || !reflect.DeepEqual(ch.Added, []string{"notify"}) || ch.Command != testCommand+" hook codex" {
		t.Fatalf("%+v", ch)
	}
	once := read(t, p)
	var m struct {
		Notify []string
		Model  string
		TUI    struct{ Notifications []string } `toml:"tui"`
	}
	if _, err := toml.Decode(string(once), &m); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m.Notify, []string{testCommand, "hook", "codex"}) || m.Model != "gpt-5.1-codex" || len(m.TUI.Notifications) != 2 {
		t.Fatalf("%+v\n%s", m, once)
	}
	if !strings.HasPrefix(string(once), "# Codex CLI configuration\nnotify = [") {
		t.Fatalf("notify not at the top:\n%s", once)
	}
	if st := Status(Codex, ScopeUser, p); !reflect.DeepEqual(st.Events, []string{"notify"}) {
		t.Fatalf("status %+v", st)
	}
	if ch, err := Install(Codex, ScopeUser, p, opts); err != nil || ch.Changed || string(read(t, p)) != string(once) {
		t.Fatalf("second install: %+v, %v", ch, err)
	}
	if ch, err := Uninstall(Codex, ScopeUser, p, opts); err != nil || !reflect.DeepEqual(ch.Removed, []string{"notify"}) {
		t.Fatalf("uninstall: %+v, %v", ch, err)
	}
	if got := read(t, p); string(got) != string(orig) {
		t.Fatalf("after install and uninstall:\n%s", got)
	}

	// Another notify program is never replaced.
	other := "notify = [\"python3\", \"/home/alice/.codex/notify.py\"]\nmodel = \"o3\"\n"
	os.WriteFile(p, []byte(other), 0o644)
	_, err = Install(Codex, ScopeUser, p, opts)
	if err == nil || !strings.Contains(err.Error(), `already has a notify program: notify = ["python3", "/home/alice/.codex/notify.py"]`) {
		t.Fatalf("err %v", err)
	}
	if string(read(t, p)) != other {
		t.Fatal("changed a config with another notify")
	}
	if st := Status(Codex, ScopeUser, p); st.Other == "" || len(st.Events) != 0 {
		t.Fatalf("status %+v", st)
	}
	if ch, err := Uninstall(Codex, ScopeUser, p, opts); err != nil || ch.Changed {
		t.Fatalf("uninstall removed another notify: %+v, %v", ch, err)
	}

	// No config yet; a config that does not parse.
	p = filepath.Join(t.TempDir(), "config.toml")
	if _, err := Install(Codex, ScopeUser, p, opts); err != nil {
		t.Fatal(err)
	}
	if got := string(read(t, p)); got != `notify = ["/opt/ckpt/bin/ckpt", "hook", "codex"]`+"\n" {
		t.Fatalf("%q", got)
	}
	os.WriteFile(p, []byte("model = \n"), 0o644)
	if _, err := Install(Codex, ScopeUser, p, opts); err == nil {
		t.Fatal("installed into a config that does not parse")
	}
	if _, err := SettingsFile(Codex, ScopeProject, "/ws"); err == nil {
		t.Fatal("codex has a project scope")
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
