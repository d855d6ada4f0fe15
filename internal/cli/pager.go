package cli

import (
	"errors"
	"fmt"
	"strings"

	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/term"
)

// pagerCommand returns the pager to run, as git chooses it: $CKPT_PAGER,
// else $PAGER, else less; "" (none) when the one set is empty or "cat".
func pagerCommand() string {
	p, ok := os.LookupEnv("CKPT_PAGER")
	if !ok {
		p, ok = os.LookupEnv("PAGER")
	}
	if !ok {
		p = "less"
	}
	if p == "cat" {
		return ""
	}
	return p
}

// pagerTerminal reports whether stdout is a terminal, for the pager:
// CKPT_PAGER_FORCE=1 (for tests) says it is.
func (e *env) pagerTerminal() bool {
	return isTerminal(e.stdout) || os.Getenv("CKPT_PAGER_FORCE") == "1"
}

// withPager runs fn with stdout piped through the pager when stdout is a
// terminal, as git does for long output, with LESS=FRX unless LESS is set
// (quit if one screen, keep colours, no screen clearing) and LV=-c. A
// pager that is a plain command line runs directly, so one that does not
// exist is reported and skipped, the output written as it is; others run
// with the shell. A pager the user quits early (it exits 0) ends the
// output quietly; one that fails is an error, so a script never takes
// "nothing shown" for success.
func (e *env) withPager(noPager bool, fn func() error) error {
	p := pagerCommand()
	if noPager || p == "" || !e.pagerTerminal() {
		return fn()
	}
	var cmd *exec.Cmd
	if !strings.ContainsAny(p, shellMeta) {
		path, err := exec.LookPath(p)
		if err != nil {
			e.warnf("warning: cannot run the pager %q: not found; writing the output directly (set CKPT_PAGER, or --no-pager)", p)
			return fn()
		}
		cmd = exec.Command(path)
	} else {
		cmd = exec.Command("sh", "-c", p)
	}
	cmd.Env = os.Environ()
	if _, ok := os.LookupEnv("LESS"); !ok {
		cmd.Env = append(cmd.Env, "LESS=FRX")
	}
	if _, ok := os.LookupEnv("LV"); !ok {
		cmd.Env = append(cmd.Env, "LV=-c")
	}
	cmd.Stdout, cmd.Stderr = e.stdout, e.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return fn()
	}
	if err := cmd.Start(); err != nil {
		in.Close()
		e.warnf("warning: cannot run the pager %q (%v); writing the output directly", p, err)
		return fn()
	}
	out := e.stdout
	e.stdout = in
	err = fn()
	e.stdout = out
	in.Close()
	werr := cmd.Wait()
	quit := errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed)
	if werr != nil {
		var ee *exec.ExitError
		if !errors.As(werr, &ee) {
			return werr
		}
		if err == nil || quit {
			// The output went to a pager that failed: nothing trustworthy
			// was shown.
			return fmt.Errorf("the pager %q failed (%v); run with --no-pager, or set CKPT_PAGER", p, werr)
		}
	}
	if quit {
		return nil // the user quit the pager
	}
	return err
}

// shellMeta are the characters that make a pager command line need the
// shell, as git decides.
const shellMeta = "|&;<>()$`\\\"' \t\n*?[#~=%"

// colorOn decides --color=WHEN: always, never, or auto (on when stdout
// is a terminal and NO_COLOR is unset or empty).
func (e *env) colorOn(when string) (bool, error) {
	switch when {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto", "":
		return isTerminal(e.stdout) && os.Getenv("NO_COLOR") == "", nil
	}
	return false, usagef("--color=%s: want auto, always or never", when)
}

// columns is the width git fits --stat into: $COLUMNS, else the
// terminal's width, else 80.
func (e *env) columns() int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if f, ok := e.stdout.(*os.File); ok && isTerminal(f) {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	return 80
}
