package testutil

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// CkptBinary makes dir/ckpt, a symlink to the running test binary, and
// returns its path. A test package whose TestMain runs the CLI when
// invoked under the name "ckpt" can then run ckpt as a child process.
func CkptBinary(t testing.TB, dir string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "ckpt")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// Run runs c and returns its exit status, stdout and stderr. It fails the
// test when c cannot be run at all; a non-zero exit is only reported.
func Run(t testing.TB, c *exec.Cmd) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%s: %v", strings.Join(c.Args, " "), err)
		}
		code = ee.ExitCode()
	}
	return code, out.String(), errb.String()
}
