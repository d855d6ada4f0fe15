package gitmirror

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed (scripts/test installs it)")
	}
}

// newObjects returns a new repository's pack directory and its objectIndex.
func newObjects(t *testing.T) (string, *objectIndex) {
	t.Helper()
	dir := t.TempDir()
	testutil.Git(t, dir, "init", "-q", "-b", "main")
	oi := &objectIndex{dir: filepath.Join(dir, ".git", "objects", "pack")}
	if _, err := oi.refresh(); err != nil {
		t.Fatal(err)
	}
	return dir, oi
}

type testObject struct {
	t    plumbing.ObjectType
	data []byte
}

func (o testObject) hash() plumbing.Hash { return gitHash(o.t, o.data) }

// writePack writes objs as one pack and returns its name.
func writePack(t *testing.T, oi *objectIndex, objs ...testObject) packInfo {
	t.Helper()
	pw, err := newPackWriter(oi.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if err := pw.add(o.hash(), o.t, int64(len(o.data)), bytes.NewReader(o.data)); err != nil {
			t.Fatal(err)
		}
	}
	name, idx, size, err := pw.finish()
	if err != nil {
		t.Fatal(err)
	}
	oi.add(name, idx, size)
	return packInfo{Name: name, Size: size}
}

func blobs(prefix string, n int) []testObject {
	var out []testObject
	for i := range n {
		out = append(out, testObject{plumbing.BlobObject, fmt.Appendf(nil, "%s %d\n", prefix, i)})
	}
	return out
}

// countObjects parses `git count-objects -v`.
func countObjects(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(testutil.Git(t, dir, "count-objects", "-v")), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		out[k] = v
	}
	return out
}

