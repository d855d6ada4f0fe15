//go:build unix

package faults

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A message's input_file must stay inside the workspace, through symlinks
// too. The check resolved links with EvalSymlinks, which fails for a
// dangling one — and then skipped the check: a link to a file outside that
// does not exist yet (the routine, or anyone, can create it later) passed.
// Links are now read and resolved lexically, dangling or not.
func TestDecreeInputFileDanglingSymlink(t *testing.T) {
	e := newEnv(t)
	outside := t.TempDir()
	e.Write(map[string]string{
		".decree/routines/develop.sh": "#!/usr/bin/env bash\necho \"$spec_file\" >> ran.txt\n",
		"specs/real.md":               "a spec\n",
		".decree/inbox/1-abs.md":      "---\ninput_file: specs/abs.md\n---\n",
		".decree/inbox/2-rel.md":      "---\ninput_file: specs/rel.md\n---\n",
		".decree/inbox/3-dir.md":      "---\ninput_file: specs/outdir/x.md\n---\n",
		".decree/inbox/4-ok.md":       "---\ninput_file: specs/ok.md\n---\n",
		".decree/inbox/5-ok-later.md": "---\ninput_file: specs/later.md\n---\n",
	})
	for link, target := range map[string]string{
		"specs/abs.md":   filepath.Join(outside, "not-yet.md"),
		"specs/rel.md":   "../../" + filepath.Base(outside) + "/not-yet.md",
		"specs/outdir":   filepath.Join(outside, "gone"),
		"specs/ok.md":    "real.md",
		"specs/later.md": "sub/not-yet.md", // dangling, but inside
	} {
		if err := os.Symlink(target, filepath.Join(e.WS, filepath.FromSlash(link))); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs := e.Run("process")
	if code != 1 {
		t.Fatalf("ckpt process: exit %d, want 1\nstdout: %s\nstderr: %s", code, out, errs)
	}
	for _, name := range []string{"1-abs.md", "2-rel.md", "3-dir.md"} {
		if !strings.Contains(errs, "message "+name+": input_file ") || !exists(e, ".decree/inbox/"+name) {
			t.Errorf("%s was not refused and left in the inbox:\n%s", name, errs)
		}
	}
	if got := e.Read("ran.txt"); got != "specs/ok.md\nspecs/later.md\n" {
		t.Errorf("the routine ran for: %q", got)
	}
}
