package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/seed1cedbf7c/ckpt/bench"
	"github.com/seed1cedbf7c/ckpt/bench/internal/harness"
)

// A measurer runs one size: its tree, stores and shadow repository live
// under base.
type measurer struct {
	n    int
	base string

	corpus  bench.Corpus
	r       harness.Runner
	results harness.Results
	skipped map[string]string
}

func (m *measurer) work() string       { return filepath.Join(m.base, "work") }
func (m *measurer) store() string      { return filepath.Join(m.base, "ckpt-store") }
func (m *measurer) watchStore() string { return filepath.Join(m.base, "ckpt-store-watch") }
func (m *measurer) shadow() string     { return filepath.Join(m.base, "shadow.git") }

// watchWork is the watched store's own copy of the tree: one store per
// workspace, as in real use. On the shared tree the other store's
// restores (its staging directories, new to the watched store) would
// make every watch-mode turn after the first a read of everything.
func (m *measurer) watchWork() string { return filepath.Join(m.base, "work-watch") }

// marker records a generated and committed tree nothing has touched yet,
// so a later run (after -setup-only) can start from it.
func (m *measurer) marker() string { return filepath.Join(m.base, "setup-done.json") }

// setup generates the tree and commits it to its own repository, packed,
// as a user's project would be (untimed); it reuses a tree a -setup-only
// run left.
func (m *measurer) setup() error {
	m.r = harness.Runner{Home: filepath.Join(m.base, "home")}
	if b, err := os.ReadFile(m.marker()); err == nil && json.Unmarshal(b, &m.corpus) == nil && m.corpus.Files == m.n {
		progress("[%d] reusing the tree set up in %s", m.n, m.base)
		return nil
	}
	if err := os.RemoveAll(m.base); err != nil {
		return err
	}
	if err := os.MkdirAll(m.r.Home, 0o755); err != nil {
		return err
	}
	progress("[%d] generating the %s corpus in %s", m.n, *corpus, m.work())
	var err error
	switch *corpus {
	case "gen":
		m.corpus, err = bench.Generate(m.work(), m.n, 1)
	case "tiny":
		m.corpus, err = bench.GenerateTiny(m.work(), m.n, 1)
	default:
		err = fmt.Errorf("unknown corpus %q (gen or tiny)", *corpus)
	}
	if err != nil {
		return err
	}
	progress("[%d] %d files, %.0f MB; git init + add + commit + gc (setup)", m.n, m.corpus.Files, float64(m.corpus.Bytes)/1e6)
	if _, _, err := m.r.Bash(harness.GitEnv, m.work(), "git init -q -b main . && git add -A && git -c gc.auto=0 commit -q -m init && git gc -q"); err != nil {
		return err
	}
	b, _ := json.Marshal(m.corpus)
	return os.WriteFile(m.marker(), b, 0o644)
}

func (m *measurer) ckpt(store string, args ...string) (time.Duration, int64, string) {
	return m.ckptIn(m.work(), store, args...)
}

// ckptIn runs ckpt with its store in workspace dir.
func (m *measurer) ckptIn(dir, store string, args ...string) (time.Duration, int64, string) {
	harness.Settle()
	d, rss, out, err := m.r.Sh([]string{"CKPT_STORE=" + store, "CKPT_BACKEND=sqlite"}, dir, *ckptBin, args...)
	check(err)
	return d, rss, out
}

func (m *measurer) bash(script string) time.Duration {
	harness.Settle()
	d, _, err := m.r.Bash(harness.GitEnv, m.work(), script)
	check(err)
	return d
}

// git runs a git script on the shadow repository (args follow the
// git command prefix).
func (m *measurer) git(args string) time.Duration {
	return m.bash(harness.Shadow(m.shadow(), m.work()) + " " + args)
}

// git1 runs one git command on the shadow repository, without a shell
// (as ckpt is run), its output read and dropped.
func (m *measurer) git1(args ...string) time.Duration {
	harness.Settle()
	d, _, _, err := m.r.Sh(harness.GitEnv, m.work(), "git", append([]string{"--git-dir=" + m.shadow(), "--work-tree=" + m.work()}, args...)...)
	check(err)
	return d
}