// TestPackWriterGitReads: what the pack writer leaves is a pack git
// verifies and reads back, objects of every size, with no loose object
// and nothing git counts as garbage.
func TestPackWriterGitReads(t *testing.T) {
	needGit(t)
	dir, oi := newObjects(t)
	big := make([]byte, 3<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range big {
		big[i] = byte(rng.IntN(256))
	}
	objs := []testObject{
		{plumbing.BlobObject, []byte("hello\n")},
		{plumbing.BlobObject, nil},
		{plumbing.BlobObject, big},
		{plumbing.BlobObject, bytes.Repeat([]byte("compressible "), 10000)},
	}
	tree := []byte("100644 a\x00")
	h := objs[0].hash()
	tree = append(tree, h[:]...)
	objs = append(objs, testObject{plumbing.TreeObject, tree})
	th := objs[len(objs)-1].hash()
	objs = append(objs, testObject{plumbing.CommitObject, fmt.Appendf(nil,
		"tree %s\nauthor ckpt <ckpt@localhost> 1 +0000\ncommitter ckpt <ckpt@localhost> 1 +0000\n\nm\n", th)})
	p := writePack(t, oi, objs...)
	if !isPackName(p.Name) {
		t.Fatalf("pack name %q", p.Name)
	}
	out := testutil.Git(t, dir, "verify-pack", "-v", filepath.Join(oi.dir, p.Name+".idx"))
	if !strings.Contains(out, "ok") {
		t.Errorf("verify-pack: %s", out)
	}
	for _, o := range objs {
		got := testutil.Git(t, dir, "cat-file", o.t.String(), o.hash().String())
		if got != string(o.data) {
			t.Errorf("git reads %s %s back differently", o.t, o.hash())
		}
	}
	testutil.Git(t, dir, "fsck", "--full", "--strict", "--no-dangling")
	c := countObjects(t, dir)
	if c["count"] != "0" || c["packs"] != "1" || c["garbage"] != "0" || c["in-pack"] != fmt.Sprint(len(objs)) {
		t.Errorf("count-objects: %v", c)
	}
	if fi, err := os.Stat(filepath.Join(oi.dir, p.Name+".pack")); err != nil || fi.Size() != p.Size || fi.Mode().Perm() != 0o444 {
		t.Errorf("pack file: %v %v (size %d recorded)", fi, err, p.Size)
	}
	// The index in memory is the one on disk.
	if ok, err := oi.has(th); !ok || err != nil {
		t.Errorf("has(tree) = %v, %v", ok, err)
	}
	fresh := &objectIndex{dir: oi.dir}
	if names, err := fresh.refresh(); err != nil || !reflect.DeepEqual(names, []string{p.Name}) {
		t.Fatalf("refresh: %v %v", names, err)
	}
	for _, o := range objs {
		if ok, _ := fresh.has(o.hash()); !ok {
			t.Errorf("the index on disk lacks %s", o.hash())
		}
	}
}

// TestPackWriterRefusesChangedContent: content that does not hash to the
// id it was announced with fails, and a failed or empty pack leaves no file.
func TestPackWriterRefusesChangedContent(t *testing.T) {
	needGit(t)
	_, oi := newObjects(t)
	pw, err := newPackWriter(oi.dir)
	if err != nil {
		t.Fatal(err)
	}
	o := testObject{plumbing.BlobObject, []byte("a")}
	if err := pw.add(o.hash(), o.t, 1, strings.NewReader("b")); err == nil {
		t.Error("content of another hash accepted")
	}
	pw.abort()
	pw, err = newPackWriter(oi.dir)
	if err != nil {
		t.Fatal(err)
	}
	if name, _, _, err := pw.finish(); name != "" || err != nil {
		t.Errorf("empty pack: %q %v", name, err)
	}
	if des, _ := os.ReadDir(oi.dir); len(des) != 0 {
		t.Errorf("left in the pack directory: %v", des)
	}
}

// TestPackCrashBetweenRenames: a crash after the pack took its name and
// before its index did leaves a complete temporary index, which a later
// refresh puts in place (once it is old enough not to be a writer's).
func TestPackCrashBetweenRenames(t *testing.T) {
	needGit(t)
	dir, oi := newObjects(t)
	disarm := failpoint.Set("git/pack-renamed", func(string) error { return errors.New("crash") })
	pw, err := newPackWriter(oi.dir)
	if err != nil {
		t.Fatal(err)
	}
	objs := blobs("crash", 3)
	for _, o := range objs {
		if err := pw.add(o.hash(), o.t, int64(len(o.data)), bytes.NewReader(o.data)); err != nil {
			t.Fatal(err)
		}
	}
	_, _, _, err = pw.finish()
	disarm()
	if err == nil {
		t.Fatal("failpoint did not fire")
	}
	tmps, _ := filepath.Glob(filepath.Join(oi.dir, tmpIdxPrefix+"*"))
	if len(tmps) != 1 {
		t.Fatalf("temporary indexes: %q", tmps)
	}
	if names, _ := oi.refresh(); len(names) != 0 {
		t.Fatalf("a pack without its index counts: %q", names)
	}
	old := time.Now().Add(-2 * tempAge)
	os.Chtimes(tmps[0], old, old)
	oi.refresh() // renames the index into place
	names, err := oi.refresh()
	if err != nil || len(names) != 1 {
		t.Fatalf("after recovery: %q %v", names, err)
	}
	for _, o := range objs {
		if got := testutil.Git(t, dir, "cat-file", "blob", o.hash().String()); got != string(o.data) {
			t.Errorf("git reads %q", got)
		}
	}
	if c := countObjects(t, dir); c["garbage"] != "0" {
		t.Errorf("count-objects: %v", c)
	}
}

func TestPlanRollUp(t *testing.T) {
	sizes := func(ps []packInfo) []int64 {
		var out []int64
		for _, p := range ps {
			out = append(out, p.Size)
		}
		sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
		return out
	}
	packs := func(ss ...int64) []packInfo {
		var out []packInfo
		for i, s := range ss {
			out = append(out, packInfo{Name: fmt.Sprint("p", i), Size: s})
		}
		return out
	}
	repeat := func(s int64, n int) []int64 {
		var out []int64
		for range n {
			out = append(out, s)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		in   []int64
		want []int64
	}{
		{"few", repeat(1, maxPacks), nil},
		{"all small", repeat(1, maxPacks+1), repeat(1, maxPacks+1)},
		{"small ones below big ones", append(repeat(1, 9), 50, 1000), repeat(1, 9)},
		{"the merged one reaches the next", append(repeat(10, 9), 100, 10000), append(repeat(10, 9), 100)},
		{"a progression longer than the limit", []int64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304}, []int64{1, 4, 16}},
	} {
		got := sizes(planRollUp(packs(tc.in...)))
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: planRollUp(%v) merges %v, want %v", tc.name, tc.in, got, tc.want)
		}
		if n := len(tc.in) - len(got) + min(len(got), 1); len(tc.in) > maxPacks && n > maxPacks {
			t.Errorf("%s: %d packs left", tc.name, n)
		}
	}
}

