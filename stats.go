package ckpt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/store"
	"github.com/seed1cedbf7c/ckpt/internal/tree"
)

// StoreStats describe a workspace's history and what it costs.
type StoreStats struct {
	Workspace string `json:"workspace"`
	Store     string `json:"store"`
	Backend   string `json:"backend"`
	// Checkpoints counts checkpoints by kind; Total is their sum.
	Checkpoints map[string]int `json:"checkpoints"`
	Total       int            `json:"total"`
	Branches    int            `json:"branches"`
	Tags        int            `json:"tags"`
	Snapshots   int            `json:"snapshots"`
	Oldest      time.Time      `json:"oldest,omitzero"`
	Newest      time.Time      `json:"newest,omitzero"`
	// Files and FileBytes are HEAD's.
	Files     int64 `json:"files"`
	FileBytes int64 `json:"file_bytes"`
	// Logical is what the checkpoints would take as full copies (the sum
	// of their sizes); Unique the distinct file contents; Stored what the
	// objects take compressed and delta-encoded; Disk the store's files.
	Logical int64 `json:"logical_bytes"`
	Unique  int64 `json:"unique_bytes"`
	Stored  int64 `json:"stored_bytes"`
	Disk    int64 `json:"disk_bytes"`
	// Used is the part of Disk holding data (what max_size limits).
	Used int64 `json:"used_bytes"`
	// Objects counts stored blobs, trees and chunks.
	Blobs  int `json:"blobs"`
	Trees  int `json:"trees"`
	Chunks int `json:"chunks"`
	// Largest are HEAD's largest files.
	Largest []FileSize `json:"largest"`
}

// FileSize is a path and its size.
type FileSize struct {
	Path Path  `json:"path"`
	Size int64 `json:"size"`
}

// Ratio is logical bytes per byte on disk (dedup and compression).
func (s *StoreStats) Ratio() float64 {
	if s.Disk == 0 {
		return 0
	}
	return float64(s.Logical) / float64(s.Disk)
}