func check(err error) {
	if err != nil {
		panic(err)
	}
}

// coldSave times a first checkpoint into an empty store with no size
// limit (so no automatic gc runs at any size).
func (m *measurer) coldSave(dir, store string, name string) {
	os.RemoveAll(store)
	m.ckptIn(dir, store, "config", "max_size", "0")
	d, rss, _ := m.ckptIn(dir, store, "save", "-q", "-m", "cold")
	if name != "" {
		m.results.Record(name, d, rss)
	}
}

func (m *measurer) measure() (sr sizeRun, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	os.Remove(m.marker()) // the tree is about to change
	m.results, m.skipped = harness.Results{}, map[string]string{}
	sr = sizeRun{Corpus: *corpus, Files: m.corpus.Files, Bytes: m.corpus.Bytes,
		Date: time.Now().UTC().Format("2006-01-02 15:04 UTC"), LoadBefore: harness.LoadAvg(), Reps: *reps, SlowReps: *slowReps}
	n, work := m.n, m.work()
	sh := harness.Shadow(m.shadow(), work)

	progress("[%d] floors: git status, cat | sha256sum (%d runs)", n, *reps)
	for i := 0; i < *reps; i++ {
		harness.Settle()
		d, rss, _, err := m.r.Sh(harness.GitEnv, work, "git", "status", "--porcelain")
		check(err)
		m.results.Record(mStatus, d, rss)
		m.results.Record(mCat, m.bash("find . -path ./.git -prune -o -type f -print0 | xargs -0 cat | sha256sum >/dev/null"), 0)
	}

	progress("[%d] cold: ckpt save (%d runs), shadow repository (1 run)", n, *slowReps)
	for i := 0; i < *slowReps; i++ {
		m.coldSave(work, m.store(), mCold)
	}
	os.RemoveAll(m.shadow())
	m.results.Record(sCold, m.bash(fmt.Sprintf("git --git-dir=%q init -q && %s add -A && %s -c gc.auto=0 commit -q -m cold", m.shadow(), sh, sh)), 0)
	// A shadow repository in use is packed (its first commit triggers
	// git's auto gc); pack it, untimed, so turns see the steady state.
	m.git("gc -q")
	m.bash(harness.SandboxSnapshot("turn0"))

	progress("[%d] watch mode: a copy of the tree, its cold save and ckpt watch (untimed)", n)
	wwork := m.watchWork()
	os.RemoveAll(wwork)
	m.bash(fmt.Sprintf("cp -a %q %q", work, wwork))
	m.coldSave(wwork, m.watchStore(), "")
	m.ckptIn(wwork, m.watchStore(), "watch", "-d", "--idle", "2h")
	defer m.r.Sh([]string{"CKPT_STORE=" + m.watchStore(), "CKPT_BACKEND=sqlite"}, wwork, *ckptBin, "watch", "--stop")
	// Make the stat caches trusted (files written before the clock).
	time.Sleep(10 * time.Millisecond)
	_, _, prev := m.ckpt(m.store(), "save", "-q")
	m.ckptIn(wwork, m.watchStore(), "save", "-q")

	var ckptGrowth, shadowGrowth []int64
	list, err := bench.Files(work)
	check(err)
	sandboxRestore := *sandboxMax > 0 && n <= *sandboxMax
	if !sandboxRestore {
		m.skipped[xRestore] = fmt.Sprintf("not measured above %d files (-sandbox-restore-max): it rewrites every file", *sandboxMax)
	}
	for t := 1; t <= *reps; t++ {
		progress("[%d] turn %d of %d", n, t, *reps)
		// The same turn in both copies (TurnIn is deterministic).
		_, err = bench.TurnIn(wwork, list, t)
		check(err)
		list, err = bench.TurnIn(work, list, t)
		check(err)

		s0 := harness.StoreSize(m.store())
		d, rss, cur := m.ckpt(m.store(), "save", "-q", "--kind", "turn", "-m", fmt.Sprint("turn ", t))
		m.results.Record(mTurn, d, rss)
		ckptGrowth = append(ckptGrowth, harness.StoreSize(m.store())-s0)

		progress("[%d] turn %d: %v, peak RSS %d KB", n, t, d.Round(time.Millisecond), rss)
		d, rss, _ = m.ckptIn(wwork, m.watchStore(), "save", "-q", "--kind", "turn", "-m", fmt.Sprint("turn ", t))
		m.results.Record(mWatch, d, rss)
		progress("[%d] turn %d in watch mode: %v, peak RSS %d KB", n, t, d.Round(time.Millisecond), rss)

		g0 := bench.DirSize(m.shadow())
		m.results.Record(sTurn, m.git(fmt.Sprintf("add -A && %s commit -q -m turn%d", sh, t)), 0)
		shadowGrowth = append(shadowGrowth, bench.DirSize(m.shadow())-g0)

		m.results.Record(xSnapshot, m.bash(harness.SandboxSnapshot(fmt.Sprint("turn", t))), 0)

		d, _, _ = m.ckpt(m.store(), "diff", "--no-pager", "--color=never", prev, cur)
		m.results.Record(mDiff, d, 0)
		m.results.Record(sDiff, m.git1("diff", "HEAD~1", "HEAD"), 0)

		d, _, _ = m.ckpt(m.store(), "log", "--no-pager")
		m.results.Record(mLog, d, 0)
		m.results.Record(sLog, m.git1("log"), 0)

		// Restores of the turn (to the state before it), each followed
		// by an untimed return to the turn's state.
		d, _, _ = m.ckpt(m.store(), "restore", "-q", prev)
		m.results.Record(mRestore, d, 0)
		m.ckpt(m.store(), "undo", "-q")

		m.results.Record(sRestore, m.git(fmt.Sprintf("restore --source=HEAD~1 :/ && %s clean -fdq", sh)), 0)
		m.ckpt(m.store(), "restore", "-q", cur)

		if sandboxRestore && t <= *slowReps {
			m.results.Record(xRestore, m.bash(harness.SandboxRestore(fmt.Sprintf("refs/sandbox/snapshots/turn%d", t-1))), 0)
			m.ckpt(m.store(), "restore", "-q", cur)
			// It rewrote every file: let the store's stat cache and
			// both git indexes (the shadow repository's, the user's) see
			// them again (untimed), so the next turn is a turn for all.
			m.ckpt(m.store(), "save", "-q")
			m.git("update-index -q --refresh")
			m.bash("git update-index -q --refresh")
		}
		_, _, prev = m.ckpt(m.store(), "save", "-q")
	}

	progress("[%d] gc and fsck (%d runs each)", n, *slowReps)
	for i := 0; i < *slowReps; i++ {
		d, _, _ := m.ckpt(m.store(), "gc")
		m.results.Record(mGC, d, 0)
		m.results.Record(sGC, m.git1("gc", "-q"), 0)
		d, _, _ = m.ckpt(m.store(), "fsck")
		m.results.Record(mFsck, d, 0)
		m.results.Record(sFsck, m.git1("fsck", "--no-progress"), 0)
	}

	for _, name := range measurementOrder {
		if r := m.results[name]; r != nil {
			sr.Results = append(sr.Results, r)
		}
	}
	sr.CkptGrowth, sr.ShadowGrowth = harness.MedianInt(ckptGrowth), harness.MedianInt(shadowGrowth)
	sr.Skipped = m.skipped
	sr.LoadAfter = harness.LoadAvg()
	return sr, nil
}

var measurementOrder = []string{mStatus, mCat, mCold, sCold, mTurn, mWatch, sTurn, xSnapshot,
	mRestore, sRestore, xRestore, mDiff, sDiff, mLog, sLog, mGC, sGC, mFsck, sFsck}
