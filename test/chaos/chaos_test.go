//go:build linux

package chaos

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// harness is one chaos run: a workspace, its history as ckpt lists it,
// and what the harness knows about it.
type harness struct {
	t     *testing.T
	e     *env
	r     *rand.Rand
	mut   *mutator
	seed  uint64
	round int

	list      []checkpoint        // `ckpt list --json`, newest first
	manifests map[string]manifest // checkpoint id -> its files (immutable)
	head      string              // HEAD's checkpoint id
	verified  map[string]bool     // checkpoints restored exactly once already

	outside  string   // digestOutside at the start
	watching bool     // a watcher was started and not stopped
	runs     []string // runs that finished, not reverted
	runSeq   int

	stats struct {
		rounds, killed, raced, failed, injected, recoveryKilled, kept, verifiedRestores, inconsistent int
		byOp                                                                                          map[string]int
	}
	failures int
}

// TestChaos runs random operations through the ckpt CLI, each raced (in
// some rounds) by random changes to the workspace and interrupted (in
// some) by kill -9 or an injected failure, and after every round checks
// the workspace, the ignored files, what lies outside, the store and its
// checkpoints. See doc.go.
func TestChaos(t *testing.T) {
	rounds := *flagRounds
	if rounds == 0 {
		rounds = 200
		if testing.Short() {
			rounds = 20
		}
	}
	seed := *flagSeed
	t.Logf("chaos: seed %d, %d rounds (reproduce with -chaos.seed=%d -chaos.rounds=N)", seed, rounds, seed)
	h := newHarness(t, seed)
	verifyEvery := 25
	start := time.Now()
	for h.round = 1; h.round <= rounds; h.round++ {
		h.doRound()
		if h.failures >= *flagMaxFail {
			t.Fatalf("chaos: stopping after %d inconsistent rounds", h.failures)
		}
		if h.round%verifyEvery == 0 && h.round < rounds {
			h.verifyCheckpoints(false)
		}
	}
	h.verifyCheckpoints(true)
	s := &h.stats
	var ops []string
	for o, n := range s.byOp {
		ops = append(ops, fmt.Sprintf("%s %d", o, n))
	}
	sort.Strings(ops)
	t.Logf("chaos: ops: %s", strings.Join(ops, ", "))
	if l := h.e.decreeLitter(); len(l) > 0 {
		t.Logf("chaos: %d temporary files of killed runs left in .decree: %q", len(l), l)
	}
	t.Logf("chaos: %d checkpoints restored exactly and compared; %d restores kept a directory holding ignored files", s.verifiedRestores, s.kept)
	t.Logf("chaos: seed %d: %d rounds (%d killed, %d with concurrent edits, %d failed by injection, %d recoveries killed, %d ops failed), %d inconsistent, in %v",
		seed, s.rounds, s.killed, s.raced, s.injected, s.recoveryKilled, s.failed, s.inconsistent, time.Since(start).Round(time.Second))
}

