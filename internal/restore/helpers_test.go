package restore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/tree"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// objects is an in-memory object store: trees by id, and blobs by id
// (which may be made to hold the wrong content, to test verification).
type objects struct {
	trees map[object.ID][]byte
	blobs map[object.ID][]byte
}

func newObjects() *objects {
	return &objects{trees: map[object.ID][]byte{}, blobs: map[object.ID][]byte{}}
}

// load is a tree.Loader.
func (o *objects) load(ctx context.Context, id object.ID) (*object.Tree, error) {
	d, ok := o.trees[id]
	if !ok {
		return nil, fmt.Errorf("no tree %s", id.Short())
	}
	return object.DecodeTree(d)
}

func (o *objects) put(id object.ID, data []byte) error {
	o.trees[id] = data
	return nil
}

// entry returns the tree entry of a treegen entry, storing its blob.
func (o *objects) entry(e treegen.Entry) *object.Entry {
	data := []byte(e.Data)
	id := object.Sum(data)
	o.blobs[id] = data
	mode := object.ModeFile | uint32(e.Mode.Perm())
	if e.Symlink {
		mode = object.ModeSymlink
	}
	return &object.Entry{Mode: mode, Size: int64(len(data)), ID: id}
}

// build stores the tree of st and returns its id.
func (o *objects) build(t testing.TB, st treegen.State) object.ID {
	t.Helper()
	edits := map[string]*object.Entry{}
	for p, e := range st {
		edits[p] = o.entry(e)
	}
	id, err := tree.Overlay(context.Background(), o.load, o.put, object.EmptyTree, edits)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// open reads blobs from the map and, as store.Store.OpenBlob does, fails
// when the content does not match its id (at the end of the stream).
func (o *objects) open(ctx context.Context, id object.ID) (io.ReadCloser, error) {
	b, ok := o.blobs[id]
	if !ok {
		return nil, fmt.Errorf("no blob %s", id.Short())
	}
	return io.NopCloser(&verifying{r: bytes.NewReader(b), data: b, id: id}), nil
}

type verifying struct {
	r    *bytes.Reader
	data []byte
	id   object.ID
}

func (v *verifying) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	if err == io.EOF && object.Sum(v.data) != v.id {
		return n, fmt.Errorf("blob %s: content does not match its hash", v.id.Short())
	}
	return n, err
}

// file and link make treegen entries briefly.
func file(data string) treegen.Entry { return treegen.Entry{Mode: 0o644, Data: data} }
func exe(data string) treegen.Entry  { return treegen.Entry{Mode: 0o755, Data: data} }
func link(to string) treegen.Entry   { return treegen.Entry{Symlink: true, Data: to} }

// stage is the staging directory every test applier uses.
const stage = ".ckpt-tmp-test"

// workspace writes st into a new temporary directory and returns it with
// an Applier on it that reads blobs from o.
func workspace(t *testing.T, o *objects, st treegen.State) (string, *Applier) {
	t.Helper()
	dir := t.TempDir()
	if err := treegen.Write(dir, st); err != nil {
		t.Fatal(err)
	}
	root, err := fsroot.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return dir, &Applier{Root: root, RootPath: dir, Blobs: o.open, Stage: stage}
}

// disk is the exact state of a directory: every file and symlink (as
// treegen records them) and every directory.
type disk struct {
	entries treegen.State
	dirs    []string
}

// readDisk walks dir; nothing is skipped, so a staging directory left
// behind shows.
func readDisk(t testing.TB, dir string) disk {
	t.Helper()
	st, err := treegen.Snapshot(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != dir {
			rel, _ := filepath.Rel(dir, p)
			dirs = append(dirs, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(dirs)
	return disk{entries: st, dirs: dirs}
}

// dirsOf returns the directories st implies.
func dirsOf(st treegen.State) []string {
	seen := map[string]bool{}
	for p := range st {
		for d := filepath.Dir(p); d != "."; d = filepath.Dir(d) {
			seen[d] = true
		}
	}
	var out []string
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// checkDisk fails unless dir holds exactly want: its files and symlinks,
// and no directory but those they lie in.
func checkDisk(t testing.TB, dir string, want treegen.State) {
	t.Helper()
	got := readDisk(t, dir)
	if d := treegen.Diff(want, got.entries); d != "" {
		t.Errorf("disk differs from the target:\n%s", d)
	}
	if w := dirsOf(want); strings.Join(got.dirs, "\n") != strings.Join(w, "\n") {
		t.Errorf("directories on disk:\n%q\nwant\n%q", got.dirs, w)
	}
}

// sameDisk fails unless dir is still exactly as before.
func sameDisk(t testing.TB, dir string, before disk) {
	t.Helper()
	equalDisk(t, readDisk(t, dir), before)
}

// equalDisk fails unless after is the same as before.
func equalDisk(t testing.TB, after, before disk) {
	t.Helper()
	if d := treegen.Diff(before.entries, after.entries); d != "" {
		t.Errorf("disk changed:\n%s", d)
	}
	if strings.Join(after.dirs, "\n") != strings.Join(before.dirs, "\n") {
		t.Errorf("directories on disk: got %q, want %q", after.dirs, before.dirs)
	}
}

// lstat returns the stat data of rel below dir, as a scan records it.
func lstat(t testing.TB, dir, rel string) Stat {
	t.Helper()
	root, err := fsroot.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	st, err := root.Stat(rel)
	if err != nil {
		t.Fatal(err)
	}
	return StatOf(st)
}
