package ckpt

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
	"github.com/seed1cedbf7c/ckpt/internal/scan"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// # Ignored files a checkpoint holds
//
// A checkpoint normally holds only what the ignore rules let through. An
// agent's edit tool may still change an ignored file (.env, a generated
// config): sessions then keep that file too, in checkpoints that list it under
// the meta key
// [MetaTracked]. Such a checkpoint speaks for the listed paths, present
// or absent: restoring it puts them back as it holds them, and a restore
// captures them in the workspace so that undo can put them back too.
// Once HEAD is such a checkpoint, saves, status and diff take its listed
// paths as tracked, as git does a file added with `git add -f`: the list
// travels along the history from there. A checkpoint that lists nothing
// leaves every ignored file alone, as always.

// MetaTracked is the checkpoint meta key listing the ignored paths a
// checkpoint holds (a JSON array of paths, non-UTF-8 names encoded as
// [Path] encodes them).
const MetaTracked = "tracked-ignored"

// trackedOf returns the ignored paths rec holds (nil for none or a nil
// record). A list that does not decode counts as none: it only widens
// what a capture takes, so a damaged one loses nothing.
func trackedOf(rec *store.Record) []string {
	if rec == nil || rec.Checkpoint == nil {
		return nil
	}
	v := rec.Meta[MetaTracked]
	if v == "" {
		return nil
	}
	var l pathList
	if err := json.Unmarshal([]byte(v), &l); err != nil {
		return nil
	}
	out := l[:0]
	for _, p := range l {
		if q, err := cleanPaths([]string{p}); err == nil && len(q) == 1 && q[0] == p {
			out = append(out, p)
		}
	}
	return out
}

// unionPaths returns the sorted union of path lists, without duplicates.
func unionPaths(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// withTracked returns meta with the tracked list set to paths (removed
// when there are none); meta itself is not changed.
func withTracked(meta map[string]string, paths []string) map[string]string {
	if len(paths) == 0 {
		if _, ok := meta[MetaTracked]; !ok {
			return meta
		}
		m := maps.Clone(meta)
		delete(m, MetaTracked)
		return m
	}
	m := maps.Clone(meta)
	if m == nil {
		m = map[string]string{}
	}
	b, _ := json.Marshal(pathList(unionPaths(paths)))
	m[MetaTracked] = string(b)
	return m
}

// trackedKey identifies a tracked list for the stat cache: a cache
// written by a capture that took other ignored paths holds directory
// trees this capture must not take whole ("" for none, as a store from
// before tracked lists has it).
func trackedKey(paths []string) string {
	if len(paths) == 0 {
		return ""
	}
	sum := sha256.Sum256([]byte(strings.Join(unionPaths(paths), "\x00")))
	return hex.EncodeToString(sum[:8])
}

// metaCacheTracked is the store setting holding the trackedKey of the
// capture that wrote the stat cache.
const metaCacheTracked = "cache_tracked"

// IgnoredFiles returns those of paths (workspace-relative) that a
// whole-tree save leaves out by the ignore rules (.gitignore, .ckptignore,
// .decreeignore, .git/info/exclude) and that are not directories: the
// files an agent's edit tool may change that no checkpoint holds. Paths
// ckpt never checkpoints (.git, .ckpt, .decree, the store) and invalid
// ones are left out.
func (r *Repo) IgnoredFiles(paths []string) []string {
	root, err := fsroot.Open(r.root)
	if err != nil {
		return nil
	}
	defer root.Close()
	rules := scan.NewRules(r.root, func(p string) ([]byte, bool) {
		fi, err := root.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > 1<<20 {
			return nil, false
		}
		f, err := root.Open(p)
		if err != nil {
			return nil, false
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, 1<<20))
		return data, err == nil
	})
	var out []string
	for _, p := range paths {
		q, err := cleanPaths([]string{p})
		if err != nil || len(q) != 1 || q[0] != p || slices.ContainsFunc(r.exclude, func(x string) bool { return p == x || strings.HasPrefix(p, x+"/") }) {
			continue
		}
		if fi, err := root.Lstat(p); err == nil && fi.IsDir() {
			continue
		}
		if rules.Ignored(p, false) {
			out = append(out, p)
		}
	}
	return unionPaths(out)
}

// listsAll reports whether rec lists every one of paths as a tracked
// ignored path.
func listsAll(rec *store.Record, paths []string) bool {
	if len(paths) == 0 {
		return true
	}
	have := trackedOf(rec)
	for _, p := range paths {
		if !slices.Contains(have, p) {
			return false
		}
	}
	return true
}
