//go:build unix

package faults

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A routine can replace its run directory (.decree/runs/<id>, or .decree
// or runs above it) with a symlink to anywhere; ckpt then wrote the run's
// record, diffs and log links through it, outside the workspace. It now
// checks the run directory before it writes there, and stops the run.
func TestDecreeRunDirReplacedBySymlink(t *testing.T) {
	for name, script := range map[string]string{
		// mv, not rm -rf: ckpt writes the routine's log into the run
		// directory while it runs, and rm -rf racing that write can fail
		// to remove it (then the link lands inside and nothing is tried).
		"run directory": `mv "$message_dir" "$message_dir.moved"; ln -s "$OUTSIDE" "$message_dir"`,
		"runs":          `mv .decree/runs .decree/runs.moved; ln -s "$OUTSIDE" .decree/runs; mkdir -p "$message_dir"`,
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			outside := t.TempDir()
			e.Extra = append(e.Extra, "OUTSIDE="+outside)
			e.Write(map[string]string{"a.txt": "a\n"})
			code, out, errs := e.Run("run", "--id", "2026010100000000-0", "--", "sh", "-c", "echo b >> a.txt; "+script)
			if code == 0 || !strings.Contains(errs, "is not a directory (a symlink?); ckpt writes nothing through it") {
				t.Errorf("ckpt run: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
			}
			var written []string
			filepath.WalkDir(outside, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					written = append(written, p)
				}
				return nil
			})
			if len(written) > 0 {
				t.Errorf("ckpt wrote outside the workspace: %v", written)
			}
			e.Must("fsck")
		})
	}
}

// TestDecreeInboxDirsReplacedBySymlink: the same for the directories a
// message moves to (inbox/done, inbox/dead) and specs/, where a spec's
// message marks it processed.
func TestDecreeInboxDirsReplacedBySymlink(t *testing.T) {
	for name, c := range map[string]struct{ routine, msg string }{
		"inbox/done": {`rm -rf .decree/inbox/done; ln -s "$OUTSIDE" .decree/inbox/done`, "Do it.\n"},
		"inbox/dead": {`rm -rf .decree/inbox/dead; ln -s "$OUTSIDE" .decree/inbox/dead; exit 1`, "Fail.\n"},
		"specs":      {`mv specs specs.moved; ln -s "$OUTSIDE" specs`, "---\ninput_file: specs/a.spec.md\n---\n"},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			outside := t.TempDir()
			e.Extra = append(e.Extra, "OUTSIDE="+outside)
			e.Write(map[string]string{
				".decree/config.yml":                  "max_retries: 1\n",
				".decree/routines/develop.sh":         "#!/usr/bin/env bash\n" + c.routine + "\n",
				".decree/inbox/2026010100000000-0.md": c.msg,
				".decree/inbox/done/.keep":            "",
				".decree/inbox/dead/.keep":            "",
				"specs/a.spec.md":                     "a spec\n",
				"specs/processed-spec.md":             "a.spec.md\n",
			})
			code, out, errs := e.Run("process")
			if code == 0 || !strings.Contains(errs, "ckpt writes nothing through it") {
				t.Errorf("ckpt process: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
			}
			var written []string
			filepath.WalkDir(outside, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					written = append(written, p)
				}
				return nil
			})
			if len(written) > 0 {
				t.Errorf("ckpt wrote outside the workspace: %v", written)
			}
		})
	}
}
