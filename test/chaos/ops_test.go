//go:build linux

package chaos

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// op is one operation of a round, run as a ckpt child process.
type op struct {
	name string
	args []string
	// What a successful run promises when nothing raced it.
	headMatches bool     // HEAD's checkpoint equals the workspace
	target      manifest // the workspace equals this (a restore's target)
	// How it may be interrupted.
	journaled bool // writes the workspace through a journaled restore
	revert    bool // a run revert (its own failpoint)
	noKill    bool // never killed or failed (watch on/off)
	runID     string
}

// pickOp chooses the round's operation from what the history holds now.
func (h *harness) pickOp(s0 treegen.State, race bool) op {
	for {
		switch k := h.r.IntN(100); {
		case k < 16:
			return op{name: "save", args: []string{"save", "-q", "-m", fmt.Sprintf("round %d", h.round)}, headMatches: true}
		case k < 28:
			id := h.pickCheckpoint()
			if id == "" {
				continue
			}
			return op{name: "restore", args: []string{"restore", "-q", id}, headMatches: true, target: h.manifests[id], journaled: true}
		case k < 36:
			id := h.pickCheckpoint()
			if id == "" {
				continue
			}
			paths := h.pickPaths(s0, h.manifests[id])
			if len(paths) == 0 {
				continue
			}
			return op{name: "partial restore", args: append([]string{"restore", "-q", id, "--"}, paths...),
				headMatches: true, target: overlay(toManifest(s0), h.manifests[id], paths), journaled: true}
		case k < 44:
			return op{name: "undo", args: []string{"undo"}, headMatches: true, journaled: true}
		case k < 49:
			return op{name: "redo", args: []string{"redo"}, headMatches: true, journaled: true}
		case k < 55:
			b := h.pickBranch()
			if b == "" {
				return op{name: "switch -c", args: []string{"switch", "-c", fmt.Sprintf("br-%d", h.round)}, headMatches: true, journaled: true}
			}
			return op{name: "switch", args: []string{"switch", b}, headMatches: true, journaled: true}
		case k < 57:
			return op{name: "branch", args: []string{"branch", fmt.Sprintf("br-%d", h.round), h.pickCheckpoint()}}
		case k < 62:
			args := []string{"gc", "--keep", fmt.Sprint(2 + h.r.IntN(15))}
			if h.r.IntN(4) == 0 {
				args = append(args, "--dry-run")
			}
			return op{name: "gc", args: args}
		case k < 70:
			if h.r.IntN(12) == 0 {
				return op{name: "session new", args: []string{"session", "new", "-t", fmt.Sprintf("chaos %d", h.round)}}
			}
			if h.r.IntN(2) == 0 {
				return op{name: "turn begin", args: []string{"turn", "begin", "-m", fmt.Sprintf("prompt %d", h.round)}}
			}
			return op{name: "turn end", args: []string{"turn", "end"}}
		case k < 78:
			n := h.turns()
			if n == 0 {
				continue
			}
			turn := fmt.Sprint(1 + h.r.IntN(n))
			switch h.r.IntN(5) {
			case 0:
				return op{name: "rewind --keep-user-edits", args: []string{"rewind", turn, "--keep-user-edits"}, headMatches: true, journaled: true}
			case 1:
				return op{name: "rewind --both", args: []string{"rewind", turn, "--both"}, headMatches: true, journaled: true}
			case 2:
				return op{name: "rewind --conversation", args: []string{"rewind", turn, "--conversation"}}
			default:
				return op{name: "rewind --code", args: []string{"rewind", turn, "--code"}, headMatches: true, journaled: true}
			}
		case k < 86:
			h.runSeq++
			id := fmt.Sprintf("20260101%08d-0", h.runSeq)
			return op{name: "run", args: []string{"run", "--id", id, "--retries", "0", "--", "sh", "-c", h.runScript(s0, race)},
				headMatches: true, journaled: true, runID: id}
		case k < 93:
			if len(h.runs) == 0 {
				continue
			}
			i := h.r.IntN(len(h.runs))
			id := h.runs[i]
			return op{name: "runs revert", args: []string{"runs", "revert", id}, headMatches: true, journaled: true, revert: true, runID: id}
		default:
			if h.watching {
				return op{name: "watch off", args: []string{"watch", "--stop"}, noKill: true}
			}
			return op{name: "watch on", args: []string{"watch", "-d", "--idle", "10m"}, noKill: true}
		}
	}
}

