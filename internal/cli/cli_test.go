package cli

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	_ "time/tzdata" // scripts set TZ (gc_keep_buckets.txtar), whatever the machine has

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	_ "modernc.org/sqlite"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"ckpt": func() {
			// As cmd/ckpt does: SIGINT and SIGTERM cancel the context.
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			code := Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
			stop()
			os.Exit(code)
		},
		// ckpt-holdlock WORKSPACE MARKER DURATION: take the store lock of
		// WORKSPACE, create MARKER, hold the lock for DURATION.
		"ckpt-holdlock": func() {
			ctx := context.Background()
			r, err := ckpt.Open(ctx, os.Args[1], ckpt.Options{Store: os.Getenv("CKPT_STORE")})
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			d, _ := time.ParseDuration(os.Args[3])
			if err := r.HoldLock(ctx, func() {
				os.WriteFile(os.Args[2], []byte("locked\n"), 0o644)
				time.Sleep(d)
			}); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			os.Exit(0)
		},
	})
}

// keepWork reports whether -testwork asks to keep the scripts' files.
func keepWork() bool {
	f := flag.Lookup("testwork")
	return f != nil && f.Value.String() == "true"
}

func TestScripts(t *testing.T) {
	testscript.Run(t, scriptParams(t, "testdata/script"))
}

func scriptParams(t *testing.T, dir string) testscript.Params {
	// The scripts' common parent in TMPDIR must be gone once they all
	// ran: nothing of theirs is left behind.
	var mu sync.Mutex
	roots := map[string]bool{}
	t.Cleanup(func() {
		if t.Failed() || keepWork() {
			return
		}
		for root := range roots {
			ents, err := os.ReadDir(root)
			if err != nil {
				continue
			}
			if len(ents) == 0 {
				// testscript removes it after the last script; with -run
				// choosing some, that one never comes.
				os.Remove(root)
				continue
			}
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Errorf("the scripts left %s in TMPDIR, holding %v", root, names)
		}
	})
	return testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
		Setup: func(env *testscript.Env) error {
			mu.Lock()
			roots[filepath.Dir(env.WorkDir)] = true
			mu.Unlock()
			// Keep ckpt's state and testscript's TMPDIR out of the workspace.
			state := env.WorkDir + "-state"
			tmp := env.WorkDir + "-tmp"
			for _, d := range []string{state, tmp} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					return err
				}
			}
			os.RemoveAll(filepath.Join(env.WorkDir, ".tmp"))
			env.Setenv("TMPDIR", tmp)
			env.Setenv("XDG_STATE_HOME", state)
			env.Setenv("CKPT_STORE", filepath.Join(state, "store"))
			env.Setenv("STORE", filepath.Join(state, "store"))
			env.Setenv("HOME", state)
			env.Setenv("TZ", "UTC")
			// Agent hooks start a background watcher; scripts that want one
			// (hook_watch.txtar) clear this and stop it at the end.
			env.Setenv("CKPT_NO_WATCH", "1")
			// Agent hooks: the recorded payloads, and a directory outside
			// the workspace standing for the agent's own.
			hookdata, err := filepath.Abs("../hooks/testdata")
			if err != nil {
				return err
			}
			env.Setenv("HOOKDATA", hookdata)
			agentDir := env.WorkDir + "-agent"
			if err := os.MkdirAll(agentDir, 0o755); err != nil {
				return err
			}
			env.Setenv("AGENTDIR", agentDir)
			// OUT: for files a script keeps outside its workspace.
			out := env.WorkDir + "-out"
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			env.Setenv("OUT", out)
			// testscript removes the work directory, not these beside it
			// (nor then their parent in TMPDIR), unless -testwork keeps it.
			env.Defer(func() {
				if keepWork() {
					return
				}
				for _, d := range []string{state, tmp, agentDir, out} {
					os.RemoveAll(d)
				}
			})
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"mkfifo":      cmdMkfifo,
			"corrupt":     cmdCorrupt,
			"flipbyte":    cmdFlipByte,
			"waitfile":    cmdWaitfile,
			"writebytes":  cmdWriteBytes,
			"checkperm":   cmdCheckPerm,
			"issymlink":   cmdIsSymlink,
			"setmtime":    cmdSetMtime,
			"stdoutcount": cmdStdoutCount,
			"envstdout":   cmdEnvStdout,
			"envmatch":    cmdEnvMatch,
			"nodac":       cmdNoDAC,
			"notemp":      cmdNoTemp,
			"exits":       cmdExits,
			"signal":      cmdSignal,
			"hookpayload": cmdHookPayload,
		},
	}
}

// signal SIG PIDFILE: send SIG (TERM, INT, HUP) to the process whose pid is
// in PIDFILE (a routine writes its $PPID, ckpt's pid, there).
func cmdSignal(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: signal SIG pidfile")
	}
	sigs := map[string]syscall.Signal{"TERM": syscall.SIGTERM, "INT": syscall.SIGINT, "HUP": syscall.SIGHUP}
	sig, ok := sigs[args[0]]
	if !ok {
		ts.Fatalf("unknown signal %s", args[0])
	}
	data, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	ts.Check(err)
	p, err := os.FindProcess(pid)
	ts.Check(err)
	ts.Check(p.Signal(sig))
}

// mkfifo PATH
func cmdMkfifo(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: mkfifo path")
	}
	ts.Check(testutil.Mkfifo(ts.MkAbs(args[0]), 0o644))
}

