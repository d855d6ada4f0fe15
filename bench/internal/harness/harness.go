// Package harness runs and times the commands the comparison benchmarks
// (bench/compare, bench/scale) measure: a child process with its peak
// memory, a bash script, the medians of repeated measurements, and the
// git-based snapshot methods ckpt is compared with.
package harness

import (
	"bufio"
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt/bench/internal/procstat"
	_ "modernc.org/sqlite" // StoreSize checkpoints ckpt's WAL
)

// GitEnv makes git runs reproducible: no system config, a fixed identity,
// no prompts.
var GitEnv = []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=b@x",
	"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=b@x", "GIT_TERMINAL_PROMPT=0"}

// Runner runs commands with HOME set to Home (so no user configuration
// reaches them).
type Runner struct {
	Home string
}

// Sh runs a command in wd with env added to the environment and returns
// its duration, its peak RSS (KB) and its trimmed standard output.
//
// The command is started by a fresh copy of the benchmark program (see
// relay): Go starts a child with the parent's memory mapped until the
// exec (vfork), and Linux counts what was resident then in the child's
// peak, so a child of the benchmark itself would report at least the
// benchmark's own memory (over 100 MB with a million file names held).
func (r Runner) Sh(env []string, wd string, name string, args ...string) (time.Duration, int64, string, error) {
	argv := append([]string{name}, args...)
	exe, exeErr := os.Executable()
	relayed := runtime.GOOS != "windows" && exeErr == nil
	var c *exec.Cmd
	var report, reportW *os.File
	if relayed {
		var err error
		if report, reportW, err = os.Pipe(); err != nil {
			return 0, 0, "", err
		}
		defer report.Close()
		c = exec.Command(exe, append([]string{relayArg}, argv...)...)
		c.ExtraFiles = []*os.File{reportW}
	} else {
		c = exec.Command(name, args...)
	}
	c.Dir = wd
	c.Env = append(append(os.Environ(), "HOME="+r.Home), env...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	start := time.Now()
	err := c.Run()
	d := time.Since(start)
	var rss int64
	if relayed {
		reportW.Close()
		// One line: a daemon the command left running never holds the
		// pipe (the relay keeps it from its children), but a line needs
		// no end of file.
		b, _ := bufio.NewReader(report).ReadString('\n')
		var ns int64
		if _, perr := fmt.Sscan(b, &ns, &rss); perr == nil {
			d = time.Duration(ns)
		} else if err == nil {
			err = fmt.Errorf("no report from the relay: %q", b)
		}
	} else if c.ProcessState != nil {
		rss = procstat.MaxRSSKB(c.ProcessState)
	}
	if err != nil {
		return d, rss, out.String(), fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, errb.String())
	}
	return d, rss, strings.TrimSpace(out.String()), nil
}

// relayArg as a benchmark program's first argument makes it run the
// command that follows and write its duration (ns) and peak RSS (KB) to
// descriptor 3 (see Sh); it exits with the command's status.
const relayArg = "-bench-harness-relay"

func init() {
	if len(os.Args) > 2 && os.Args[1] == relayArg {
		os.Exit(relay(os.Args[2:]))
	}
}

