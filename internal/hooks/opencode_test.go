package hooks

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// OpenCode's plugin speaks ckpt's own protocol to `ckpt hook opencode`:
// the session is labelled opencode, the turn's messages are the ones the
// plugin sends.
func TestOpenCodeHooks(t *testing.T) {
	e := newEnv(t)
	const sid = "ses_21502ee4dffeKq7nYw3Rt5Zb1c"
	e.mustRun(t, OpenCode, "opencode/turn_begin.json", "began turn 1")
	e.editAndRemove(t)
	res := e.mustRun(t, OpenCode, "opencode/turn_end.json", "ended turn 1")
	if res.Agent != OpenCode || res.Files != 2 || res.Messages != 4 {
		t.Fatalf("result %+v", res)
	}
	e.checkTurn(t, sid, OpenCode, []msg{
		{"user", "", prompt},
		{"assistant", "", "I'll change the greeting in main.go, then remove notes.txt."},
		{"tool", "edit", "/home/alice/src/webapp/main.go"},
		{"tool", "bash", "rm notes.txt"},
		{"assistant", "", `Done: main.go now prints "hello", and notes.txt is gone.`},
	})
	if _, err := Parse(OpenCode, []byte(`{"event": "stop"}`)); err == nil || !strings.HasPrefix(err.Error(), "opencode payload: unknown event") {
		t.Errorf("an unknown event: %v", err)
	}
}

// OpenCode's plugin file: written where OpenCode loads plugins, updated
// when the command changes, reported by Status, removed by uninstall only
// if it is ckpt's.
func TestOpenCodeInstall(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	for _, c := range []struct {
		scope Scope
		xdg   string
		want  string
	}{
		{ScopeProject, "", filepath.Join(ws, ".opencode", "plugins", "ckpt.js")},
		{ScopeUser, "", filepath.Join(home, ".config", "opencode", "plugins", "ckpt.js")},
		{ScopeUser, "/xdg", "/xdg/opencode/plugins/ckpt.js"},
	} {
		t.Setenv("XDG_CONFIG_HOME", c.xdg)
		if got, err := SettingsFile(OpenCode, c.scope, ws); err != nil || got != c.want {
			t.Errorf("SettingsFile(opencode, %s) = %q, %v; want %q", c.scope, got, err, c.want)
		}
	}
	file := filepath.Join(ws, ".opencode", "plugins", "ckpt.js")
	opts := InstallOptions{Command: "/opt/my ckpt/ckpt", BackupDir: t.TempDir(), Project: ws}
	if st := Status(OpenCode, ScopeProject, file); st.Exists || len(st.Events) != 0 || !reflect.DeepEqual(st.Missing, Events[OpenCode]) {
		t.Errorf("status before install %+v", st)
	}
	ch, err := Install(OpenCode, ScopeProject, file, opts)
	if err != nil || !ch.Changed || !reflect.DeepEqual(ch.Added, Events[OpenCode]) {
		t.Fatalf("install: %+v, %v", ch, err)
	}
	data := read(t, file)
	if !strings.HasPrefix(string(data), opencodeMarker) || !strings.Contains(string(data), `const CKPT = "/opt/my ckpt/ckpt";`) {
		t.Fatalf("plugin file:\n%s", data)
	}
	st := Status(OpenCode, ScopeProject, file)
	if !reflect.DeepEqual(st.Events, Events[OpenCode]) || !reflect.DeepEqual(st.Commands, []string{"'/opt/my ckpt/ckpt' hook opencode"}) {
		t.Errorf("status %+v", st)
	}
	if ch, err := Install(OpenCode, ScopeProject, file, opts); err != nil || ch.Changed {
		t.Errorf("install again: %+v, %v", ch, err)
	}
	opts.Command = "/usr/bin/ckpt"
	if ch, err := Install(OpenCode, ScopeProject, file, opts); err != nil || !ch.Changed || !reflect.DeepEqual(ch.Updated, Events[OpenCode]) || ch.Backup == "" {
		t.Errorf("install with another command: %+v, %v", ch, err)
	}
	if ch, err := Uninstall(OpenCode, ScopeProject, file, opts); err != nil || !ch.Changed || !reflect.DeepEqual(ch.Removed, Events[OpenCode]) {
		t.Fatalf("uninstall: %+v, %v", ch, err)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("plugin file still there: %v", err)
	}
	if ch, err := Uninstall(OpenCode, ScopeProject, file, opts); err != nil || ch.Changed {
		t.Errorf("uninstall again: %+v, %v", ch, err)
	}

	// A plugin of the user's named ckpt.js is not ckpt's.
	mine := "export const Mine = async () => ({});\n"
	if err := os.WriteFile(file, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(OpenCode, ScopeProject, file, opts); err == nil || !strings.Contains(err.Error(), "is not ckpt's plugin") {
		t.Errorf("install over another plugin: %v", err)
	}
	if ch, err := Uninstall(OpenCode, ScopeProject, file, opts); err != nil || ch.Changed || len(ch.Removed) != 0 {
		t.Errorf("uninstall of another plugin: %+v, %v", ch, err)
	}
	if st := Status(OpenCode, ScopeProject, file); len(st.Events) != 0 || !st.Exists || st.Error != "" {
		t.Errorf("status of another plugin: %+v", st)
	}
	if string(read(t, file)) != mine {
		t.Error("the user's plugin changed")
	}
}

// A project whose .opencode/plugins is a link to the user's own plugins
// directory: a project uninstall does not remove the user's ckpt.js
// there.
func TestOpenCodeUninstallThroughLinkOut(t *testing.T) {
	ws, userPlugins := t.TempDir(), t.TempDir()
	userFile := filepath.Join(userPlugins, "ckpt.js")
	if err := os.WriteFile(userFile, opencodePlugin("/opt/bin/ckpt"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(ws, ".opencode"), 0o755)
	if err := os.Symlink(userPlugins, filepath.Join(ws, ".opencode", "plugins")); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(ws, ".opencode", "plugins", "ckpt.js")
	opts := InstallOptions{Command: "/opt/bin/ckpt", BackupDir: t.TempDir(), Project: ws}
	if ch, err := Uninstall(OpenCode, ScopeProject, file, opts); err == nil || ch.Changed || !strings.Contains(err.Error(), "leads out of the project") {
		t.Errorf("uninstall: %+v, %v", ch, err)
	}
	if _, err := os.Stat(userFile); err != nil {
		t.Errorf("the user's plugin: %v", err)
	}
}