func newHarness(t *testing.T, seed uint64) *harness {
	e := newEnv(t)
	h := &harness{t: t, e: e, r: rand.New(rand.NewPCG(seed, 0xc4a05)), seed: seed,
		manifests: map[string]manifest{}, verified: map[string]bool{}}
	h.stats.byOp = map[string]int{}
	t.Cleanup(func() {
		if h.watching {
			e.run("watch", "--stop")
		}
	})

	// The sentinel directory: files a symlink swap or a hard link in the
	// workspace points to, with names the workspace uses too.
	for _, p := range sentinelFiles {
		full := filepath.Join(e.outside, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("outside: "+p+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fs, err := openWSFS(e.ws, e.outside)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fs.close)
	for _, p := range sentinelFiles {
		if err := fs.addSentinel(filepath.Join(e.outside, filepath.FromSlash(p))); err != nil {
			t.Fatal(err)
		}
	}
	h.mut = newMutator(e, fs, seed)

	// The first state: a random tree, the ignore rules, ignored files.
	st := treegen.Random(h.r, treegen.Options{Files: 25, MaxDepth: 3})
	for p := range st {
		first, _, _ := strings.Cut(p, "/")
		if ignored(p) || first == "lib" || first == "build" || first == "app.log" || first == ".env" || first == ".gitignore" {
			delete(st, p)
		}
	}
	st[".gitignore"] = treegen.Entry{Mode: 0o644, Data: gitignore}
	st["lib/k.txt"] = treegen.Entry{Mode: 0o644, Data: "k\n"}
	if err := treegen.Write(e.ws, st); err != nil {
		t.Fatal(err)
	}
	for p, c := range map[string]string{"app.log": "log\n", ".env": "SECRET=1\n", "build/out.bin": "built\n", "lib/debug.log": "debug\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(e.ws, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(e.ws, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
		h.mut.ignored[p] = c
	}
	h.outside = e.digestOutside()
	for _, args := range [][]string{{"save", "-q", "-m", "first"}, {"session", "new", "-t", "chaos"}} {
		if res := e.run(args...); res.code != 0 {
			t.Fatal(res)
		}
	}
	if err := h.refresh(); err != nil {
		t.Fatal(err)
	}
	return h
}

// refresh reads the list of checkpoints and the manifests of new ones.
func (h *harness) refresh() error {
	res := h.e.run("list", "--json")
	if res.code != 0 {
		return fmt.Errorf("list: %v", res)
	}
	var list []checkpoint
	if err := json.Unmarshal([]byte(res.out), &list); err != nil {
		return fmt.Errorf("list: %v\n%s", err, res.out)
	}
	h.list, h.head = list, ""
	listed := map[string]bool{}
	for _, c := range list {
		listed[c.ID] = true
		for _, n := range c.Names {
			if n == "HEAD" {
				h.head = c.ID
			}
		}
		if _, ok := h.manifests[c.ID]; ok {
			continue
		}
		res := h.e.run("show", c.ID, "--manifest")
		if res.code != 0 {
			return fmt.Errorf("show --manifest: %v", res)
		}
		m, err := parseManifest(res.out)
		if err != nil {
			return fmt.Errorf("show --manifest %s: %v", c.ID, err)
		}
		h.manifests[c.ID] = m
	}
	for id := range h.manifests {
		if !listed[id] {
			delete(h.manifests, id)
			delete(h.verified, id)
		}
	}
	return nil
}

// pickKill decides how the round's operation is interrupted.
func (h *harness) pickKill(o op) (runOpts, string) {
	if o.noKill {
		return runOpts{}, ""
	}
	n := 1 + h.r.IntN(6)
	switch k := h.r.IntN(100); {
	case k < 30:
		var pts []string
		if o.journaled {
			pts = append(pts, "restore/staged=kill", "restore/before-change=kill",
				fmt.Sprintf("restore/change=kill@%d", n), fmt.Sprintf("restore/change=kill@%d", n),
				fmt.Sprintf("restore/before-replace=kill@%d", n))
		}
		if o.revert {
			pts = append(pts, "revert/before-change=kill")
		}
		pts = append(pts, fmt.Sprintf("store/before-commit=kill@%d", n), fmt.Sprintf("scan/read-dir=kill@%d", 1+h.r.IntN(20)))
		fp := pts[h.r.IntN(len(pts))]
		return runOpts{failpoint: fp}, fp
	case k < 45:
		d := time.Duration(h.r.IntN(60000)) * time.Microsecond
		return runOpts{killAfter: d}, fmt.Sprintf("kill after %v", d)
	case k < 52:
		pts := []string{fmt.Sprintf("store/before-commit=fail@%d", n), fmt.Sprintf("scan/read-dir=fail@%d", n)}
		if o.journaled {
			pts = append(pts, fmt.Sprintf("restore/change=fail@%d", n), "restore/before-change=fail", fmt.Sprintf("restore/before-replace=fail@%d", n))
		}
		fp := pts[h.r.IntN(len(pts))]
		return runOpts{failpoint: fp}, fp
	}
	return runOpts{}, ""
}

// doRound is one round: changes while nothing runs, then one operation
// (maybe raced, maybe killed), recovery, and the checks.
func (h *harness) doRound() {
	e := h.e
	h.mut.round = h.round
	st := e.tracked()
	if len(st) > 70 {
		h.mut.prune(st, 40)
		st = e.tracked()
	}
	h.mut.begin(st)
	for range h.r.IntN(5) {
		h.mut.mutate(true)
	}
	s0 := e.tracked()
	race := h.r.IntN(100) < 35
	o := h.pickOp(s0, race)
	race = race && !o.noKill
	ro, how := h.pickKill(o)
	h.mut.begin(s0)

	began := time.Now()
	c, out, errb := e.start(ro, o.args...)
	var res result
	if race {
		stop, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			h.mut.race(stop, 20*time.Millisecond, 40)
		}()
		res = e.wait(c, ro, out, errb)
		close(stop)
		<-done
	} else {
		res = e.wait(c, ro, out, errb)
	}
	raced := h.mut.applied > 0
	if d := time.Since(began); d > 5*time.Second {
		h.t.Logf("chaos: round %d: ckpt %s took %v", h.round, strings.Join(o.args, " "), d.Round(time.Millisecond))
	}

	var problems []string
	h.stats.rounds++
	h.stats.byOp[o.name]++
	if raced {
		h.stats.raced++
	}
	switch {
	case res.killed:
		h.stats.killed++
	case res.code != 0 && strings.Contains(ro.failpoint, "=fail"):
		h.stats.injected++
	case res.code != 0:
		h.stats.failed++
	}
	if res.code == 2 {
		h.t.Fatalf("round %d: usage error (a harness bug): %v", h.round, res)
	}
	// (A run's revert that no longer applies changes nothing and exits 3,
	// as docs/runs.md says; the checks below see that nothing changed.)
	if res.code == 3 && !(o.runID != "" && strings.Contains(res.errOut, "nothing was changed")) {
		problems = append(problems, fmt.Sprintf("integrity failure (exit 3): %v", res))
	}

	// A restore that failed and whose rollback failed too leaves its
	// journal (and its rollback's stage, .ckpt-tmp-*-back) for the next
	// command, as its hint says; recover first, as a user would. (No
	// random draw here: the seed's operations stay the same.)
	if !res.killed && strings.Contains(res.errOut, "run `ckpt recover`") {
		if rr := e.run("recover"); rr.code != 0 {
			problems = append(problems, fmt.Sprintf("recover after a failed rollback failed: %v", rr))
		}
	}

	// Recovery: sometimes killed too, at its first or second change.
	if res.killed {
		if h.r.IntN(3) == 0 {
			rk := e.runWith(runOpts{failpoint: fmt.Sprintf("restore/change=kill@%d", 1+h.r.IntN(2))}, "recover")
			if rk.killed {
				h.stats.recoveryKilled++
			}
		}
		if rr := e.run("recover"); rr.code != 0 {
			problems = append(problems, fmt.Sprintf("recover failed: %v", rr))
		}
	}

	switch {
	case o.name == "watch on" && res.code == 0:
		h.watching = true
	case o.name == "watch off":
		h.watching = false
	case o.name == "run" && res.code == 0:
		h.runs = append(h.runs, o.runID)
	case o.name == "runs revert" && res.code == 0:
		for i, id := range h.runs {
			if id == o.runID {
				h.runs = append(h.runs[:i], h.runs[i+1:]...)
				break
			}
		}
	}

	// A run's command changes the workspace as a user would: if ckpt is
	// killed while it runs, or fails to record its result, what the
	// command did is like a concurrent edit.
	weak := raced || o.name == "run" && (res.killed || res.code != 0 && strings.Contains(ro.failpoint, "=fail"))
	problems = append(problems, h.check(o, res, s0, weak)...)
	if len(problems) > 0 {
		h.stats.inconsistent++
		h.failures++
		var sb strings.Builder
		fmt.Fprintf(&sb, "chaos: INCONSISTENT round %d (seed %d; reproduce with -chaos.seed=%d -chaos.rounds=%d)\n",
			h.round, h.seed, h.seed, h.round)
		fmt.Fprintf(&sb, "operation: ckpt %s\ninterruption: %q; exit %d, killed %v\nstdout: %s\nstderr: %s\n",
			strings.Join(o.args, " "), how, res.code, res.killed, clip(res.out), clip(res.errOut))
		if len(h.mut.log) > 0 {
			fmt.Fprintf(&sb, "concurrent changes:\n  %s\n", strings.Join(h.mut.log, "\n  "))
		}
		for _, p := range problems {
			fmt.Fprintf(&sb, "- %s\n", p)
		}
		h.t.Error(sb.String())
	}
}

// blocked excuses, in a comparison of the workspace with a checkpoint
// want, what a restore keeps by design: a directory holding ignored files
// where want has a file or a symlink, and everything below it.
func (h *harness) blocked(want manifest) func(p string) bool {
	dirs := map[string]bool{}
	for p := range h.mut.ignored {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if _, ok := want[d]; ok {
				dirs[d] = true
			}
		}
	}
	return func(p string) bool {
		for q := p; q != "."; q = path.Dir(q) {
			if dirs[q] {
				return true
			}
		}
		return false
	}
}

