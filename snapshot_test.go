package ckpt

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/store"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

func wsState(t *testing.T, ws string) treegen.State {
	t.Helper()
	st, err := treegen.Snapshot(ws, func(rel string) bool { return rel == ".git" })
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// snapshotRepo opens a temporary workspace holding files with the given
// backend and a settable clock (starting at 2026-04-23T12:00:00Z).
func snapshotRepo(t *testing.T, backend string, cfg *Config, files map[string]string) (*Repo, string, *testutil.Clock) {
	t.Helper()
	ws := t.TempDir()
	testutil.WriteFiles(t, ws, files)
	clk := testutil.NewClock("2026-04-23T12:00:00Z")
	opts := Options{Backend: backend, Now: clk.Now, Config: cfg}
	if backend == BackendSQLite {
		opts.Store = t.TempDir()
	}
	repo, err := Open(context.Background(), ws, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	return repo, ws, clk
}

func TestValidSnapshotName(t *testing.T) {
	for _, name := range []string{"s1", "before-refactor", "v1.2", "_x", "A_b-c.d", "9", strings.Repeat("a", 200)} {
		if err := ValidSnapshotName(name); err != nil {
			t.Errorf("ValidSnapshotName(%q) = %v, want nil", name, err)
		}
	}
	for _, c := range []struct{ name, why string }{
		{"", "it is empty"},
		{".secret", `it starts with "."`},
		{"-x", `it starts with "-"`},
		{"foo/bar", `it contains the path separator '/'`},
		{`foo\bar`, `it contains the path separator '\\'`},
		{"foo bar", "it contains whitespace"},
		{"foo\tbar", "it contains whitespace"},
		{"tab\n", "it contains whitespace"},
		{"café", `it contains 'é'`},
		{"a:b", `it contains ':'`},
		{"a..b", `it contains ".."`},
		{"x.lock", `it ends in ".lock"`},
		{strings.Repeat("a", 201), "it is longer than 200 bytes"},
		{"a.", `it ends with "." (not allowed in a git ref)`},
		{"v1.", `it ends with "." (not allowed in a git ref)`},
		{"a.lock", `it ends in ".lock"`},
		{"HEAD", "it would read as the revision HEAD"},
		{"cafe", "it would read as a checkpoint id"},
		{"1234", "it would read as a checkpoint id"},
		{"DeadBeef", "it would read as a checkpoint id"},
		{strings.Repeat("f", 64), "it would read as a checkpoint id"},
		{strings.Repeat("a", 64), "it would read as a checkpoint id"},
	} {
		err := ValidSnapshotName(c.name)
		if err == nil {
			t.Errorf("ValidSnapshotName(%q) = nil, want an error", c.name)
			continue
		}
		if !errors.Is(err, ErrInvalidSnapshotName) {
			t.Errorf("ValidSnapshotName(%q) does not wrap ErrInvalidSnapshotName: %v", c.name, err)
		}
		msg := err.Error()
		wantPrefix := "invalid snapshot name " + strconv.Quote(c.name) + ": " + c.why
		if !strings.HasPrefix(msg, wantPrefix) || !strings.HasSuffix(msg, "; a name must match "+SnapshotNameRule) {
			t.Errorf("ValidSnapshotName(%q):\ngot  %s\nwant %s...; a name must match %s", c.name, msg, wantPrefix, SnapshotNameRule)
		}
	}
}

var snapshotRule = regexp.MustCompile(SnapshotNameRule)

// A snapshot or branch named before its name was refused ("a.", "cafe",
// "x.lock/y") can still be restored, compared, switched to and deleted.
func TestRefusedNamesStayReachable(t *testing.T) {
	ctx := context.Background()
	r, ws, _ := snapshotRepo(t, BackendSQLite, nil, map[string]string{"a.txt": "1\n"})
	c := mustSave(t, r, "one")
	for _, name := range []string{"snapshots/a.", "snapshots/cafe", "branches/x.lock/y"} {
		if err := r.refOp(ctx, &store.Ref{Name: name, ID: c.ID, Time: c.Time}, "", store.Op{Kind: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WriteFiles(t, ws, map[string]string{"a.txt": "2\n"})
	for _, name := range []string{"a.", "cafe"} {
		if err := ValidSnapshotName(name); err == nil {
			t.Fatalf("ValidSnapshotName(%q) accepts it", name)
		}
		if _, err := r.SnapshotDiff(ctx, name); err != nil {
			t.Errorf("diff %s: %v", name, err)
		}
		if _, err := r.SnapshotRestore(ctx, name); err != nil {
			t.Errorf("restore %s: %v", name, err)
		}
		if _, err := r.SnapshotDelete(ctx, name); err != nil {
			t.Errorf("delete %s: %v", name, err)
		}
	}
	if _, err := r.Switch(ctx, "x.lock/y", SwitchOptions{}); err != nil {
		t.Errorf("switch: %v", err)
	}
	if _, err := r.Switch(ctx, "x.lock/z", SwitchOptions{Create: true}); err == nil {
		t.Errorf("switch -c x.lock/z: no error")
	}
}

// gitAcceptsRef reports whether git check-ref-format accepts name.
func gitAcceptsRef(t *testing.T, name string) bool {
	t.Helper()
	err := exec.Command("git", "check-ref-format", name).Run()
	if _, isExit := err.(*exec.ExitError); err != nil && !isExit {
		t.Fatal(err)
	}
	return err == nil
}

// shadowsRevision reports whether a name would read as a revision: HEAD,
// or 4 to 64 hex digits (a checkpoint id or a prefix of one).
func shadowsRevision(name string) bool {
	if name == "HEAD" {
		return true
	}
	if len(name) < 4 || len(name) > 64 {
		return false
	}
	for _, c := range name {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}

// randRefName returns a random name made of the characters and pieces that
// git's ref rules and the snapshot pattern are about.
func randRefName(r *rand.Rand, slash bool) string {
	pieces := []string{"a", "Z", "0", "_", "-", ".", "..", "lock", ".lock", "@", "{", "@{", "~", "^",
		":", "?", "*", "[", "\\", " ", "\t", "\n", "\x01", "\x7f", "\xc3\xa9", "\xff", "HEAD", "cafe", "12", "/"}
	var b strings.Builder
	for range 1 + r.IntN(7) {
		p := pieces[r.IntN(len(pieces))]
		if r.IntN(2) == 0 {
			p = pieces[r.IntN(5)]
		}
		if p == "/" && !slash && r.IntN(4) > 0 {
			continue
		}
		b.WriteString(p)
	}
	return b.String()
}

// TestSnapshotNamesAgainstGit: a name is valid exactly when it matches the
// sandbox snapshot tools' pattern, git check-ref-format accepts the refs it
// becomes, it is at most 200 bytes and it does not read as a revision.
func TestSnapshotNamesAgainstGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	r := rand.New(rand.NewPCG(7, 2002))
	names := []string{"a", "a.", "a.b.", "a..b", "a.lock", "a.lock.b", "a-", "a_", "_", "9", "HEAD", "HEAD.", "head",
		"cafe", "caf", "cafe1", "cafeg", strings.Repeat("a", 64), strings.Repeat("a", 65), "0000", "123", "1234", "a@{b", "@", "-a", ".a", "a/b", strings.Repeat("a", 200),
		strings.Repeat("a", 199) + ".", strings.Repeat("a", 196) + ".lock", strings.Repeat("a", 201)}
	n := 3000
	if testing.Short() {
		n = 500
	}
	for range n {
		names = append(names, randRefName(r, false))
	}
	for _, name := range names {
		want := snapshotRule.MatchString(name) && len(name) <= 200 && !shadowsRevision(name) &&
			gitAcceptsRef(t, "refs/ckpt/snapshots/"+name) && gitAcceptsRef(t, "refs/sandbox/snapshots/"+name)
		err := ValidSnapshotName(name)
		if (err == nil) != want {
			t.Errorf("ValidSnapshotName(%q) = %v, want valid: %v", name, err, want)
		}
	}
}

// Every valid name matches the sandbox snapshot tools' pattern.
func FuzzValidSnapshotName(f *testing.F) {
	for _, s := range []string{"s1", ".x", "-x", "a/b", "a b", "a..b", "x.lock", "", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if ValidSnapshotName(name) == nil && !snapshotRule.MatchString(name) {
			t.Fatalf("%q accepted but does not match %s", name, SnapshotNameRule)
		}
	})
}

// snapshotRows lists snapshots as text to compare: name, id, time,
// description, expired.
func snapshotRows(snaps []*Snapshot) string {
	var b strings.Builder
	for _, s := range snaps {
		fmt.Fprintf(&b, "%s %s %s %q %v\n", s.Name, s.ID(), s.Time.UTC().Format(SnapshotTimeLayout), s.Description, s.Expired)
	}
	return b.String()
}

func mustSnapshots(t *testing.T, repo *Repo) []*Snapshot {
	t.Helper()
	s, err := repo.Snapshots(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSnapshotRestoreIsTheVerifiedRestore(t *testing.T) {
	ctx := context.Background()
	repo, ws, _ := snapshotRepo(t, BackendSQLite, nil, map[string]string{
		"a.txt": "a\n", "src/keep.go": "package x\n", ".gitignore": "*.log\nbuild/\n", "debug.log": "old log\n",
	})
	if _, err := repo.SnapshotCreate(ctx, "base", SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	snap := wsState(t, ws)

	// The agent's turn: edits, new files in new directories, a deletion,
	// ignored output.
	testutil.WriteFiles(t, ws, map[string]string{
		"a.txt": "changed\n", "new/deep/file.txt": "x\n", "src/extra.go": "package x\n",
		"debug.log": "new log\n", "build/out.bin": "bin",
	})
	os.Remove(filepath.Join(ws, "src/keep.go"))
	turn := wsState(t, ws)

	res, err := repo.SnapshotRestore(ctx, "base")
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(res.Changed())
	if got != "[a.txt new/deep/file.txt src/extra.go src/keep.go]" {
		t.Errorf("restored = %q", got)
	}
	if _, err := os.Stat(filepath.Join(ws, "new")); !os.IsNotExist(err) {
		t.Errorf("emptied directory new/ was not pruned: %v", err)
	}
	// Ignored files are never touched: neither restored nor deleted.
	for p, c := range map[string]string{"debug.log": "new log\n", "build/out.bin": "bin"} {
		if b, err := os.ReadFile(filepath.Join(ws, p)); err != nil || string(b) != c {
			t.Errorf("ignored %s = %q, %v; want %q untouched", p, b, err, c)
		}
	}
	after := wsState(t, ws)
	delete(after, "debug.log")
	delete(after, "build/out.bin")
	delete(snap, "debug.log")
	if d := treegen.Diff(snap, after); d != "" {
		t.Errorf("workspace differs from the snapshot: %s", d)
	}

	// Undo brings the turn back, exactly.
	if _, err := repo.Undo(ctx); err != nil {
		t.Fatal(err)
	}
	if d := treegen.Diff(turn, wsState(t, ws)); d != "" {
		t.Errorf("undo after restore: %s", d)
	}
}

func TestSnapshotErrorsTouchNothing(t *testing.T) {
	ctx := context.Background()
	repo, ws, _ := snapshotRepo(t, BackendSQLite, nil, map[string]string{"a.txt": "a\n"})
	s, err := repo.SnapshotCreate(ctx, "s1", SnapshotOptions{Description: "first"})
	if err != nil {
		t.Fatal(err)
	}
	testutil.WriteFiles(t, ws, map[string]string{"a.txt": "edited\n", "b.txt": "new\n"})
	before := wsState(t, ws)
	list := snapshotRows(mustSnapshots(t, repo))
	cps, _ := repo.List(ctx, ListOptions{})

	_, err = repo.SnapshotRestore(ctx, "nope")
	if !errors.Is(err, ErrNotFound) || err.Error() != `snapshot restore: no snapshot named "nope"` {
		t.Errorf("restore of an unknown name: %v", err)
	}
	if Hint(err) == "" {
		t.Errorf("no hint for an unknown name")
	}
	if _, err := repo.SnapshotDiff(ctx, "nope"); err == nil || err.Error() != `snapshot diff: no snapshot named "nope"` {
		t.Errorf("diff of an unknown name: %v", err)
	}
	if _, err := repo.SnapshotDelete(ctx, "nope"); err == nil || err.Error() != `snapshot delete: no snapshot named "nope"` {
		t.Errorf("delete of an unknown name: %v", err)
	}
	for _, name := range []string{"", ".secret", "foo/bar", "a b", "-x"} {
		for op, f := range map[string]func() error{
			"create":  func() error { _, err := repo.SnapshotCreate(ctx, name, SnapshotOptions{}); return err },
			"restore": func() error { _, err := repo.SnapshotRestore(ctx, name); return err },
			"diff":    func() error { _, err := repo.SnapshotDiff(ctx, name); return err },
			"delete":  func() error { _, err := repo.SnapshotDelete(ctx, name); return err },
		} {
			err := f()
			if !errors.Is(err, ErrInvalidSnapshotName) || !strings.HasPrefix(err.Error(), "snapshot "+op+": invalid snapshot name") {
				t.Errorf("%s %q: %v", op, name, err)
			}
		}
	}
	// Reusing a name needs Force.
	_, err = repo.SnapshotCreate(ctx, "s1", SnapshotOptions{Description: "second"})
	if err == nil || err.Error() != `snapshot create: snapshot "s1" already exists (checkpoint `+s.Checkpoint.Short()+`)` ||
		!strings.Contains(Hint(err), "--force") || !errors.Is(err, ErrExists) {
		t.Errorf("reusing a name: %v (hint %q)", err, Hint(err))
	}
	if d := treegen.Diff(before, wsState(t, ws)); d != "" {
		t.Errorf("a failed operation changed the workspace: %s", d)
	}
	if got := snapshotRows(mustSnapshots(t, repo)); got != list {
		t.Errorf("a failed operation changed the snapshots: %q, was %q", got, list)
	}
	if now, _ := repo.List(ctx, ListOptions{}); len(now) != len(cps) {
		t.Errorf("a failed operation recorded a checkpoint: %d checkpoints, was %d", len(now), len(cps))
	}

	// With Force the name moves to the current state.
	s2, err := repo.SnapshotCreate(ctx, "s1", SnapshotOptions{Description: "second", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if s2.Checkpoint == s.Checkpoint {
		t.Errorf("--force did not replace the snapshot")
	}
	got, err := repo.Snapshot(ctx, "s1")
	if err != nil || got.Checkpoint != s2.Checkpoint || got.Description != "second" {
		t.Errorf("after force: %+v, %v", got, err)
	}
}

func TestSnapshotTTL(t *testing.T) {
	ctx := context.Background()
	cfg := DefaultConfig()
	cfg.SnapshotTTL = 48 * time.Hour
	repo, _, clk := snapshotRepo(t, BackendMemory, &cfg, map[string]string{"a.txt": "a\n"})
	var events []Event
	repo.Subscribe(func(e Event) {
		if strings.HasPrefix(string(e.Kind), "snapshot-") {
			events = append(events, e)
		}
	})
	short, err := repo.SnapshotCreate(ctx, "short", SnapshotOptions{TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if want := clk.Now().Add(time.Hour).UTC(); !short.Expires.Equal(want) {
		t.Errorf("expires %v, want %v", short.Expires, want)
	}
	def, err := repo.SnapshotCreate(ctx, "default", SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := clk.Now().Add(48 * time.Hour); !def.Expires.Equal(want) {
		t.Errorf("store default: expires %v, want %v", def.Expires, want)
	}
	forever, err := repo.SnapshotCreate(ctx, "forever", SnapshotOptions{TTL: NoExpiry})
	if err != nil {
		t.Fatal(err)
	}
	if !forever.Expires.IsZero() {
		t.Errorf("NoExpiry: expires %v", forever.Expires)
	}

	clk.Add(2 * time.Hour)
	snaps := mustSnapshots(t, repo)
	expired := map[string]bool{}
	for _, s := range snaps {
		expired[s.Name] = s.Expired
	}
	if !expired["short"] || expired["default"] || expired["forever"] {
		t.Errorf("expired = %v", expired)
	}
	// Until it is dropped, an expired snapshot can still be restored...
	if _, err := repo.SnapshotRestore(ctx, "short"); err != nil {
		t.Errorf("restore of an expired snapshot: %v", err)
	}
	names, err := repo.ExpireSnapshots(ctx)
	if err != nil || strings.Join(names, ",") != "short" {
		t.Errorf("ExpireSnapshots = %v, %v", names, err)
	}
	if _, err := repo.Snapshot(ctx, "short"); !errors.Is(err, ErrNotFound) {
		t.Errorf("expired snapshot still there: %v", err)
	}
	// ...and its name may be reused without Force.
	clk.Add(47 * time.Hour)
	if _, err := repo.SnapshotCreate(ctx, "default", SnapshotOptions{}); err != nil {
		t.Errorf("reusing an expired name: %v", err)
	}
	if names, _ := repo.ExpireSnapshots(ctx); len(names) != 0 {
		t.Errorf("second expiry dropped %v", names)
	}
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, string(e.Kind)+":"+e.Name+":"+e.Message)
	}
	want := "snapshot-created:short:,snapshot-created:default:,snapshot-created:forever:,snapshot-deleted:short:expired,snapshot-created:default:"
	if got := strings.Join(kinds, ","); got != want {
		t.Errorf("events:\ngot  %s\nwant %s", got, want)
	}
}

func TestSnapshotListOrderAndDescriptions(t *testing.T) {
	ctx := context.Background()
	repo, _, clk := snapshotRepo(t, BackendMemory, nil, map[string]string{"a.txt": "a\n"})
	for _, c := range []struct{ name, desc, at string }{
		{"b", "same second b", "2026-04-23T10:00:00Z"},
		{"a", "same second a", "2026-04-23T10:00:00Z"},
		{"east", "line one\tcol\nline two", "2026-04-23T11:00:00+02:00"},
		{"west", "", "2026-04-22T23:59:59-05:00"},
	} {
		clk.Set(c.at)
		if _, err := repo.SnapshotCreate(ctx, c.name, SnapshotOptions{Description: c.desc}); err != nil {
			t.Fatal(err)
		}
	}
	var rows []string
	for _, s := range mustSnapshots(t, repo) {
		rows = append(rows, s.Name+" "+s.Time.UTC().Format(SnapshotTimeLayout)+" "+s.Description)
	}
	want := []string{
		"a 2026-04-23T10:00:00+00:00 same second a",
		"b 2026-04-23T10:00:00+00:00 same second b",
		"east 2026-04-23T09:00:00+00:00 line one\tcol\nline two",
		"west 2026-04-23T04:59:59+00:00 ",
	}
	if strings.Join(rows, "|") != strings.Join(want, "|") {
		t.Errorf("rows:\ngot  %q\nwant %q", rows, want)
	}
}
