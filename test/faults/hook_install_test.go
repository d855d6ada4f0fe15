//go:build unix

package faults

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// installEnv is a project with its .claude directory, the ckpt command
// named for installed entries, and a home directory of its own; settings
// is the shared settings file (--project), whose edits the tests attack.
func installEnv(t *testing.T) (e *env, settings string) {
	e = newEnv(t)
	if err := os.MkdirAll(filepath.Join(e.WS, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.Extra = []string{"HOME=" + t.TempDir(), "CLAUDE_CONFIG_DIR=", "CODEX_HOME="}
	return e, filepath.Join(e.WS, ".claude", "settings.json")
}

// TestInstallLeavesTheUsersOwnCommand: a hook command of the user's that
// runs ckpt's hook among other things is theirs — uninstall leaves it,
// install adds no second entry — and so is a Codex notify line that does.
func TestInstallLeavesTheUsersOwnCommand(t *testing.T) {
	e, settings := installEnv(t)
	orig := `{
  "hooks": {
    "Stop": [
      { "hooks": [ { "type": "command", "command": "ckpt hook claude-code && notify-send done" } ] }
    ]
  }
}
`
	if err := os.WriteFile(settings, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Must("hook", "claude-code", "uninstall", "--project")
	if got := readFile(t, settings); got != orig {
		t.Fatalf("uninstall changed the user's command:\n%s", got)
	}
	out := e.Must("hook", "claude-code", "install", "--project", "--command", "/opt/bin/ckpt")
	if !strings.Contains(out, "left as it is, your own command that runs ckpt's hook: Stop: ckpt hook claude-code && notify-send done") {
		t.Errorf("install did not say it left the user's command:\n%s", out)
	}
	got := readFile(t, settings)
	if strings.Count(got, "hook claude-code") != 5 || !strings.Contains(got, "notify-send done") {
		t.Fatalf("after install (want the user's Stop and ckpt's four others):\n%s", got)
	}
	e.Must("hook", "claude-code", "uninstall", "--project")
	if got := readFile(t, settings); got != orig {
		t.Fatalf("install then uninstall:\n%s\nwant\n%s", got, orig)
	}

	// Codex: a notify program of the user's that runs ckpt's hook.
	codexHome := t.TempDir()
	e.Extra = append(e.Extra, "CODEX_HOME="+codexHome)
	conf := filepath.Join(codexHome, "config.toml")
	corig := "notify = [\"ckpt\", \"hook\", \"codex\", \"--no-watch\"]\nmodel = \"o3\"\n"
	if err := os.WriteFile(conf, []byte(corig), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Must("hook", "codex", "uninstall")
	e.Must("hook", "codex", "install", "--command", "/opt/bin/ckpt")
	if got := readFile(t, conf); got != corig {
		t.Fatalf("codex config changed:\n%s", got)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestInstallNeverWritesThroughALinkOutOfTheProject: a repository that
// ships .claude/settings.json (or .claude itself, or a chain of links) as
// a symlink to a file of the user's — ~/.docker/config.json — does not
// get that file edited by a project install, nor uninstall; the error
// names the path. A link within the project is followed.
func TestInstallNeverWritesThroughALinkOutOfTheProject(t *testing.T) {
	secret := `{"auths": {"registry.example": {"auth": "c2VjcmV0"}}}` + "\n"
	cases := map[string]func(t *testing.T, ws, outside string){
		"file": func(t *testing.T, ws, outside string) {
			must(t, os.Symlink(outside, filepath.Join(ws, ".claude", "settings.json")))
		},
		"directory": func(t *testing.T, ws, outside string) {
			must(t, os.Remove(filepath.Join(ws, ".claude")))
			must(t, os.Symlink(filepath.Dir(outside), filepath.Join(ws, ".claude")))
			must(t, os.Rename(outside, filepath.Join(filepath.Dir(outside), "settings.json")))
		},
		"chain": func(t *testing.T, ws, outside string) {
			must(t, os.Symlink(outside, filepath.Join(ws, "hop2")))
			must(t, os.Symlink(filepath.Join(ws, "hop2"), filepath.Join(ws, "hop1")))
			must(t, os.Symlink("../hop1", filepath.Join(ws, ".claude", "settings.json")))
		},
		// .claude points out, and the file is not there yet: creating it
		// would write outside too.
		"directory-new-file": func(t *testing.T, ws, outside string) {
			must(t, os.Remove(filepath.Join(ws, ".claude")))
			must(t, os.Symlink(filepath.Dir(outside), filepath.Join(ws, ".claude")))
		},
		// The default install writes .claude/settings.local.json: the
		// same refusal.
		"local": func(t *testing.T, ws, outside string) {
			must(t, os.Symlink(outside, filepath.Join(ws, ".claude", "settings.local.json")))
		},
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			e, settings := installEnv(t)
			outside := filepath.Join(t.TempDir(), ".docker", "config.json")
			must(t, os.MkdirAll(filepath.Dir(outside), 0o700))
			must(t, os.WriteFile(outside, []byte(secret), 0o600))
			setup(t, e.WS, outside)
			before := dirState(t, filepath.Dir(outside))
			scope := "--project"
			if name == "local" {
				scope, settings = "--local", filepath.Join(e.WS, ".claude", "settings.local.json")
			}
			for _, args := range [][]string{{"install", scope, "--command", "/opt/bin/ckpt"}, {"uninstall", scope}} {
				code, _, errs := e.Run(append([]string{"hook", "claude-code"}, args...)...)
				if args[0] == "install" && (code == 0 || !strings.Contains(errs, settings+" leads out of the project")) {
					t.Errorf("%s: exit %d, stderr %q; want a refusal naming %s", args[0], code, errs, settings)
				}
				if after := dirState(t, filepath.Dir(outside)); after != before {
					t.Fatalf("after %s, the directory outside the project changed:\n%s\nwant\n%s", args[0], after, before)
				}
			}
		})
	}
	// Within the project, a link is followed: the file it leads to is
	// edited, and the link stays.
	e, settings := installEnv(t)
	must(t, os.WriteFile(filepath.Join(e.WS, "claude.json"), []byte("{}\n"), 0o644))
	must(t, os.Symlink("../claude.json", settings))
	e.Must("hook", "claude-code", "install", "--project", "--command", "/opt/bin/ckpt")
	if fi, err := os.Lstat(settings); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v", err)
	}
	if !strings.Contains(readFile(t, filepath.Join(e.WS, "claude.json")), "/opt/bin/ckpt hook claude-code") {
		t.Fatal("the file the link leads to was not edited")
	}
	// A link that leads nowhere is refused (replacing it would break it).
	e, settings = installEnv(t)
	must(t, os.Symlink(filepath.Join(e.WS, "nowhere.json"), settings))
	if code, _, errs := e.Run("hook", "claude-code", "install", "--project", "--command", "/opt/bin/ckpt"); code == 0 || !strings.Contains(errs, "leads nowhere") {
		t.Fatalf("dangling link: exit %d, %s", code, errs)
	}
}

// dirState lists a directory's files with their content and mode.
func dirState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		fi, _ := de.Info()
		data, _ := os.ReadFile(filepath.Join(dir, de.Name()))
		b.WriteString(de.Name() + " " + fi.Mode().String() + " " + string(data) + "\n")
	}
	return b.String()
}

// TestInstallKeepsOwnerAndMode: a settings file install rewrites keeps its
// mode (0600 stays 0600) and, when root installs into a user's file, its
// owner.
func TestInstallKeepsOwnerAndMode(t *testing.T) {
	e, settings := installEnv(t)
	must(t, os.WriteFile(settings, []byte("{}\n"), 0o600))
	uid, gid := os.Getuid(), os.Getgid()
	if uid == 0 {
		uid, gid = 4242, 4343 // a user's file, installed into by root
		must(t, os.Chown(settings, uid, gid))
	}
	for _, args := range [][]string{{"install", "--project", "--command", "/opt/bin/ckpt"}, {"uninstall", "--project"}} {
		verb := args[0]
		e.Must(append([]string{"hook", "claude-code"}, args...)...)
		fi, err := os.Stat(settings)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if fi.Mode().Perm() != 0o600 || int(st.Uid) != uid || int(st.Gid) != gid {
			t.Fatalf("after %s: mode %v owner %d:%d; want 0600 %d:%d", verb, fi.Mode(), st.Uid, st.Gid, uid, gid)
		}
	}
}

// TestInstallSettingsSpecialFiles: a settings file that is a FIFO, or a
// symlink to /dev/zero (user scope, where links are followed), is an error
// — not an install that hangs or runs out of memory — for install,
// uninstall and hook status alike.
func TestInstallSettingsSpecialFiles(t *testing.T) {
	e, settings := installEnv(t)
	must(t, syscall.Mkfifo(settings, 0o600))
	userDir := t.TempDir()
	e.Extra = append(e.Extra, "CLAUDE_CONFIG_DIR="+userDir)
	must(t, os.Symlink("/dev/zero", filepath.Join(userDir, "settings.json")))
	for _, args := range [][]string{
		{"hook", "claude-code", "install", "--project", "--command", "/opt/bin/ckpt"},
		{"hook", "claude-code", "uninstall", "--project"},
		{"hook", "claude-code", "install", "--user", "--command", "/opt/bin/ckpt"},
		{"hook", "claude-code", "uninstall", "--user"},
	} {
		c := bounded(t, e.Cmd(args...))
		c.Env = append(c.Env, hookEnv...)
		out, err := c.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "not a regular file") {
			t.Errorf("%v: %v\n%s", args, err, out)
		}
	}
	c := bounded(t, e.Cmd("hook", "status"))
	c.Env = append(c.Env, hookEnv...)
	if out, _ := c.CombinedOutput(); strings.Count(string(out), "not a regular file") != 2 {
		t.Errorf("hook status:\n%s", out)
	}
}