// Stats reports on the workspace's history and its store.
func (r *Repo) Stats(ctx context.Context) (*StoreStats, error) {
	info, err := r.st.Info(ctx)
	if err != nil {
		return nil, err
	}
	out := &StoreStats{Workspace: r.root, Store: r.storeDir, Backend: info.Backend, Checkpoints: map[string]int{}, Largest: []FileSize{}}
	recs, err := r.st.Checkpoints(ctx, store.ListFilter{})
	if err != nil {
		return nil, err
	}
	for _, rec := range recs {
		out.Checkpoints[rec.Kind]++
		out.Total++
		out.Logical += rec.Stats.Bytes
		if out.Oldest.IsZero() || rec.Time.Before(out.Oldest) {
			out.Oldest = rec.Time
		}
		if rec.Time.After(out.Newest) {
			out.Newest = rec.Time
		}
	}
	refs, err := r.st.Refs(ctx, "")
	if err != nil {
		return nil, err
	}
	for _, ref := range refs {
		switch {
		case strings.HasPrefix(ref.Name, branchPrefix):
			out.Branches++
		case strings.HasPrefix(ref.Name, tagPrefix):
			out.Tags++
		case strings.HasPrefix(ref.Name, snapshotPrefix):
			out.Snapshots++
		}
	}
	// Counted by the store: listing every object (the gc index) and
	// reading every tree took seconds and hundreds of megabytes at a
	// million files.
	tot, err := r.st.Totals(ctx)
	if err != nil {
		return nil, err
	}
	out.Stored, out.Unique = tot.Stored, tot.Content
	out.Blobs, out.Trees, out.Chunks = tot.Blobs, tot.Trees, tot.Chunks
	if u, err := r.st.Usage(ctx); err == nil {
		out.Disk, out.Used = u.File, u.Used
	}
	_, head, err := r.head(ctx)
	if err != nil {
		return nil, err
	}
	if head != nil {
		out.Files, out.FileBytes = head.Stats.Files, head.Stats.Bytes
		load := func(ctx context.Context, id object.ID) (*object.Tree, error) { return r.st.ReadTree(ctx, id) }
		largest := make([]FileSize, 0, maxLargest+1)
		err := tree.Walk(ctx, load, head.Tree, nil, func(p string, e object.Entry) error {
			f := FileSize{Path: Path(p), Size: e.Size}
			if len(largest) == maxLargest && !largerFile(f, largest[maxLargest-1]) {
				return nil
			}
			i := sort.Search(len(largest), func(i int) bool { return largerFile(f, largest[i]) })
			largest = slices.Insert(largest, i, f)
			if len(largest) > maxLargest {
				largest = largest[:maxLargest]
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		out.Largest = append(out.Largest, largest...)
	}
	return out, nil
}

// maxLargest is how many of HEAD's largest files Stats lists.
const maxLargest = 10

// largerFile orders files largest first, then by path.
func largerFile(a, b FileSize) bool {
	if a.Size != b.Size {
		return a.Size > b.Size
	}
	return a.Path < b.Path
}

// Clear removes the workspace's whole history: every checkpoint, snapshot,
// tag, branch, operation and session. The workspace's files are not
// touched; the store's settings are kept.
func (r *Repo) Clear(ctx context.Context) error {
	unlock, err := r.begin(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if err := r.st.Clear(ctx, store.SessionTables...); err != nil {
		return err
	}
	r.mu.Lock()
	r.cache = nil
	r.mu.Unlock()
	if p := r.cachePath(); p != "" {
		os.Remove(p)
	}
	r.emit(Event{Kind: EventCleared, Message: "history cleared"})
	return nil
}

// WorkspaceInfo describes one store under the state directory.
type WorkspaceInfo struct {
	Workspace string `json:"workspace"`
	Store     string `json:"store"`
	Size      int64  `json:"size"`
	// Exists reports whether the workspace directory still exists.
	Exists bool `json:"exists"`
	// Gone reports whether the workspace is provably gone (see
	// [PruneWorkspaces]); a workspace neither existing nor gone is one
	// ckpt cannot check, and Reason says why.
	Gone   bool   `json:"gone"`
	Reason string `json:"reason,omitempty"`
}

// MarshalJSON writes the paths as [Path] does, so a non-UTF-8 name
// round-trips, and adds the ratio.
func (s *StoreStats) MarshalJSON() ([]byte, error) {
	type plain StoreStats
	return json.Marshal(struct {
		Workspace Path `json:"workspace"`
		Store     Path `json:"store"`
		*plain
		Ratio float64 `json:"ratio"`
	}{Path(s.Workspace), Path(s.Store), (*plain)(s), s.Ratio()})
}

// MarshalJSON writes the paths as [Path] does, so a non-UTF-8 name
// round-trips.
func (w *WorkspaceInfo) MarshalJSON() ([]byte, error) {
	type plain WorkspaceInfo
	return json.Marshal(struct {
		Workspace Path `json:"workspace"`
		Store     Path `json:"store"`
		*plain
	}{Path(w.Workspace), Path(w.Store), (*plain)(w)})
}

// Workspaces lists the stores under [StateDir] with their workspaces.
func Workspaces() ([]*WorkspaceInfo, error) {
	dir, err := StateDir()
	if err != nil {
		return nil, err
	}
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []*WorkspaceInfo{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := []*WorkspaceInfo{}
	for _, de := range des {
		if !de.IsDir() {
			continue
		}
		sd := filepath.Join(dir, de.Name())
		meta := store.RecordedMeta(sd)
		ws := meta["workspace"]
		if ws == "" {
			continue
		}
		wi := &WorkspaceInfo{Workspace: ws, Store: sd, Size: dirSize(sd)}
		wi.Exists, wi.Gone, wi.Reason = workspaceState(ws, meta[store.WorkspaceDevKey])
		out = append(out, wi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Workspace < out[j].Workspace })
	return out, nil
}

// WorkspacesBelow lists the workspaces strictly below dir (an absolute,
// symlink-free path) whose default stores, under [StateDir], hold
// checkpoints: the projects a command run in dir would swallow whole if
// it made dir a workspace. It reads each store's metadata, not its size.
func WorkspacesBelow(dir string) ([]string, error) {
	sd, err := StateDir()
	if err != nil {
		return nil, err
	}
	des, err := os.ReadDir(sd)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	prefix := dir + string(filepath.Separator)
	if dir == string(filepath.Separator) {
		prefix = dir
	}
	var out []string
	for _, de := range des {
		if !de.IsDir() {
			continue
		}
		st := filepath.Join(sd, de.Name())
		ws := store.RecordedWorkspace(st)
		if ws != dir && strings.HasPrefix(ws, prefix) && store.HasHistory(st) {
			out = append(out, ws)
		}
	}
	sort.Strings(out)
	return out, nil
}

// workspaceState decides whether the workspace ws exists, is provably
// gone, or cannot be checked (and why). Provably gone: looking it up says
// it does not exist (ENOENT, not EACCES or EIO), and its parent exists, can
// be read, and is on the file system the workspace was on (dev, when the
// store recorded it). A parent that is missing, or now on another file
// system, is what a disk that is not mounted looks like.
func workspaceState(ws, dev string) (exists, gone bool, reason string) {
	fi, err := os.Lstat(ws)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		// The recorded path has its symlinks resolved; a symlink there now
		// (the workspace moved to another disk and linked back) may point
		// to a disk that is not mounted.
		if sfi, serr := os.Stat(ws); serr == nil && sfi.IsDir() {
			return true, false, ""
		}
		return false, false, fmt.Sprintf("%s is a symlink now, to where nothing is (a disk that is not mounted?)", ws)
	}
	switch {
	case err == nil && fi.IsDir():
		return true, false, ""
	case err == nil:
		return false, false, fmt.Sprintf("%s is not a directory now (%s)", ws, fileKind(fi.Mode()))
	case !errors.Is(err, syscall.ENOENT):
		return false, false, fmt.Sprintf("cannot check %s: %v", ws, unwrapPath(err))
	}
	parent := filepath.Dir(ws)
	pfi, err := os.Stat(parent)
	switch {
	case errors.Is(err, syscall.ENOENT):
		return false, false, fmt.Sprintf("%s does not exist, but its parent %s does not exist either: a disk that is not mounted?", ws, parent)
	case err != nil:
		return false, false, fmt.Sprintf("%s does not exist, but its parent %s cannot be checked: %v", ws, parent, unwrapPath(err))
	case !pfi.IsDir():
		return false, false, fmt.Sprintf("%s does not exist, and its parent %s is not a directory", ws, parent)
	}
	f, err := os.Open(parent)
	if err == nil {
		_, err = f.Readdirnames(1)
		f.Close()
		if errors.Is(err, io.EOF) {
			err = nil
		}
	}
	if err != nil {
		return false, false, fmt.Sprintf("%s does not exist, but its parent %s cannot be read: %v", ws, parent, unwrapPath(err))
	}
	if dev == "" {
		// A store from before devices were recorded: an unmounted disk's
		// empty mount point looks exactly like a removed workspace.
		return false, false, fmt.Sprintf("%s does not exist, but its store does not record which file system it was on (made by an older ckpt), so it may be on a disk that is not mounted; if it is really gone, remove the store by hand", ws)
	}
	if pdev, ok := store.FileDevice(pfi); ok && dev != strconv.FormatUint(pdev, 10) {
		return false, false, fmt.Sprintf("%s was on another file system (device %s) than its parent %s is on now (device %d): a disk that is not mounted?",
			ws, dev, parent, pdev)
	}
	return false, true, ""
}

func fileKind(m fs.FileMode) string {
	if m.IsRegular() {
		return "a file"
	}
	return m.Type().String()
}

// PruneOptions configure [PruneWorkspaces].
type PruneOptions struct {
	// DryRun lists what would be removed (as removed) and removes nothing.
	DryRun bool
}

// PruneWorkspaces removes the stores of workspaces that are provably gone
// (see [WorkspaceInfo]), waiting for each store's lock so none is in use
// and checking again under it. It returns the stores removed and those of
// missing workspaces it kept, with the reason.
func PruneWorkspaces(ctx context.Context, opts PruneOptions) (removed, kept []*WorkspaceInfo, err error) {
	all, err := Workspaces()
	if err != nil {
		return nil, nil, err
	}
	for _, w := range all {
		if w.Exists {
			continue
		}
		if !w.Gone {
			kept = append(kept, w)
			continue
		}
		if opts.DryRun {
			removed = append(removed, w)
			continue
		}
		st, err := store.OpenSQLite(ctx, w.Store, "")
		if err != nil {
			return removed, kept, fmt.Errorf("prune %s: %w", w.Store, err)
		}
		unlock, err := st.Lock(ctx, 5*time.Second, nil)
		if err != nil {
			st.Close()
			return removed, kept, fmt.Errorf("prune %s: %w", w.Store, err)
		}
		st.Close()
		// Again, now that nothing uses the store.
		meta := store.RecordedMeta(w.Store)
		if w.Exists, w.Gone, w.Reason = workspaceState(w.Workspace, meta[store.WorkspaceDevKey]); !w.Gone {
			unlock()
			if !w.Exists {
				kept = append(kept, w)
			}
			continue
		}
		err = os.RemoveAll(w.Store)
		unlock()
		if err != nil {
			return removed, kept, fmt.Errorf("prune %s: %w", w.Store, err)
		}
		removed = append(removed, w)
	}
	return removed, kept, nil
}

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// StoreHasHistory reports whether the store in dir holds checkpoints.
func StoreHasHistory(dir string) bool { return store.HasHistory(dir) }
