// Command compare times ckpt against the git-based snapshot methods it
// replaces, on the same generated tree, in one run, and prints ratios.
// bench/compare.sh builds ckpt and runs it; docs/benchmarks.md records the
// results.
//
// Methods:
//   - git status on the tree committed to its own repository (the floor a
//     per-turn checkpoint is compared with);
//   - cat | sha256sum of every file (the floor for a cold checkpoint);
//   - the sandbox snapshot tools' snapshot: a temporary GIT_INDEX_FILE, git add --all,
//     write-tree, commit-tree, update-ref; and its restore: read-tree into a
//     temporary index, checkout-index -a -f, remove extra files;
//   - a Gemini-CLI-style shadow repository (separate git dir, work tree =
//     the workspace): git add -A + git commit per turn; restore with git
//     restore --source=C . and git clean -fd;
//   - ckpt save / ckpt restore (sqlite backend);
//   - the same on ckpt's git backend (--backend git), whose every
//     checkpoint is also exported as a detached commit with a ref into the
//     workspace's own repository: the like-for-like comparison with seed
//     002's snapshot, which does the same with git add, write-tree,
//     commit-tree and update-ref.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt/bench"
	"github.com/seed1cedbf7c/ckpt/bench/internal/harness"
)

var (
	files    = flag.Int("files", 100000, "number of files in the generated corpus")
	corpus   = flag.String("corpus", "gen", "corpus: gen (generated) or gosrc (a copy of $GOROOT/src)")
	dir      = flag.String("dir", filepath.Join(os.TempDir(), "ckpt-bench"), "work directory (needs ~4x the corpus size)")
	ckptBin  = flag.String("ckpt", "ckpt", "ckpt binary")
	turns    = flag.Int("turns", 5, "agent turns to measure")
	reps     = flag.Int("reps", 5, "repetitions of repeatable measurements (median reported)")
	seedRest = flag.Bool("sandbox-restore", true, "measure the sandbox snapshot tools' restore (slow: rewrites every file)")
	jsonOut  = flag.String("json", "", "also write results as JSON to this file")
)

