// Command scale measures how the cost of every ckpt operation grows with
// the size of the tree, beside git status, a shadow repository and the
// sandbox snapshot tools' method, one run per tree size, and writes the
// table (markdown), the numbers (JSON) and a chart (SVG) of cost against
// tree size. bench/scale.sh builds ckpt and runs it; docs/benchmarks.md,
// "How cost grows with tree size", records the results.
//
//	bench/scale.sh -sizes 10000,100000 -reps 5
//	bench/scale.sh -sizes 1000000 -reps 3 -slow-reps 1
//	bench/scale.sh -render a.json,b.json     # one table and chart from earlier runs
//
// For each size it generates the tree (-corpus gen: source-like files of
// 3.7 KB on average; tiny: 0-200 bytes), commits it to its own git
// repository (untimed setup), then times -reps 20-file turns (bench.TurnIn)
// and, after them, gc and fsck.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt/bench"
	"github.com/seed1cedbf7c/ckpt/bench/internal/harness"
)

var (
	sizesFlag  = flag.String("sizes", "10000,100000,1000000", "tree sizes (files), comma-separated")
	corpus     = flag.String("corpus", "gen", "corpus: gen (source-like, 3.7 KB mean) or tiny (0-200 bytes per file)")
	dir        = flag.String("dir", filepath.Join(os.TempDir(), "ckpt-scale"), "work directory (1M gen files need ~15 GB)")
	out        = flag.String("out", "", "directory for scale.md, scale.json and scale.svg (default: -dir)")
	ckptBin    = flag.String("ckpt", "ckpt", "ckpt binary")
	reps       = flag.Int("reps", 5, "20-file turns, and runs of each repeatable measurement (median reported)")
	slowReps   = flag.Int("slow-reps", 0, "runs of the slow steps: cold saves, gc, fsck, the sandbox tools' restore (0: -reps)")
	sandboxMax = flag.Int("sandbox-restore-max", 100000, "measure the sandbox tools' restore (rewrites every file) only up to this many files; 0: never")
	setupOnly  = flag.Bool("setup-only", false, "generate and commit the trees, measure nothing (a later run reuses them)")
	keep       = flag.Bool("keep", false, "keep each size's trees and stores (default: delete them when the size is done)")
	render     = flag.String("render", "", "measure nothing: write the table and chart from these JSON files (comma-separated)")
)

// Measurements, by name (the JSON's and the table's keys).
const (
	mStatus   = "git status"
	mCat      = "cat | sha256sum (all files)"
	mCold     = "ckpt save (cold)"
	mTurn     = "ckpt save (20-file turn)"
	mWatch    = "ckpt save, watch mode (20-file turn)"
	mRestore  = "ckpt restore (20-file turn)"
	mDiff     = "ckpt diff (20-file turn)"
	mLog      = "ckpt log"
	mGC       = "ckpt gc"
	mFsck     = "ckpt fsck"
	sCold     = "shadow repo (cold)"
	sTurn     = "shadow repo (20-file turn)"
	sRestore  = "shadow repo restore (20-file turn)"
	sDiff     = "shadow repo git diff (20-file turn)"
	sLog      = "shadow repo git log"
	sGC       = "shadow repo git gc"
	sFsck     = "shadow repo git fsck"
	xSnapshot = "sandbox tools snapshot (20-file turn)"
	xRestore  = "sandbox tools restore (20-file turn)"
)

// sizeRun is one size's run: what the JSON holds and the table shows.
type sizeRun struct {
	Corpus     string            `json:"corpus"`
	Files      int               `json:"files"`
	Bytes      int64             `json:"bytes"`
	Date       string            `json:"date"`
	LoadBefore string            `json:"loadavg_before"`
	LoadAfter  string            `json:"loadavg_after"`
	Reps       int               `json:"reps"`
	SlowReps   int               `json:"slow_reps"`
	Results    []*harness.Result `json:"results"`
	// Median store growth per 20-file turn, in bytes: ckpt's database
	// (WAL checkpointed) and the shadow repository's directory.
	CkptGrowth   int64             `json:"ckpt_growth_bytes"`
	ShadowGrowth int64             `json:"shadow_growth_bytes"`
	Skipped      map[string]string `json:"skipped,omitempty"`
}

func (s *sizeRun) get(name string) *harness.Result {
	for _, r := range s.Results {
		if r.Name == name {
			return r
		}
	}
	return nil
}

type report struct {
	Machine string    `json:"machine"`
	Git     string    `json:"git"`
	Go      string    `json:"go"`
	Command string    `json:"command"`
	Sizes   []sizeRun `json:"sizes"`
}

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

func run() error {
	if *out == "" {
		*out = *dir
	}
	if *slowReps <= 0 {
		*slowReps = *reps
	}
	if *render != "" {
		var rep report
		for _, p := range strings.Split(*render, ",") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			var r report
			if err := json.Unmarshal(b, &r); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			if rep.Machine == "" {
				rep = r
				continue
			}
			rep.Command += "\n" + r.Command
			rep.Sizes = append(rep.Sizes, r.Sizes...)
		}
		return write(rep)
	}
	var sizes []int
	for _, s := range strings.Split(*sizesFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < bench.TurnFiles*5 {
			return fmt.Errorf("-sizes: %q is not a size of at least %d files", s, bench.TurnFiles*5)
		}
		sizes = append(sizes, n)
	}
	gitVersion, _ := exec.Command("git", "--version").Output()
	rep := report{
		Machine: harness.Machine(),
		Git:     strings.TrimSpace(string(gitVersion)),
		Go:      runtime.Version(),
		Command: command(),
	}
	for _, n := range sizes {
		m := &measurer{n: n, base: filepath.Join(*dir, fmt.Sprintf("%s-%d", *corpus, n))}
		if err := m.setup(); err != nil {
			return fmt.Errorf("%d files: %w", n, err)
		}
		if *setupOnly {
			continue
		}
		sr, err := m.measure()
		if err != nil {
			return fmt.Errorf("%d files: %w", n, err)
		}
		rep.Sizes = append(rep.Sizes, sr)
		if !*keep {
			progress("removing %s", m.base)
			os.RemoveAll(m.base)
		}
		// Write after every size, so a long run's finished sizes are kept.
		if err := write(rep); err != nil {
			return err
		}
	}
	return nil
}

// write prints the table and writes scale.md, scale.json and scale.svg
// into -out.
func write(rep report) error {
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	md := markdown(rep)
	fmt.Print(md)
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	var svg strings.Builder
	if err := chart(&svg, rep); err != nil {
		return err
	}
	for name, data := range map[string][]byte{"scale.md": []byte(md), "scale.json": js, "scale.svg": []byte(svg.String())} {
		if err := os.WriteFile(filepath.Join(*out, name), data, 0o644); err != nil {
			return err
		}
	}
	progress("wrote %s/scale.{md,json,svg}", *out)
	return nil
}

// command is the run's command line as bench/scale.sh takes it (without
// the work directory and binary the script passes).
func command() string {
	c := "bench/scale.sh"
	flag.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "dir", "ckpt", "out":
		default:
			c += fmt.Sprintf(" -%s %s", f.Name, f.Value)
		}
	})
	return c
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}