func relay(argv []string) int {
	procstat.CloseOnExec(3)
	report := os.NewFile(3, "report")
	c := exec.Command(argv[0], argv[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := c.Run()
	d := time.Since(start)
	var rss int64
	if c.ProcessState != nil {
		rss = procstat.MaxRSSKB(c.ProcessState)
	}
	fmt.Fprintf(report, "%d %d\n", d.Nanoseconds(), rss)
	report.Close()
	if err == nil {
		return 0
	}
	if c.ProcessState != nil && c.ProcessState.ExitCode() > 0 {
		return c.ProcessState.ExitCode()
	}
	fmt.Fprintln(os.Stderr, err)
	return 127
}

// Bash runs a script with bash -euo pipefail; its duration includes
// everything the script runs.
func (r Runner) Bash(env []string, wd, script string) (time.Duration, string, error) {
	d, _, out, err := r.Sh(env, wd, "bash", "-euo", "pipefail", "-c", script)
	return d, out, err
}

// Result is the summary of one measurement's runs.
type Result struct {
	Name   string        `json:"name"`
	Median time.Duration `json:"median_ns"`
	Min    time.Duration `json:"min_ns"`
	Runs   int           `json:"runs"`
	MaxRSS int64         `json:"max_rss_kb,omitempty"`
	// RSS is each run's peak RSS (KB), in order, where it was measured.
	RSS []int64 `json:"rss_kb,omitempty"`

	all []time.Duration
}

// Results collects the runs of named measurements.
type Results map[string]*Result

// Record adds one run of the measurement name.
func (rs Results) Record(name string, d time.Duration, rssKB int64) {
	r := rs[name]
	if r == nil {
		r = &Result{Name: name}
		rs[name] = r
	}
	r.Runs++
	r.all = append(r.all, d)
	r.MaxRSS = max(r.MaxRSS, rssKB)
	if rssKB > 0 {
		r.RSS = append(r.RSS, rssKB)
	}
	s := slices.Clone(r.all)
	slices.Sort(s)
	r.Median, r.Min = s[len(s)/2], s[0]
}

// Median returns the median of the measurement name, 0 if it has no runs.
func (rs Results) Median(name string) time.Duration {
	if r := rs[name]; r != nil {
		return r.Median
	}
	return 0
}

// MedianInt is the median of xs (the upper one for an even count), 0 for
// none.
func MedianInt(xs []int64) int64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// Settle flushes other processes' dirty data (untimed), so a measurement
// that fsyncs pays only for its own writes (ext4 commits all ordered data).
func Settle() { procstat.SyncAll() }

// StoreSize is the size of ckpt's sqlite database in store after moving
// the WAL into it (the stat cache, rewritten by every save at a constant
// size, is left out).
func StoreSize(store string) int64 {
	path := filepath.Join(store, "ckpt.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err == nil {
		db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
		db.Close()
	}
	var n int64
	for _, f := range []string{"ckpt.db", "ckpt.db-wal"} {
		if fi, err := os.Stat(filepath.Join(store, f)); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// SandboxSnapshot is the sandbox snapshot tools' snapshot_create, as a
// bash script run in the workspace: a temporary index, git add --all,
// write-tree, commit-tree, update-ref refs/sandbox/snapshots/NAME.
func SandboxSnapshot(name string) string {
	return fmt.Sprintf(`idx=$(mktemp -u) && export GIT_INDEX_FILE=$idx
git add --all && tree=$(git write-tree) && c=$(git commit-tree $tree -m "snapshot %s")
git update-ref refs/sandbox/snapshots/%s $c && rm -f $idx`, name, name)
}

// SandboxRestore is the sandbox snapshot tools' snapshot_restore of rev:
// inventory, read-tree into a temporary index, checkout-index -a -f,
// remove what the snapshot lacks, prune empty directories.
func SandboxRestore(rev string) string {
	return fmt.Sprintf(`idx=$(mktemp -u) && export GIT_INDEX_FILE=$idx
before=$(mktemp) && after=$(mktemp)
git ls-files -z > /dev/null
git add --all && git ls-files > $before
rm -f $idx
git read-tree %s
git checkout-index -a -f
git ls-files > $after
comm -23 <(sort $before) <(sort $after) | while IFS= read -r p; do rm -f -- "$p"; done
find . -mindepth 1 -type d -empty -not -path "./.git/*" -delete
rm -f $idx $before $after`, rev)
}

// Shadow returns the git command prefix for a Gemini-CLI-style shadow
// repository: the git directory gitDir with the workspace work as its work
// tree.
func Shadow(gitDir, work string) string {
	return fmt.Sprintf("git --git-dir=%q --work-tree=%q", gitDir, work)
}

// LoadAvg is the 1, 5 and 15-minute load averages ("?" where unknown):
// results on a shared machine are noted with it.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// Machine describes the CPU model, the number of CPUs and the platform.
func Machine() string {
	model := "?"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%s, %d CPUs, %s/%s", model, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)
}
