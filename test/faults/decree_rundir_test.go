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
		"run directory": `rm -rf "$message_dir"; ln -s "$OUTSIDE" "$message_dir"`,
		"runs":          `mv .decree/runs .decree/runs.moved; ln -s "$OUTSIDE" .decree/runs; mkdir -p "$message_dir"`,
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			outside := t.TempDir()
			e.extra = append(e.extra, "OUTSIDE="+outside)
			e.write(map[string]string{"a.txt": "a\n"})
			code, out, errs := e.run("run", "--id", "2026010100000000-0", "--", "sh", "-c", "echo b >> a.txt; "+script)
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
			e.must("fsck")
		})
	}
}
