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
	"bytes"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt/bench"
	"github.com/seed1cedbf7c/ckpt/bench/internal/procstat"
	_ "modernc.org/sqlite"
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

type result struct {
	Name   string        `json:"name"`
	Median time.Duration `json:"median_ns"`
	Min    time.Duration `json:"min_ns"`
	Runs   int           `json:"runs"`
	MaxRSS int64         `json:"max_rss_kb,omitempty"`

	all []time.Duration
}

var results = map[string]*result{}

func record(name string, d time.Duration, rss int64) {
	r := results[name]
	if r == nil {
		r = &result{Name: name}
		results[name] = r
	}
	r.Runs++
	r.all = append(r.all, d)
	if rss > r.MaxRSS {
		r.MaxRSS = rss
	}
}

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

var gitEnv = []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=b@x",
	"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=b@x", "GIT_TERMINAL_PROMPT=0"}

// sh runs a command and returns its duration and peak RSS (KB).
func sh(env []string, wd string, name string, args ...string) (time.Duration, int64, string, error) {
	c := exec.Command(name, args...)
	c.Dir = wd
	c.Env = append(append(os.Environ(), "HOME="+filepath.Join(*dir, "home")), env...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	start := time.Now()
	err := c.Run()
	d := time.Since(start)
	var rss int64
	if c.ProcessState != nil {
		rss = procstat.MaxRSSKB(c.ProcessState)
	}
	if err != nil {
		return d, rss, out.String(), fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, errb.String())
	}
	return d, rss, strings.TrimSpace(out.String()), nil
}

// bash runs a script; its duration includes everything it runs.
func bash(env []string, wd, script string) (time.Duration, string, error) {
	d, _, out, err := sh(env, wd, "bash", "-euo", "pipefail", "-c", script)
	return d, out, err
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

// storeSize is the size of ckpt's database after moving the WAL into it
// (the stat cache, rewritten by every save at a constant size, is left out).
func storeSize(store string) int64 {
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

func run() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	if err := os.MkdirAll(filepath.Join(*dir, "home"), 0o755); err != nil {
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
	mustBash(gitEnv, work, sandboxSnapshot(0))
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
		s0 := storeSize(store)
		settle()
		d, rss, _, err := sh(ckptEnv, work, *ckptBin, "save", "-q", "--kind", "turn", "-m", fmt.Sprint("turn ", t))
		check(err)
		record("ckpt save (20-file turn)", d, rss)
		ckptGrowth = append(ckptGrowth, storeSize(store)-s0)

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
		d, _, err = bash(gitEnv, work, sandboxSnapshot(t))
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
			d, _, err = bash(gitEnv, work, sandboxRestore(fmt.Sprintf("refs/sandbox/snapshots/turn%d", t-1)))
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

// settle flushes other processes' dirty data (untimed), so a measurement
// that fsyncs pays only for its own writes (ext4 commits all ordered data).
func settle() { procstat.SyncAll() }

func must2(_ time.Duration, _ int64, _ string, err error) {
	if err != nil {
		panic(err)
	}
}

// sandboxSnapshot is the sandbox snapshot tools' snapshot_create: a temporary index, git add
// --all, write-tree, commit-tree, update-ref.
func sandboxSnapshot(t int) string {
	return fmt.Sprintf(`idx=$(mktemp -u) && export GIT_INDEX_FILE=$idx
git add --all && tree=$(git write-tree) && c=$(git commit-tree $tree -m "snapshot turn%d")
git update-ref refs/sandbox/snapshots/turn%d $c && rm -f $idx`, t, t)
}

// sandboxRestore is the sandbox snapshot tools' snapshot_restore: inventory, read-tree into a
// temporary index, checkout-index -a -f, remove what the snapshot lacks,
// prune empty directories.
func sandboxRestore(rev string) string {
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

func report(c bench.Corpus, ckptGrowth, shadowGrowth []int64) {
	for _, r := range results {
		sort.Slice(r.all, func(i, j int) bool { return r.all[i] < r.all[j] })
		r.Median = r.all[len(r.all)/2]
		r.Min = r.all[0]
	}
	get := func(n string) time.Duration {
		if r := results[n]; r != nil {
			return r.Median
		}
		return 0
	}
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
	med := func(xs []int64) int64 {
		s := append([]int64(nil), xs...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		if len(s) == 0 {
			return 0
		}
		return s[len(s)/2]
	}
	cg, sg := med(ckptGrowth), med(shadowGrowth)
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
		var rs []*result
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