// corrupt CONTENT: flip one bit of the stored blob whose content is CONTENT
// (quoted Go string), in the store database file itself.
func cmdCorrupt(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: corrupt content")
	}
	content, err := strconv.Unquote(`"` + args[0] + `"`)
	ts.Check(err)
	dbPath := filepath.Join(ts.Getenv("CKPT_STORE"), "ckpt.db")
	// Move everything from the WAL into the main file first.
	db, err := sql.Open("sqlite", "file:"+dbPath)
	ts.Check(err)
	_, err = db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	ts.Check(err)
	db.Close()
	data, err := os.ReadFile(dbPath)
	ts.Check(err)
	i := bytes.Index(data, []byte(content))
	if i < 0 {
		ts.Fatalf("content %q not found in %s", content, dbPath)
	}
	data[i+len(content)/2] ^= 0x01
	ts.Check(os.WriteFile(dbPath, data, 0o644))
}

// flipbyte PATH: flip the low bit of the byte in the middle of PATH (a
// remote's pack, say), in place.
func cmdFlipByte(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: flipbyte path")
	}
	p := ts.MkAbs(args[0])
	data, err := os.ReadFile(p)
	ts.Check(err)
	if len(data) == 0 {
		ts.Fatalf("%s is empty", args[0])
	}
	data[len(data)/2] ^= 0x01
	ts.Check(os.WriteFile(p, data, 0o644))
}

// waitfile PATH: wait up to 20s for PATH to exist.
func cmdWaitfile(ts *testscript.TestScript, neg bool, args []string) {
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(ts.MkAbs(args[0])); err == nil {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s did not appear", args[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// writebytes PATH QUOTED: write a Go-quoted string (binary allowed) to PATH.
// PATH itself may be Go-quoted to hold any bytes.
func cmdWriteBytes(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: writebytes path quoted-content")
	}
	name := args[0]
	if strings.HasPrefix(name, `"`) {
		var err error
		name, err = strconv.Unquote(name)
		ts.Check(err)
	}
	content, err := strconv.Unquote(`"` + args[1] + `"`)
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(name), []byte(content), 0o644))
}

// checkperm PERM PATH: the file's permission bits are PERM (octal).
func cmdCheckPerm(ts *testscript.TestScript, neg bool, args []string) {
	want, err := strconv.ParseUint(args[0], 8, 32)
	ts.Check(err)
	fi, err := os.Lstat(ts.MkAbs(args[1]))
	ts.Check(err)
	if got := uint64(fi.Mode().Perm()); (got == want) == neg {
		ts.Fatalf("%s has mode %o, want %s%o", args[1], got, map[bool]string{true: "not ", false: ""}[neg], want)
	}
}

// issymlink PATH TARGET: PATH is a symlink to TARGET.
func cmdIsSymlink(ts *testscript.TestScript, neg bool, args []string) {
	t, err := os.Readlink(ts.MkAbs(args[0]))
	ok := err == nil && t == args[1]
	if ok == neg {
		ts.Fatalf("%s: readlink = %q, %v; want symlink to %q (neg=%v)", args[0], t, err, args[1], neg)
	}
}

// setmtime PATH RFC3339: set the file's modification time.
func cmdSetMtime(ts *testscript.TestScript, neg bool, args []string) {
	tm, err := time.Parse(time.RFC3339, args[1])
	ts.Check(err)
	ts.Check(os.Chtimes(ts.MkAbs(args[0]), tm, tm))
}

// stdoutcount N REGEXP: exactly N lines of the last stdout match REGEXP.
func cmdStdoutCount(ts *testscript.TestScript, neg bool, args []string) {
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	for _, l := range strings.Split(ts.ReadFile("stdout"), "\n") {
		if strings.Contains(l, args[1]) {
			got++
		}
	}
	if got != n {
		ts.Fatalf("%d lines of stdout contain %q, want %d", got, args[1], n)
	}
}

// envstdout NAME: set $NAME to the first word of the last command's stdout.
func cmdEnvStdout(ts *testscript.TestScript, neg bool, args []string) {
	f := strings.Fields(ts.ReadFile("stdout"))
	if len(f) == 0 {
		ts.Fatalf("stdout is empty")
	}
	ts.Setenv(args[0], f[0])
}

// nodac PROG ARGS...: run PROG like exec, but subject to file permissions
// even as root (without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH).
func cmdNoDAC(ts *testscript.TestScript, neg bool, args []string) {
	if os.Getuid() == 0 {
		args = append([]string{"setpriv", "--bounding-set=-dac_override,-dac_read_search"}, args...)
	}
	err := ts.Exec(args[0], args[1:]...)
	if err != nil && !neg {
		ts.Fatalf("unexpected failure: %v", err)
	}
	if err == nil && neg {
		ts.Fatalf("unexpected success")
	}
}

// notemp: no ckpt temporary file or directory is left in $WORK.
func cmdNoTemp(ts *testscript.TestScript, neg bool, args []string) {
	var found []string
	filepath.WalkDir(ts.Getenv("WORK"), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".ckpt-tmp-") {
			found = append(found, p)
		}
		return nil
	})
	if (len(found) == 0) == neg {
		ts.Fatalf("ckpt temporary files: %v (neg=%v)", found, neg)
	}
}

// exits N PROG ARGS...: run PROG like exec and require exit status N.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		got = ee.ExitCode()
	} else if err != nil {
		ts.Fatalf("%v", err)
	}
	if (got == want) == neg {
		ts.Fatalf("exit status %d, want %d", got, want)
	}
}

var _ = errors.New