var (
	results = harness.Results{}
	record  = results.Record
	runner  harness.Runner
	gitEnv  = harness.GitEnv
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

func sh(env []string, wd string, name string, args ...string) (time.Duration, int64, string, error) {
	return runner.Sh(env, wd, name, args...)
}

func bash(env []string, wd, script string) (time.Duration, string, error) {
	return runner.Bash(env, wd, script)
}

func mustBash(env []string, wd, script string) time.Duration {
	d, _, err := bash(env, wd, script)
	if err != nil {
		panic(err)
	}
	return d
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func run() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	runner.Home = filepath.Join(*dir, "home")
	if err := os.MkdirAll(runner.Home, 0o755); err != nil {
		return err
	}
	work := filepath.Join(*dir, "work")
	store := filepath.Join(*dir, "ckpt-store")
	shadow := filepath.Join(*dir, "shadow.git")
	for _, p := range []string{work, store, shadow} {
		os.RemoveAll(p)
	}
	n := *files
	fmt.Fprintf(os.Stderr, "== corpus %s (%d files) in %s\n", *corpus, n, work)
	var c bench.Corpus
	switch *corpus {
	case "gen":
		c = must(bench.Generate(work, n, 1))
	case "gosrc":
		goroot := strings.TrimSpace(string(must(exec.Command("go", "env", "GOROOT").Output())))
		mustBash(nil, *dir, fmt.Sprintf("cp -a %q %q", filepath.Join(goroot, "src"), work))
		filepath.WalkDir(work, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				fi, _ := d.Info()
				c.Files++
				c.Bytes += fi.Size()
			}
			return nil
		})
		*seedRest = false
	default:
		return fmt.Errorf("unknown corpus %q", *corpus)
	}
	fmt.Fprintf(os.Stderr, "   %d files, %.0f MB\n", c.Files, float64(c.Bytes)/1e6)

	// The user's repository: everything committed (untimed setup).
	fmt.Fprintln(os.Stderr, "== git init + add + commit of the workspace (setup)")
	mustBash(gitEnv, work, "git init -q -b main . && git add -A && git -c gc.auto=0 commit -q -m init && git gc -q")
	// Each ckpt backend is named explicitly: with both stores present,
	// ckpt would not guess.
	ckptEnv := []string{"CKPT_STORE=" + store, "CKPT_BACKEND=sqlite"}
	ckptGitEnv := []string{"CKPT_STORE=" + store, "CKPT_BACKEND=git"}
	// A second sqlite store whose saves have a watcher (watch mode), like
	// the git backend's below: the mode agent hooks run in.
	watchStore := filepath.Join(*dir, "ckpt-store-watch")
	os.RemoveAll(watchStore)
	ckptWatchEnv := []string{"CKPT_STORE=" + watchStore, "CKPT_BACKEND=sqlite"}

	// Floors.
	fmt.Fprintln(os.Stderr, "== floors: git status, cat | sha256sum")
	for i := 0; i < *reps; i++ {
		d, rss, _, err := sh(gitEnv, work, "git", "status", "--porcelain")
		check(err)
		record("git status", d, rss)
		d = mustBash(nil, work, "find . -path ./.git -prune -o -type f -print0 | xargs -0 cat | sha256sum >/dev/null")
		record("cat | sha256sum (all files)", d, 0)
	}

	// Cold first checkpoints.
	fmt.Fprintln(os.Stderr, "== cold: ckpt save, shadow repository")
	for i := 0; i < 2; i++ {
		os.RemoveAll(store)
		settle()
		d, rss, _, err := sh(ckptEnv, work, *ckptBin, "save", "-q", "-m", "cold")
		check(err)
		record("ckpt save (cold)", d, rss)
	}
	settle()
	d, _, err2 := bash(gitEnv, work, fmt.Sprintf("git --git-dir=%q --work-tree=%q init -q && git --git-dir=%q --work-tree=%q add -A && git --git-dir=%q --work-tree=%q -c gc.auto=0 commit -q -m cold",
		shadow, work, shadow, work, shadow, work))
	if err2 != nil {
		return err2
	}
	record("shadow repo (cold)", d, 0)
	// A shadow repository that has been in use is packed (its first commit
	// triggers git's auto-gc); pack it (untimed) so the turns below see the
	// steady state, with git's default gc settings.
	mustBash(gitEnv, work, fmt.Sprintf("git --git-dir=%q gc -q", shadow))
	// the sandbox snapshot tools' snapshot of the state before the first turn (untimed).
	mustBash(gitEnv, work, harness.SandboxSnapshot("turn0"))
	// ckpt's git backend: its first checkpoint exports the whole tree into
	// the workspace's repository (most objects are already there, committed).
	settle()
	d, rss, _, err := sh(ckptGitEnv, work, *ckptBin, "snapshot", "create", "turn0", "-d", "cold")
	check(err)
	record("ckpt git snapshot create (cold)", d, rss)
	must2(sh(ckptWatchEnv, work, *ckptBin, "save", "-q", "-m", "cold"))
	// Watchers for the watch-mode store and the git backend.
	must2(sh(ckptWatchEnv, work, *ckptBin, "watch", "-d", "--idle", "1h"))
	must2(sh(ckptGitEnv, work, *ckptBin, "watch", "-d", "--idle", "1h"))
	defer sh(ckptWatchEnv, work, *ckptBin, "watch", "--stop")
	defer sh(ckptGitEnv, work, *ckptBin, "watch", "--stop")
	// Make ckpt's stat cache trusted (files written before the clock), and
	// give the watched stores a cache with the watchers' tokens.
	time.Sleep(10 * time.Millisecond)
	sh(ckptEnv, work, *ckptBin, "save", "-q")
	sh(ckptGitEnv, work, *ckptBin, "save", "-q")
	sh(ckptWatchEnv, work, *ckptBin, "save", "-q")

	var ckptGrowth, shadowGrowth []int64
	list, err := bench.Files(work)
	if err != nil {
		return err
	}
	for t := 1; t <= *turns; t++ {
		fmt.Fprintf(os.Stderr, "== turn %d\n", t)
		if list, err = bench.TurnIn(work, list, t); err != nil {
			return err
		}
		// Checkpoints of the turn, each method on the same tree.
		s0 := harness.StoreSize(store)
		settle()
		d, rss, _, err := sh(ckptEnv, work, *ckptBin, "save", "-q", "--kind", "turn", "-m", fmt.Sprint("turn ", t))
		check(err)
		record("ckpt save (20-file turn)", d, rss)
		ckptGrowth = append(ckptGrowth, harness.StoreSize(store)-s0)

		settle()
		d, rss, _, err = sh(ckptWatchEnv, work, *ckptBin, "save", "-q", "--kind", "turn", "-m", fmt.Sprint("turn ", t))
		check(err)
		record("ckpt save, watch mode (20-file turn)", d, rss)

		g0 := bench.DirSize(shadow)
		settle()
		d, _, err = bash(gitEnv, work, fmt.Sprintf("git --git-dir=%q --work-tree=%q add -A && git --git-dir=%q --work-tree=%q commit -q -m turn%d", shadow, work, shadow, work, t))
		check(err)
		record("shadow repo (20-file turn)", d, 0)
		shadowGrowth = append(shadowGrowth, bench.DirSize(shadow)-g0)

		settle()
		d, _, err = bash(gitEnv, work, harness.SandboxSnapshot(fmt.Sprint("turn", t)))
		check(err)
		record("sandbox tools snapshot (20-file turn)", d, 0)

		// The git backend (with its watcher): a named snapshot, as the sandbox snapshot tools'
		// snapshot_create: checkpoint + export of the new objects, a commit
		// and its refs (refs/ckpt/snapshots/turnN and the timeline's).
		settle()
		d, rss, _, err = sh(ckptGitEnv, work, *ckptBin, "snapshot", "create", fmt.Sprint("turn", t), "-d", fmt.Sprint("turn ", t))
		check(err)
		record("ckpt git snapshot create, watch mode (20-file turn)", d, rss)

		// Restores of the turn (back to the state before it), each followed
		// by an untimed return to the turn's state.
		settle()
		d, _, _, err = sh(ckptEnv, work, *ckptBin, "restore", "-q", "HEAD~1")
		check(err)
		record("ckpt restore (20-file turn)", d, 0)
		// Return with ckpt redo (untimed) so every method starts from the turn.
		must2(sh(ckptEnv, work, *ckptBin, "undo", "-q"))

		settle()
		d, _, _, err = sh(ckptGitEnv, work, *ckptBin, "snapshot", "restore", fmt.Sprint("turn", t-1))
		check(err)
		record("ckpt git snapshot restore (20-file turn)", d, 0)
		must2(sh(ckptGitEnv, work, *ckptBin, "undo", "-q"))

		settle()
		d, _, err = bash(gitEnv, work, fmt.Sprintf("git --git-dir=%q --work-tree=%q restore --source=HEAD~1 :/ && git --git-dir=%q --work-tree=%q clean -fdq", shadow, work, shadow, work))
		check(err)
		record("shadow repo restore (20-file turn)", d, 0)
		must2(sh(ckptEnv, work, *ckptBin, "restore", "-q", "HEAD"))

		if *seedRest && t == 1 {
			settle()
			d, _, err = bash(gitEnv, work, harness.SandboxRestore(fmt.Sprintf("refs/sandbox/snapshots/turn%d", t-1)))
			check(err)
			record("sandbox tools restore (20-file turn)", d, 0)
			must2(sh(ckptEnv, work, *ckptBin, "restore", "-q", "HEAD"))
			// the sandbox snapshot tools' restore rewrote every file: let the git backend's
			// stat cache see them again (untimed; nothing to record), as the
			// sqlite backend's did in the restore above.
			must2(sh(ckptGitEnv, work, *ckptBin, "save", "-q"))
			must2(sh(ckptWatchEnv, work, *ckptBin, "save", "-q"))
		}
	}
	report(c, ckptGrowth, shadowGrowth)
	return nil
}