// pickCheckpoint picks a listed checkpoint, the newer ones more often.
func (h *harness) pickCheckpoint() string {
	if len(h.list) == 0 {
		return ""
	}
	i := min(h.r.IntN(len(h.list)), h.r.IntN(len(h.list)))
	return h.list[i].ID
}

// pickBranch picks an existing branch, or "" to make one.
func (h *harness) pickBranch() string {
	set := map[string]bool{}
	for _, c := range h.list {
		for _, n := range c.Names {
			if b, ok := strings.CutPrefix(n, "branches/"); ok {
				set[b] = true
			}
		}
	}
	var bs []string
	for b := range set {
		bs = append(bs, b)
	}
	sort.Strings(bs)
	if len(bs) == 0 || len(bs) < 4 && h.r.IntN(4) == 0 {
		return ""
	}
	return bs[h.r.IntN(len(bs))]
}

// pickPaths picks one to three paths for a partial restore: files or
// directories of the workspace or of the checkpoint.
func (h *harness) pickPaths(s0 treegen.State, m manifest) []string {
	var all []string
	for p := range s0 {
		all = append(all, p)
	}
	for p := range m {
		all = append(all, p)
	}
	sort.Strings(all)
	if len(all) == 0 {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for range 1 + h.r.IntN(3) {
		p := all[h.r.IntN(len(all))]
		if d := path.Dir(p); d != "." && h.r.IntN(3) == 0 {
			p = d
		}
		if p == ".gitignore" || seen[p] {
			continue
		}
		// A path below another one named is redundant.
		redundant := false
		for _, q := range out {
			if strings.HasPrefix(p, q+"/") || strings.HasPrefix(q, p+"/") {
				redundant = true
			}
		}
		if redundant {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	return out
}

// overlay is base with the paths (and everything below them) as in rev,
// where a file of base in the way of one of rev's makes way.
func overlay(base, rev manifest, paths []string) manifest {
	under := func(p, q string) bool { return p == q || strings.HasPrefix(p, q+"/") }
	out := manifest{}
	for p, en := range base {
		keep := true
		for _, q := range paths {
			if under(p, q) {
				keep = false
			}
		}
		if keep {
			out[p] = en
		}
	}
	for p, en := range rev {
		for _, q := range paths {
			if under(p, q) {
				out[p] = en
				for d := path.Dir(p); d != "."; d = path.Dir(d) {
					delete(out, d)
				}
			}
		}
	}
	return out
}

// turns is how many turns the current session has.
func (h *harness) turns() int {
	res := h.e.run("session", "show", "--json")
	if res.code != 0 {
		return 0
	}
	var v struct {
		Session struct {
			Turns []json.RawMessage `json:"turns"`
		} `json:"session"`
	}
	if json.Unmarshal([]byte(res.out), &v) != nil {
		return 0
	}
	return len(v.Session.Turns)
}

// runScript is a run's command: changes at the top of the workspace (so
// it never follows a symlink), and sometimes a failure (which makes ckpt
// revert it). When the mutator races it, the command only creates new
// names: a command removing what the mutator just wrote would destroy
// the mutator's content by its own hand, not ckpt's.
func (h *harness) runScript(s0 treegen.State, race bool) string {
	var top []string
	for p := range s0 {
		if !strings.Contains(p, "/") && p != ".gitignore" {
			top = append(top, p)
		}
	}
	sort.Strings(top)
	if race {
		top = nil
	}
	var cmds []string
	for i := range 1 + h.r.IntN(4) {
		name := fmt.Sprintf("run%d-%d", h.runSeq, i)
		switch h.r.IntN(5) {
		case 0:
			cmds = append(cmds, fmt.Sprintf("mkdir -p %s && printf 'run %d %x\\n' > %s/f", name, h.runSeq, h.r.Uint32(), name))
		case 1:
			if len(top) > 0 {
				cmds = append(cmds, fmt.Sprintf("rm -f '%s'", top[h.r.IntN(len(top))]))
				continue
			}
			fallthrough
		case 2:
			if len(top) > 0 {
				f := top[h.r.IntN(len(top))]
				cmds = append(cmds, fmt.Sprintf("[ -d '%s' ] || mv '%s' %s", f, f, name))
				continue
			}
			fallthrough
		default:
			cmds = append(cmds, fmt.Sprintf("printf 'run %d %x\\n' > %s.txt && chmod %s %s.txt", h.runSeq, h.r.Uint32(), name, []string{"644", "755"}[h.r.IntN(2)], name))
		}
	}
	if h.r.IntN(4) == 0 {
		cmds = append(cmds, "exit 1")
	}
	return strings.Join(cmds, "; ")
}