// TestInstallKilledAnywhere: an install killed (-9) at any moment leaves
// the settings file as it was or as installed, never half-written; a
// temporary file a killed install left beside it is removed by the next
// one, so it is not committed with the project.
func TestInstallKilledAnywhere(t *testing.T) {
	e, settings := installEnv(t)
	orig := "{\n  \"model\": \"opus\",\n  \"permissions\": {\"allow\": [\"Read\"]}\n}\n"
	must(t, os.WriteFile(settings, []byte(orig), 0o644))
	e.Must("hook", "claude-code", "install", "--project", "--command", "/opt/bin/ckpt")
	installed := readFile(t, settings)
	rounds := 40
	if testing.Short() {
		rounds = 10
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range rounds {
		must(t, os.WriteFile(settings, []byte(orig), 0o644))
		c := e.Cmd("hook", "claude-code", "install", "--project", "--command", "/opt/bin/ckpt")
		must(t, c.Start())
		time.Sleep(time.Duration(rng.IntN(15000)) * time.Microsecond)
		c.Process.Kill()
		c.Wait()
		if got := readFile(t, settings); got != orig && got != installed {
			t.Fatalf("round %d: a killed install left\n%s", i, got)
		}
	}
	// A temporary file of an install that was killed before its rename.
	dead := exec.Command("true")
	must(t, dead.Run())
	stale := filepath.Join(e.WS, ".claude", fmt.Sprintf(".settings.json.ckpt-tmp-%d-1234", dead.Process.Pid))
	must(t, os.WriteFile(stale, []byte("{half"), 0o600))
	must(t, os.WriteFile(settings, []byte(orig), 0o644))
	e.Must("hook", "claude-code", "install", "--project", "--command", "/opt/bin/ckpt")
	if left, _ := filepath.Glob(filepath.Join(e.WS, ".claude", ".settings.json.ckpt-tmp-*")); len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// TestInstallRefusesDuplicateKeys: a settings file with a key twice in an
// object — "hooks", an event, anywhere — is refused with the line, not
// edited at a guess (the agent reads only one of them); so is a Codex
// config.toml with notify twice.
func TestInstallRefusesDuplicateKeys(t *testing.T) {
	e, settings := installEnv(t)
	for _, bad := range []string{
		"{\n  \"hooks\": {},\n  \"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}]}\n}\n",
		"{\"hooks\": {\"Stop\": [], \"Stop\": []}}\n",
		"{\"model\": \"opus\", \"permissions\": {\"allow\": [], \"allow\": [\"Read\"]}}\n",
		"{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"/opt/bin/ckpt hook claude-code\", \"command\": \"rm -rf ~\"}]}]}}\n",
	} {
		must(t, os.WriteFile(settings, []byte(bad), 0o644))
		for _, args := range [][]string{{"install", "--project", "--command", "/opt/bin/ckpt"}, {"uninstall", "--project"}} {
			code, _, errs := e.Run(append([]string{"hook", "claude-code"}, args...)...)
			if code == 0 || !strings.Contains(errs, "duplicate key") {
				t.Errorf("%s into %q: exit %d, %s", args[0], bad, code, errs)
			}
			if got := readFile(t, settings); got != bad {
				t.Fatalf("%s changed %q to %q", args[0], bad, got)
			}
		}
	}
	codexHome := t.TempDir()
	e.Extra = append(e.Extra, "CODEX_HOME="+codexHome)
	conf := filepath.Join(codexHome, "config.toml")
	bad := "notify = [\"/opt/bin/ckpt\", \"hook\", \"codex\"]\nnotify = [\"say\", \"done\"]\n"
	must(t, os.WriteFile(conf, []byte(bad), 0o644))
	for _, args := range [][]string{{"install", "--project", "--command", "/opt/bin/ckpt"}, {"uninstall", "--project"}} {
		if code, _, errs := e.Run(append([]string{"hook", "codex"}, args...)...); code == 0 || readFile(t, conf) != bad {
			t.Errorf("codex %s: exit %d, %s", args[0], code, errs)
		}
	}
}