func check(err error) {
	if err != nil {
		panic(err)
	}
}

func settle() { harness.Settle() }

func must2(_ time.Duration, _ int64, _ string, err error) {
	if err != nil {
		panic(err)
	}
}

func report(c bench.Corpus, ckptGrowth, shadowGrowth []int64) {
	get := results.Median
	names := []string{"git status", "cat | sha256sum (all files)", "ckpt save (cold)", "ckpt git snapshot create (cold)", "shadow repo (cold)",
		"ckpt save (20-file turn)", "ckpt save, watch mode (20-file turn)", "ckpt git snapshot create, watch mode (20-file turn)", "shadow repo (20-file turn)", "sandbox tools snapshot (20-file turn)",
		"ckpt restore (20-file turn)", "ckpt git snapshot restore (20-file turn)", "shadow repo restore (20-file turn)", "sandbox tools restore (20-file turn)"}
	fmt.Printf("corpus: %d files, %.0f MB; %s\n\n", c.Files, float64(c.Bytes)/1e6, time.Now().UTC().Format("2006-01-02"))
	fmt.Println("| measurement | median | min | runs | peak RSS |")
	fmt.Println("|---|---:|---:|---:|---:|")
	for _, n := range names {
		r := results[n]
		if r == nil {
			continue
		}
		rss := ""
		if r.MaxRSS > 0 {
			rss = fmt.Sprintf("%.0f MB (%.0f B/file)", float64(r.MaxRSS)/1024, float64(r.MaxRSS)*1024/float64(c.Files))
		}
		fmt.Printf("| %s | %s | %s | %d | %s |\n", n, r.Median.Round(time.Millisecond), r.Min.Round(time.Millisecond), r.Runs, rss)
	}
	cg, sg := harness.MedianInt(ckptGrowth), harness.MedianInt(shadowGrowth)
	fmt.Printf("\nstore growth per 20-file turn (median): ckpt %d KB, shadow repository %d KB\n\n", cg/1024, sg/1024)
	ratio := func(a, b time.Duration) string {
		if a == 0 || b == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.2f", float64(a)/float64(b))
	}
	fmt.Println("| target | ratio | goal |")
	fmt.Println("|---|---:|---|")
	turn := get("ckpt save (20-file turn)")
	fmt.Printf("| ckpt turn / git status | %s | <= 1.0 |\n", ratio(turn, get("git status")))
	fmt.Printf("| sandbox tools snapshot / ckpt turn | %s | >= 10 |\n", ratio(get("sandbox tools snapshot (20-file turn)"), turn))
	fmt.Printf("| shadow repo turn / ckpt turn | %s | >= 2 |\n", ratio(get("shadow repo (20-file turn)"), turn))
	fmt.Printf("| ckpt cold / cat+sha256sum | %s | <= 2 |\n", ratio(get("ckpt save (cold)"), get("cat | sha256sum (all files)")))
	if sg > 0 {
		fmt.Printf("| ckpt store growth / shadow growth | %.2f | <= 0.5 |\n", float64(cg)/float64(sg))
	}
	rest := get("ckpt restore (20-file turn)")
	fmt.Printf("| ckpt restore / shadow restore | %s | <= 1.0 |\n", ratio(rest, get("shadow repo restore (20-file turn)")))
	fmt.Printf("| ckpt restore / ckpt turn | %s | <= 2.0 |\n", ratio(rest, turn))
	fmt.Printf("| sandbox tools restore / ckpt restore | %s | (sandbox tools: 21 s measured) |\n", ratio(get("sandbox tools restore (20-file turn)"), rest))
	gturn, grest := get("ckpt git snapshot create, watch mode (20-file turn)"), get("ckpt git snapshot restore (20-file turn)")
	fmt.Printf("| sandbox tools snapshot / ckpt git snapshot (20-file turn) | %s | >= 10 |\n", ratio(get("sandbox tools snapshot (20-file turn)"), gturn))
	fmt.Printf("| sandbox tools restore / ckpt git restore (20-file turn) | %s | >= 10 |\n", ratio(get("sandbox tools restore (20-file turn)"), grest))
	wturn := get("ckpt save, watch mode (20-file turn)")
	fmt.Printf("| ckpt turn / ckpt turn in watch mode | %s | |\n", ratio(turn, wturn))
	fmt.Printf("| git status / ckpt turn in watch mode | %s | |\n", ratio(get("git status"), wturn))
	fmt.Printf("| sandbox tools snapshot / ckpt turn in watch mode | %s | >= 10 |\n", ratio(get("sandbox tools snapshot (20-file turn)"), wturn))
	fmt.Printf("| ckpt git turn / ckpt sqlite turn, both in watch mode (cost of the export) | %s | |\n", ratio(gturn, wturn))
	fmt.Printf("| ckpt git restore / ckpt sqlite restore | %s | |\n", ratio(grest, rest))
	if r := results["ckpt save (cold)"]; r != nil {
		fmt.Printf("| ckpt peak memory per file (cold save) | %.0f B | <= 300 B |\n", float64(r.MaxRSS)*1024/float64(c.Files))
	}
	if r := results["ckpt save (20-file turn)"]; r != nil {
		fmt.Printf("| ckpt peak memory per file (turn) | %.0f B | <= 300 B |\n", float64(r.MaxRSS)*1024/float64(c.Files))
	}
	if *jsonOut != "" {
		var rs []*harness.Result
		for _, n := range names {
			if r := results[n]; r != nil {
				rs = append(rs, r)
			}
		}
		b, _ := json.MarshalIndent(map[string]any{"files": c.Files, "bytes": c.Bytes, "results": rs,
			"ckpt_growth_bytes": cg, "shadow_growth_bytes": sg}, "", "  ")
		os.WriteFile(*jsonOut, b, 0o644)
	}
}