// TestPlanRollUpOverALife: one small pack per sync for many syncs keeps
// the count at most maxPacks+1 and copies each byte a few times only.
func TestPlanRollUpOverALife(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var ps []packInfo
	var written, copied int64
	most := 0
	for i := range 20000 {
		s := int64(200 + rng.IntN(5000))
		if i%1000 == 0 {
			s = 5 << 20 // now and then a big turn
		}
		written += s
		ps = append(ps, packInfo{Name: fmt.Sprint(i), Size: s})
		most = max(most, len(ps))
		plan := planRollUp(ps)
		if len(plan) == 0 {
			continue
		}
		merged := map[string]bool{}
		var total int64
		for _, p := range plan {
			merged[p.Name] = true
			total += p.Size
		}
		copied += total
		var rest []packInfo
		for _, p := range ps {
			if !merged[p.Name] {
				rest = append(rest, p)
			}
		}
		ps = append(rest, packInfo{Name: fmt.Sprint("r", i), Size: total})
	}
	if most > maxPacks+1 {
		t.Errorf("up to %d packs", most)
	}
	if ratio := float64(copied) / float64(written); ratio > 12 {
		t.Errorf("each byte copied %.1f times on average", ratio)
	} else {
		t.Logf("%d packs at the end, at most %d; each byte copied %.1f times", len(ps), most, ratio)
	}
}

// TestRollUp: merging packs keeps every object (duplicates once), removes
// the merged packs only after the new one is in place, and git reads the
// result; a pack git wrote (with deltas) is refused, untouched.
func TestRollUp(t *testing.T) {
	needGit(t)
	dir, oi := newObjects(t)
	var plan []packInfo
	var all []testObject
	for i := range 5 {
		objs := blobs(fmt.Sprint("pack", i), 20+i)
		objs = append(objs, blobs("shared", 3)...) // in every pack
		plan = append(plan, writePack(t, oi, objs...))
		all = append(all, objs...)
	}
	keep := writePack(t, oi, blobs("not merged", 4)...)
	written, removed, err := oi.rollUp(plan)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != len(plan) {
		t.Errorf("removed %q", removed)
	}
	names, err := oi.refresh()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{written.Name, keep.Name}
	sort.Strings(want)
	if !reflect.DeepEqual(names, want) {
		t.Errorf("packs after roll-up: %q, want %q", names, want)
	}
	for _, o := range all {
		if got := testutil.Git(t, dir, "cat-file", "blob", o.hash().String()); got != string(o.data) {
			t.Errorf("git reads %q for %s", got, o.hash())
		}
	}
	testutil.Git(t, dir, "verify-pack", filepath.Join(oi.dir, written.Name+".idx"))
	testutil.Git(t, dir, "fsck", "--full", "--strict", "--no-dangling")
	if c := countObjects(t, dir); c["in-pack"] != fmt.Sprint(5*20+10+3+4) || c["garbage"] != "0" {
		t.Errorf("count-objects: %v", c)
	}

	// A pack of git's own, with deltas.
	var text []byte
	for i := range 30 {
		text = fmt.Appendf(text, "line %d of a file that grows by a line per commit\n", i)
		os.WriteFile(filepath.Join(dir, "f"), text, 0o644)
		testutil.Git(t, dir, "add", "f")
		testutil.Git(t, dir, "-c", "user.name=u", "-c", "user.email=u@example.com", "commit", "-q", "-m", fmt.Sprint(i))
	}
	testutil.Git(t, dir, "repack", "-q", "-d")
	names, err = oi.refresh()
	if err != nil {
		t.Fatal(err)
	}
	var users []packInfo
	for _, n := range names {
		if n != written.Name && n != keep.Name {
			users = append(users, packInfo{Name: n})
		}
	}
	if len(users) != 1 {
		t.Fatalf("git's packs: %v", users)
	}
	if _, _, err := oi.rollUp(append(users, keep)); err == nil || !strings.Contains(err.Error(), "delta") {
		t.Errorf("rolling up git's pack: %v", err)
	}
	if after, _ := oi.refresh(); !reflect.DeepEqual(after, names) {
		t.Errorf("a refused roll-up changed the packs: %q -> %q", names, after)
	}
	testutil.Git(t, dir, "fsck", "--full", "--strict", "--no-dangling")
}