// check runs the checks after a round (see doc.go) and returns the
// problems found.
func (h *harness) check(o op, res result, s0 treegen.State, weak bool) []string {
	e := h.e
	var problems []string
	if l := e.leftovers(); len(l) > 0 {
		problems = append(problems, fmt.Sprintf("ckpt's temporary entries left in the workspace: %q", l))
	}
	if d := e.digestOutside(); d != h.outside {
		problems = append(problems, fmt.Sprintf("something outside the workspace changed:\nwas:\n%s\nnow:\n%s", h.outside, d))
	}
	if d := diffIgnored(h.mut.ignored, e.ignoredState()); d != "" {
		problems = append(problems, "ignored files changed:\n"+d)
	}
	problems = append(problems, h.fsck()...)
	if err := h.refresh(); err != nil {
		return append(problems, err.Error())
	}

	w := toManifest(e.tracked())
	wkey, s0m := w.key(), toManifest(s0)
	s0key := s0m.key()
	recorded := map[string]bool{}
	for _, m := range h.manifests {
		recorded[m.key()] = true
	}
	headM := h.manifests[h.head]
	if !weak {
		// Exactly the state before or a recorded one, and if it is not
		// the state before, that state was recorded first.
		if wkey != s0key && !recorded[wkey] && diffManifests(headM, w, h.blocked(headM)) == "" {
			h.stats.kept++ // HEAD, where a restore kept a directory holding ignored files
		} else if wkey != s0key && !recorded[wkey] {
			problems = append(problems, fmt.Sprintf("the workspace is neither the state before nor any checkpoint;\nagainst the state before:\n%s\nagainst HEAD:\n%s",
				diffManifests(s0m, w, nil), diffManifests(headM, w, nil)))
		}
		if wkey != s0key && !recorded[s0key] {
			problems = append(problems, fmt.Sprintf("the workspace changed but the state before is in no checkpoint:\n%s", diffManifests(s0m, w, nil)))
		}
		if res.code == 0 && !res.killed {
			if o.headMatches {
				if d := diffManifests(headM, w, h.blocked(headM)); d != "" {
					problems = append(problems, fmt.Sprintf("HEAD (%.12s) does not match the workspace:\n%s", h.head, d))
				}
			}
			if o.target != nil {
				if d := diffManifests(o.target, w, h.blocked(o.target)); d != "" {
					problems = append(problems, fmt.Sprintf("the workspace is not the restore's target:\n%s", d))
				}
			}
		}
	} else {
		// Raced: every content that was in the workspace before or that
		// the mutator wrote (and did not itself overwrite or remove) is
		// on disk or in a checkpoint.
		present := map[string]bool{}
		for _, en := range w {
			present[en.SHA256] = true
		}
		for _, m := range h.manifests {
			for _, en := range m {
				present[en.SHA256] = true
			}
		}
		var lost []string
		for p, en := range s0m {
			if !present[en.SHA256] && !h.mut.destroyed[en.SHA256] {
				lost = append(lost, fmt.Sprintf("%q as before the operation (%.12s)", p, en.SHA256))
			}
		}
		for s := range h.mut.written {
			if !present[s] && !h.mut.destroyed[s] {
				lost = append(lost, fmt.Sprintf("content %.12s the mutator wrote (%s)", s, h.mut.what[s]))
			}
		}
		if len(lost) > 0 {
			sort.Strings(lost)
			problems = append(problems, fmt.Sprintf("content lost (on disk and in no checkpoint):\n  %s", strings.Join(lost, "\n  ")))
		}
	}
	return problems
}

