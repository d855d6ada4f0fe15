package gitmirror

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// gitConfigGet asks the real git what a config file sets name to: the
// value, whether it is set, and whether git can read the file at all.
func gitConfigGet(t *testing.T, path, name string) (value string, set, readable bool) {
	t.Helper()
	c := testutil.GitCommand(t, "", "config", "--file", path, "--get", name)
	out, err := c.Output()
	if err == nil {
		return strings.TrimSuffix(string(out), "\n"), true, true
	}
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		return "", false, true // not set
	}
	return "", false, false
}

// ourGet is what parseConfig says, with git's last-one-wins rule.
func ourGet(data, section, name string) (value string, set, readable bool) {
	vars, err := parseConfig(data)
	if err != nil {
		return "", false, false
	}
	for _, v := range vars {
		if v.section == section && v.name == name {
			value, set = v.value, true
		}
	}
	return value, set, true
}

// TestParseConfigAgainstGit: git config syntax as the real git reads it —
// hand-picked spellings and random ones — gives the same value of
// extensions.objectformat, and the same refusal of what git cannot read.
func TestParseConfigAgainstGit(t *testing.T) {
	cases := []string{
		"[extensions] objectformat = sha256\n",
		"[extensions]objectformat=sha256",
		"[Extensions]\n\tObjectFormat = \"sha256\"\n",
		"[extensions]\n\tobjectformat = sha\\\n256\n",
		"[extensions]\r\n\tobjectformat = sha256 ; sha1\r\n",
		"[extensions]\n\tobjectformat = \"sha256\n",
		"[extensions]\n\tobjectformat\n",
		"[extensions]\n\tobjectformat # c\n",
		"[extensions]\n\tobjectformat = sha1\n\tobjectformat = sha256\n",
		"[extensions]\n\tobjectformat = sha256\n[extensions]\n\tobjectformat = sha1\n",
		"[extensions \"x\"]\n\tobjectformat = sha256\n",
		"[extensions.x]\n\tobjectformat = sha256\n",
		"objectformat = sha256\n",
		"[extensions]\n\tobjectformat = sh\"a2\"56\n",
		"[extensions]\n\tobjectformat = \\x\n",
		"[extensions]\n\tobjectformat = a  b\t c   \n",
		"\xef\xbb\xbf[extensions]\nobjectformat=sha256\n",
		"# c\n; c\n[extensions] ; c\n objectformat = sha256\n",
		"[extensions]\n\t1objectformat = sha256\n",
		"[extensions]\n\tobject_format = sha256\n",
		"[]\nobjectformat = sha256\n",
		"[extensions]\n\tobjectformat = \"a\\\"b\\\\c\\td\"\n",
		"[extensions]\n\tobjectformat = sha256\\",
		"[extensions]\n\tobjectformat = \"sha256\\",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	atoms := []string{"[extensions]", "[Extensions]", "[core]", "[extensions \"s\"]", " ", "\t", "\n", "\r\n",
		"objectformat", "ObjectFormat", "objectFormat", "=", " = ", "sha256", "sha1", "\"", "\\", "\\\n",
		";", "#", "x", "-", "[", "]", "\\t", "\\n", "\\\"", "0"}
	for range 400 {
		var b strings.Builder
		for range 1 + rng.IntN(12) {
			b.WriteString(atoms[rng.IntN(len(atoms))])
		}
		cases = append(cases, b.String())
	}
	dir := t.TempDir()
	for i, c := range cases {
		path := filepath.Join(dir, "config")
		if err := os.WriteFile(path, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
		gv, gset, gok := gitConfigGet(t, path, "extensions.objectformat")
		ov, oset, ook := ourGet(c, "extensions", "objectformat")
		if !gok {
			// git refuses the file: so must we (what git would read as
			// unset we may still refuse; we never read what git refuses).
			if ook {
				t.Errorf("case %d %q: git refuses the file, parseConfig reads it (%q set=%v)", i, c, ov, oset)
			}
			continue
		}
		if !ook {
			t.Errorf("case %d %q: git reads the file (%q set=%v), parseConfig refuses it", i, c, gv, gset)
			continue
		}
		if gset != oset || gv != ov {
			t.Errorf("case %d %q: git says %q (set %v), parseConfig %q (set %v)", i, c, gv, gset, ov, oset)
		}
	}
}

// FuzzParseConfig: any bytes parse or are refused, never panic, and what
// parses names only lower-case sections and variable names of git's
// alphabet.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		"[core]\n\trepositoryformatversion = 1\n[extensions] objectformat = sha256\n",
		"[extensions \"x\"]\n\tobjectformat = \"a\\\"b\" ; c\n",
		"[a.B]\nk = v\\\nw\n", "\xef\xbb\xbfk", "[", "k = \"", "[x]\nk\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		vars, err := parseConfig(string(data))
		if err != nil {
			if !strings.Contains(err.Error(), "bad config line") {
				t.Fatalf("error %v", err)
			}
			return
		}
		for _, v := range vars {
			if v.name == "" || strings.ToLower(v.name) != v.name || !isAlpha(v.name[0]) {
				t.Fatalf("variable name %q", v.name)
			}
			if v.bare && v.value != "" {
				t.Fatalf("bare variable with value %q", v.value)
			}
		}
	})
}
