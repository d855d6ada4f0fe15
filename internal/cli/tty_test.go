package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A ckpt command with its output on a terminal asks the terminal nothing:
// no background-colour query (OSC 11) and no cursor-position report
// (DSR 6n). Such a query costs a round trip per command (over ssh a
// network one), up to seconds when the terminal does not answer, and
// its answer can eat keys typed ahead. The terminal is util-linux's
// script(1), which gives ckpt a pty and copies all it writes to stdout.
func TestNoTerminalQueries(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Fatalf("this test needs script(1) from util-linux (Debian: bsdutils) to give ckpt a terminal: install it, e.g. apt-get install bsdutils (scripts/test does): %v", err)
	}
	r := newRunner(t)
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "CI", "TERM", "COLORTERM", "NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "TMUX", "STY":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "TERM=xterm-256color",
		"CKPT_STORE="+r.store, "XDG_STATE_HOME="+filepath.Dir(r.store), "CKPT_FAILPOINT=")
	for _, args := range []string{"status", "--version"} {
		c := exec.Command(script, "-q", "-e", "-c", shq(r.bin)+" "+args, "/dev/null")
		c.Dir, c.Env = r.ws, env
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		start := time.Now()
		err := c.Run()
		t.Logf("ckpt %s on a terminal took %v (exit: %v)", args, time.Since(start).Round(time.Millisecond), err)
		for _, q := range []string{"\x1b]11;", "\x1b[6n"} {
			if strings.Contains(out.String(), q) {
				t.Errorf("ckpt %s sent the terminal the query %q; it wrote:\n%q", args, q, out.String())
			}
		}
	}
}