// fsck runs `ckpt fsck --json` and returns its problems.
func (h *harness) fsck() []string {
	res := h.e.run("fsck", "--json")
	var v struct {
		Problems []json.RawMessage `json:"problems"`
	}
	if res.code != 0 || json.Unmarshal([]byte(res.out), &v) != nil || len(v.Problems) > 0 {
		return []string{fmt.Sprintf("fsck: %v", res)}
	}
	return nil
}

// verifyCheckpoints restores every checkpoint not restored yet (all:
// every one) and compares the workspace with it, then goes back to the
// state before, which must come back exactly; ignored files and what lies
// outside stay untouched throughout.
func (h *harness) verifyCheckpoints(all bool) {
	e := h.e
	before := toManifest(e.tracked())
	res := e.run("save", "-q", "-m", "before the check")
	if res.code != 0 {
		h.t.Fatalf("round %d: %v", h.round, res)
	}
	back := strings.TrimSpace(res.out)
	if err := h.refresh(); err != nil {
		h.t.Fatal(err)
	}
	var problems []string
	ids := make([]string, 0, len(h.list))
	for _, c := range h.list {
		ids = append(ids, c.ID)
	}
	for _, id := range ids {
		if h.verified[id] && !all {
			continue
		}
		want := h.manifests[id]
		res := e.run("restore", id)
		if res.code != 0 {
			problems = append(problems, fmt.Sprintf("restore %.12s: %v", id, res))
			continue
		}
		got := toManifest(e.tracked())
		if d := diffManifests(want, got, h.blocked(want)); d != "" {
			problems = append(problems, fmt.Sprintf("after restore %.12s the workspace differs:\n%s\n%s%s", id, d, clip(res.out), clip(res.errOut)))
			continue
		}
		h.verified[id] = true
		h.stats.verifiedRestores++
	}
	if res := e.run("restore", "-q", back); res.code != 0 {
		problems = append(problems, fmt.Sprintf("restore %.12s (back): %v", back, res))
	} else if d := diffManifests(before, toManifest(e.tracked()), nil); d != "" {
		problems = append(problems, fmt.Sprintf("back at %.12s the workspace differs from before the check:\n%s", back, d))
	}
	if d := e.digestOutside(); d != h.outside {
		problems = append(problems, "something outside the workspace changed")
	}
	if d := diffIgnored(h.mut.ignored, e.ignoredState()); d != "" {
		problems = append(problems, "ignored files changed:\n"+d)
	}
	problems = append(problems, h.fsck()...)
	if err := h.refresh(); err != nil {
		problems = append(problems, err.Error())
	}
	if len(problems) > 0 {
		h.stats.inconsistent++
		h.failures++
		h.t.Errorf("chaos: INCONSISTENT restoring every checkpoint after round %d (seed %d; reproduce with -chaos.seed=%d -chaos.rounds=%d):\n- %s",
			h.round, h.seed, h.seed, h.round, strings.Join(problems, "\n- "))
	}
}

// diffIgnored describes how the ignored files differ from the model.
func diffIgnored(want, got map[string]string) string {
	var lines []string
	for p, w := range want {
		if g, ok := got[p]; !ok {
			lines = append(lines, fmt.Sprintf("missing %q", p))
		} else if g != w {
			lines = append(lines, fmt.Sprintf("differs %q: %.40q, want %.40q", p, g, w))
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			lines = append(lines, fmt.Sprintf("extra %q", p))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// clip shortens a command's output for a report.
func clip(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "..."
	}
	return s
}
