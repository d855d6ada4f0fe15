package ckpt

// Attacks on remotes (issue #17): races, processes killed mid-transfer,
// remotes someone else controls, secrets, encryption, bad input. Each
// test says what it checks; a remote is crafted by hand (packs, indexes,
// refs) where a push could not make it.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/klauspost/compress/zstd"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// cli runs a real ckpt process (the test binary under the name ckpt, see
// remote_attack_cli_test.go) for one workspace and store.
type cli struct {
	bin, ws, store string
	env            []string
}

func newCLI(t *testing.T, ws string) *cli {
	t.Helper()
	home := t.TempDir()
	return &cli{bin: testutil.CkptBinary(t, t.TempDir()), ws: ws, store: filepath.Join(t.TempDir(), "store"),
		env: []string{"HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state"), "TZ=UTC", "PATH=" + os.Getenv("PATH")}}
}

func (c *cli) cmd(ctx context.Context, extraEnv []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Dir = c.ws
	cmd.Env = append(append(slicesClone(c.env), "CKPT_STORE="+c.store), extraEnv...)
	return cmd
}

// run runs ckpt and returns its exit status, stdout and stderr.
func (c *cli) run(t *testing.T, extraEnv []string, args ...string) (int, string, string) {
	t.Helper()
	return testutil.Run(t, c.cmd(context.Background(), extraEnv, args...))
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// zst compresses as a remote stores objects and indexes.
func zst(t testing.TB, b []byte) []byte {
	t.Helper()
	e, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	return e.EncodeAll(b, nil)
}

// hobj is an object of a hand-made pack: stored is what the pack holds
// (nil: zstd of kind+data), and the index entry may lie (off/n/size).
type hobj struct {
	kind   byte
	id     ID
	data   []byte
	stored []byte
	// lies: when set, replace the index entry's fields.
	off, n, size *int64
}

// writeHostilePack writes a pack of objs and its index into the file
// remote at dir; packSize, when > 0, is the size the index claims.
func writeHostilePack(t *testing.T, dir string, objs []hobj, packSize int64) string {
	t.Helper()
	var buf bytes.Buffer
	buf.WriteString("CKPTPACK1\n")
	type ent struct {
		K    string `json:"k"`
		ID   ID     `json:"id"`
		O    int64  `json:"o"`
		N    int64  `json:"n"`
		U    int64  `json:"u"`
		Stat any    `json:"st,omitempty"`
	}
	var ents []ent
	for _, o := range objs {
		st := o.stored
		if st == nil {
			st = zst(t, append([]byte{o.kind}, o.data...))
		}
		e := ent{K: string(o.kind), ID: o.id, O: int64(buf.Len()), N: int64(len(st)), U: int64(len(o.data))}
		if o.off != nil {
			e.O = *o.off
		}
		if o.n != nil {
			e.N = *o.n
		}
		if o.size != nil {
			e.U = *o.size
		}
		ents = append(ents, e)
		buf.Write(st)
	}
	sum := sha256.Sum256(buf.Bytes())
	name := hex.EncodeToString(sum[:])
	if packSize <= 0 {
		packSize = int64(buf.Len())
	}
	ix, _ := json.Marshal(map[string]any{"v": 1, "pack": name, "size": packSize, "objects": ents})
	writeKey(t, dir, "packs/"+name[:2]+"/"+name, buf.Bytes())
	writeKey(t, dir, "index/"+name, zst(t, ix))
	return name
}

func writeKey(t *testing.T, dir, key string, data []byte) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeHostileRef writes a ref as a plaintext remote holds it, under the
// key its name gives.
func writeHostileRef(t *testing.T, dir, name string, id ID, symbolic string) {
	t.Helper()
	data, _ := json.Marshal(map[string]any{"name": name, "id": id, "symbolic": symbolic, "time": time.Now().UTC()})
	writeKey(t, dir, "refs/"+name, data)
}

// hostileBase pushes a small workspace to a new file remote and returns
// the remote's directory and URL, and the pushing store.
func hostileBase(t *testing.T) (dir, url string, r *Repo) {
	t.Helper()
	ctx := context.Background()
	ws := t.TempDir()
	testutil.WriteFiles(t, ws, map[string]string{"a.txt": "hello\n", "sub/b.txt": "world\n"})
	r = openTestRepo(t, ws)
	url = fileRemote(t)
	if _, err := r.AddRemote(ctx, RemoteConfig{Name: "origin", URL: url}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Save(ctx, SaveOptions{Message: "base"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Push(ctx, "", PushOptions{}); err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(url, "file://"), url, r
}

// craftedCheckpoint returns a checkpoint (encoded, with its id) of tree.
func craftedCheckpoint(tree ID, msg string) (ID, []byte) {
	cp := &object.Checkpoint{Tree: tree, Time: time.Unix(1700000000, 0).UTC(), Kind: object.KindManual, Message: msg}
	data := cp.Encode()
	if _, err := object.DecodeCheckpoint(data); err != nil {
		panic(err)
	}
	return object.Sum(data), data
}

// cloneWorkspace makes a fresh store with origin at url (not pulled yet).
func pullingRepo(t *testing.T, url string) *Repo {
	t.Helper()
	p := openTestRepo(t, t.TempDir())
	if _, err := p.AddRemote(context.Background(), RemoteConfig{Name: "origin", URL: url}); err != nil {
		t.Fatal(err)
	}
	return p
}

// storeUnharmed checks that a pull that failed left the store checking
// clean, with no ref to a checkpoint it lacks.
func storeUnharmed(t *testing.T, r *Repo) {
	t.Helper()
	ctx := context.Background()
	if res, err := r.Fsck(ctx); err != nil {
		t.Errorf("fsck after a refused pull: %v (%+v)", err, res)
	}
	refsStored(t, r)
}

// refsStored reports every ref that names a checkpoint the store lacks.
func refsStored(t *testing.T, r *Repo) {
	t.Helper()
	refs, err := r.st.Refs(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range refs {
		if ref.ID.IsZero() {
			continue
		}
		if _, err := r.st.Checkpoint(context.Background(), ref.ID); err != nil {
			t.Errorf("ref %s names %s, which the store lacks: %v", ref.Name, ref.ID.Short(), err)
		}
	}
}

// TestAttackRemoteHostileRefs: refs naming a tree, an id nothing holds, or
// a checkpoint whose tree the remote lacks are refused as corruption, and
// the store is left as it was.
func TestAttackRemoteHostileRefs(t *testing.T) {
	ctx := context.Background()
	dir, _, src := hostileBase(t)
	head, err := src.Resolve(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	rec, err := src.st.Checkpoint(ctx, head)
	if err != nil {
		t.Fatal(err)
	}
	orphanTree := object.Sum([]byte("no such tree"))
	cpID, cpData := craftedCheckpoint(orphanTree, "tree missing")
	writeHostilePack(t, dir, []hobj{{kind: 'c', id: cpID, data: cpData}}, 0)
	for name, id := range map[string]ID{
		"branches/at-a-tree":      rec.Tree,
		"branches/at-nothing":     object.Sum([]byte("nothing")),
		"branches/at-missingtree": cpID,
	} {
		t.Run(strings.TrimPrefix(name, "branches/"), func(t *testing.T) {
			d := t.TempDir()
			copyDir(t, dir, d)
			writeHostileRef(t, d, name, id, "")
			p := pullingRepo(t, "file://"+d)
			_, err := p.Pull(ctx, "origin")
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("pull of a ref %s: %v, want a corruption error", name, err)
			}
			storeUnharmed(t, p)
		})
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", from+"/.", to).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
}

// TestAttackRemoteHostileIndexes: indexes that lie (offsets overlapping,
// naming a pack of other content, a kind that does not match) give
// corruption errors; nothing is imported.
func TestAttackRemoteHostileIndexes(t *testing.T) {
	ctx := context.Background()
	dir, _, _ := hostileBase(t)
	blob := []byte("evil content\n")
	tree := &object.Tree{Entries: []object.Entry{{Name: "evil.txt", Mode: 0o100644, Size: int64(len(blob)), ID: object.Sum(blob)}}}
	tdata := tree.Encode()
	cpID, cpData := craftedCheckpoint(object.Sum(tdata), "evil")
	other := []byte("other content entirely")
	zero := int64(10)
	cases := map[string][]hobj{
		// Every entry points at the first object.
		"overlapping": {
			{kind: 'b', id: object.Sum(other), data: other},
			{kind: 't', id: object.Sum(tdata), data: tdata, off: &zero},
			{kind: 'c', id: cpID, data: cpData, off: &zero},
		},
		// The right ids over other content.
		"other-content": {
			{kind: 'b', id: object.Sum(blob), data: blob, stored: zst(t, append([]byte{'b'}, other...))},
			{kind: 't', id: object.Sum(tdata), data: tdata},
			{kind: 'c', id: cpID, data: cpData},
		},
		// A tree stored as a checkpoint.
		"kind-mismatch": {
			{kind: 'b', id: object.Sum(blob), data: blob},
			{kind: 't', id: object.Sum(tdata), data: tdata},
			{kind: 'c', id: cpID, data: cpData, stored: zst(t, append([]byte{'t'}, cpData...))},
		},
	}
	for name, objs := range cases {
		t.Run(name, func(t *testing.T) {
			d := t.TempDir()
			copyDir(t, dir, d)
			writeHostilePack(t, d, objs, 0)
			writeHostileRef(t, d, "branches/evil", cpID, "")
			p := pullingRepo(t, "file://"+d)
			_, err := p.Pull(ctx, "origin")
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("pull: %v, want a corruption error", err)
			}
			storeUnharmed(t, p)
			if _, err := p.st.Checkpoint(ctx, cpID); err == nil {
				t.Errorf("the hostile checkpoint was imported")
			}
		})
	}
}

// TestAttackRemoteHostileHead: a remote HEAD pointing at "../../x" does not
// make clone restore anything odd; the clone takes main.
func TestAttackRemoteHostileHead(t *testing.T) {
	ctx := context.Background()
	dir, url, src := hostileBase(t)
	head, _ := src.Resolve(ctx, "HEAD")
	writeHostileRef(t, dir, "HEAD", head, "../../x")
	out := filepath.Join(t.TempDir(), "clone")
	c, res, err := Clone(ctx, url, out, CloneOptions{Open: Options{Store: t.TempDir()}})
	if err != nil {
		t.Fatalf("clone: %v", err)
	}
	defer c.Close()
	if res.Rev != "main" {
		t.Errorf("clone restored %q, want main", res.Rev)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(out)), "x")); err == nil {
		t.Errorf("clone wrote x outside the clone")
	}
}

// TestAttackRemoteHostileTrees: trees with names "..", "a/b", ".git", an
// absolute name or a NUL are refused (corruption) and nothing is written
// outside the clone.
func TestAttackRemoteHostileTrees(t *testing.T) {
	ctx := context.Background()
	dir, _, _ := hostileBase(t)
	blob := []byte("escaped\n")
	for _, name := range []string{"..", "a/b", ".git", "/abs", "nul\x00x", "."} {
		t.Run(fmt.Sprintf("%q", name), func(t *testing.T) {
			d := t.TempDir()
			copyDir(t, dir, d)
			// Encode by hand: the encoder may refuse such names.
			var tb bytes.Buffer
			id := object.Sum(blob)
			fmt.Fprintf(&tb, "%o %d %s\x00", 0o100644, len(blob), name)
			tb.Write(id[:])
			tdata := tb.Bytes()
			cpID, cpData := craftedCheckpoint(object.Sum(tdata), "escape")
			writeHostilePack(t, d, []hobj{
				{kind: 'b', id: id, data: blob},
				{kind: 't', id: object.Sum(tdata), data: tdata},
				{kind: 'c', id: cpID, data: cpData},
			}, 0)
			writeHostileRef(t, d, "branches/main", cpID, "")
			parent := t.TempDir()
			out := filepath.Join(parent, "in", "clone")
			_, _, err := Clone(ctx, "file://"+d, out, CloneOptions{Open: Options{Store: t.TempDir()}})
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("clone of a tree naming %q: %v, want a corruption error", name, err)
			}
			filepath.WalkDir(parent, func(p string, de os.DirEntry, err error) error {
				if err == nil && !de.IsDir() {
					t.Errorf("clone left %s", p)
				}
				return nil
			})
		})
	}
}

// TestAttackRemoteSymlinkEscape: a checkpoint whose tree holds a symlink
// out of the workspace, then one whose tree puts a file where the link
// was (under a directory of the same name): restoring them never writes
// outside the workspace.
func TestAttackRemoteSymlinkEscape(t *testing.T) {
	ctx := context.Background()
	dir, _, _ := hostileBase(t)
	outside := t.TempDir()
	link := []byte(outside)
	t1 := &object.Tree{Entries: []object.Entry{{Name: "l", Mode: 0o120000, Size: int64(len(link)), ID: object.Sum(link)}}}
	t1d := t1.Encode()
	blob := []byte("through the link\n")
	sub := &object.Tree{Entries: []object.Entry{{Name: "pwned.txt", Mode: 0o100644, Size: int64(len(blob)), ID: object.Sum(blob)}}}
	subd := sub.Encode()
	t2 := &object.Tree{Entries: []object.Entry{{Name: "l", Mode: 0o040000, Size: sub.Size(), ID: object.Sum(subd)}}}
	t2d := t2.Encode()
	c1, c1d := craftedCheckpoint(object.Sum(t1d), "link")
	cp2 := &object.Checkpoint{Tree: object.Sum(t2d), Parents: []ID{c1}, Time: time.Unix(1700000100, 0).UTC(), Kind: object.KindManual, Message: "through"}
	c2d := cp2.Encode()
	c2 := object.Sum(c2d)
	writeHostilePack(t, dir, []hobj{
		{kind: 'b', id: object.Sum(link), data: link},
		{kind: 'b', id: object.Sum(blob), data: blob},
		{kind: 't', id: object.Sum(t1d), data: t1d},
		{kind: 't', id: object.Sum(subd), data: subd},
		{kind: 't', id: object.Sum(t2d), data: t2d},
		{kind: 'c', id: c1, data: c1d},
		{kind: 'c', id: c2, data: c2d},
	}, 0)
	writeHostileRef(t, dir, "tags/link", c1, "")
	writeHostileRef(t, dir, "tags/through", c2, "")
	ws := t.TempDir()
	p := pullingRepo(t, "file://"+dir)
	// The pulling repo's workspace is a temp dir; restore both.
	_ = ws
	if _, err := p.Pull(ctx, "origin"); err != nil {
		t.Fatalf("pull: %v", err)
	}
	for _, rev := range []string{"link", "through"} {
		_, err := p.Restore(ctx, rev, RestoreOptions{})
		t.Logf("restore %s: %v", rev, err)
	}
	if _, err := os.Stat(filepath.Join(outside, "pwned.txt")); err == nil {
		t.Errorf("restoring the remote's checkpoints wrote %s, outside the workspace", filepath.Join(outside, "pwned.txt"))
	}
}

// TestAttackRemoteHostileSessions: session documents naming checkpoints
// that do not exist, or of absurd sizes, do not break a pull: it fails
// clearly or ignores them; the store checks clean.
func TestAttackRemoteHostileSessions(t *testing.T) {
	ctx := context.Background()
	dir, _, _ := hostileBase(t)
	ghost := object.Sum([]byte("ghost")).String()
	docs := map[string]string{
		"ghost":  `{"id":"ghost","updated":"2024-01-01T00:00:00Z","session":{"id":"ghost","turns":[{"n":1,"begin":"` + ghost + `","end":"` + ghost + `"}]},"messages":[]}`,
		"absurd": `{"id":"absurd","updated":"2024-01-01T00:00:00Z","session":{"id":"absurd","turns":[{"n":99999999999,"begin":"` + ghost + `","size":1e300}]},"messages":[{"bytes":-1}]}`,
		"dotdot": `{"id":"../../../etc/passwd","updated":"2024-01-01T00:00:00Z","session":{},"messages":[]}`,
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			d := t.TempDir()
			copyDir(t, dir, d)
			sum := sha256.Sum256([]byte(name))
			writeKey(t, d, "sessions/"+hex.EncodeToString(sum[:]), zst(t, []byte(doc)))
			p := pullingRepo(t, "file://"+d)
			_, err := p.Pull(ctx, "origin")
			t.Logf("pull: %v", err)
			storeUnharmed(t, p)
			if _, err := p.Sessions(ctx); err != nil {
				t.Errorf("sessions after the pull: %v", err)
			}
		})
	}
}

// TestAttackRemoteEncryptionMismatch: a config that says encrypted over
// plaintext objects, and plaintext config over sealed objects, are
// corruption errors, not garbage imported or a crash.
func TestAttackRemoteEncryptionMismatch(t *testing.T) {
	ctx := context.Background()
	plainDir, plainURL, src := hostileBase(t)
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	idFile := filepath.Join(t.TempDir(), "id.txt")
	os.WriteFile(idFile, []byte(id.String()+"\n"), 0o600)
	encURL := fileRemote(t)
	encDir := strings.TrimPrefix(encURL, "file://")
	if _, err := src.AddRemote(ctx, RemoteConfig{Name: "enc", URL: encURL, Recipients: []string{id.Recipient().String()}}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Push(ctx, "enc", PushOptions{}); err != nil {
		t.Fatal(err)
	}
	encConfig, _ := os.ReadFile(filepath.Join(encDir, "config"))
	plainConfig, _ := os.ReadFile(filepath.Join(plainDir, "config"))
	// Swap the configs.
	a, b := t.TempDir(), t.TempDir()
	copyDir(t, plainDir, a)
	copyDir(t, encDir, b)
	writeKey(t, a, "config", encConfig)
	writeKey(t, b, "config", plainConfig)
	_ = plainURL
	for name, d := range map[string]string{"says-encrypted": a, "says-plain": b} {
		t.Run(name, func(t *testing.T) {
			p := openTestRepo(t, t.TempDir())
			if _, err := p.AddRemote(ctx, RemoteConfig{Name: "origin", URL: "file://" + d, Identities: []string{idFile}}); err != nil {
				t.Fatal(err)
			}
			_, err := p.Pull(ctx, "origin")
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("pull: %v, want a corruption error", err)
			}
			storeUnharmed(t, p)
		})
	}
}

// TestAttackRemoteHugeIndexEntry: an index entry claiming an object of a
// petabyte makes `ckpt pull` fail cleanly (exit 3), not crash or try to
// allocate it.
func TestAttackRemoteHugeIndexEntry(t *testing.T) {
	dir, url, _ := hostileBase(t)
	cpID, cpData := craftedCheckpoint(object.Sum([]byte("x")), "huge")
	off, n := int64(10), int64(1<<50)
	writeHostilePack(t, dir, []hobj{{kind: 'c', id: cpID, data: cpData, off: &off, n: &n}}, 1<<51)
	writeHostileRef(t, dir, "branches/huge", cpID, "")
	c := newCLI(t, t.TempDir())
	if code, out, errs := c.run(t, nil, "remote", "add", "origin", url); code != 0 {
		t.Fatalf("remote add: %d\n%s%s", code, out, errs)
	}
	code, _, stderr := c.run(t, nil, "pull")
	if code != 3 || strings.Contains(stderr, "goroutine") || strings.Contains(stderr, "panic") {
		t.Errorf("ckpt pull of an index entry of 2^50 bytes: exit %d, want 3 (corrupt remote); stderr:\n%.1500s", code, stderr)
	}
}

// TestAttackRemoteZstdBomb: an object a few KiB long that decompresses to
// 256 MiB (its index says 5 bytes) is refused without the memory: a
// hostile remote must not make a pull allocate what it likes.
func TestAttackRemoteZstdBomb(t *testing.T) {
	dir, url, _ := hostileBase(t)
	// 256 MiB of zeros, streamed: the frame does not declare its size.
	var bomb bytes.Buffer
	zw, err := zstd.NewWriter(&bomb, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		t.Fatal(err)
	}
	zw.Write([]byte{'b'})
	chunk := make([]byte, 1<<20)
	for i := 0; i < 256; i++ {
		zw.Write(chunk)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("bomb: %d bytes compressed", bomb.Len())
	blob := []byte("small")
	tree := &object.Tree{Entries: []object.Entry{{Name: "bomb.txt", Mode: 0o100644, Size: int64(len(blob)), ID: object.Sum(blob)}}}
	tdata := tree.Encode()
	cpID, cpData := craftedCheckpoint(object.Sum(tdata), "bomb")
	writeHostilePack(t, dir, []hobj{
		{kind: 'b', id: object.Sum(blob), data: blob, stored: bomb.Bytes()},
		{kind: 't', id: object.Sum(tdata), data: tdata},
		{kind: 'c', id: cpID, data: cpData},
	}, 0)
	writeHostileRef(t, dir, "branches/bomb", cpID, "")
	c := newCLI(t, t.TempDir())
	if code, out, errs := c.run(t, nil, "remote", "add", "origin", url); code != 0 {
		t.Fatalf("remote add: %d\n%s%s", code, out, errs)
	}
	cmd := c.cmd(context.Background(), nil, "pull")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	rss, measured := peakRSS(cmd.ProcessState)
	if !measured {
		t.Logf("peak memory is not measured on %s: only the exit status is checked", runtime.GOOS)
	}
	if code != 3 {
		t.Errorf("ckpt pull of a zstd bomb: exit %d, want 3; stderr:\n%.1000s", code, stderr.String())
	}
	limit := int64(200 << 20)
	if raceEnabled {
		limit *= 2 // the race detector's shadow memory
	}
	if measured && rss > limit {
		t.Errorf("ckpt pull of a %d-byte object (index: 5 bytes) that decodes to 256 MiB peaked at %d MiB of memory, want < %d", bomb.Len(), rss>>20, limit>>20)
	}
}

// TestAttackRemoteTruncatedPack: an index whose pack is shorter than it
// says (a pack cut short, or a hostile one) is corruption (exit 3, at
// once), not an I/O error retried for seconds and reported as exit 1.
func TestAttackRemoteTruncatedPack(t *testing.T) {
	ctx := context.Background()
	dir, _, _ := hostileBase(t)
	blob := []byte("truncated\n")
	tree := &object.Tree{Entries: []object.Entry{{Name: "t.txt", Mode: 0o100644, Size: int64(len(blob)), ID: object.Sum(blob)}}}
	tdata := tree.Encode()
	cpID, cpData := craftedCheckpoint(object.Sum(tdata), "truncated")
	far, n := int64(1<<20), int64(64)
	writeHostilePack(t, dir, []hobj{
		{kind: 'b', id: object.Sum(blob), data: blob, off: &far, n: &n},
		{kind: 't', id: object.Sum(tdata), data: tdata},
		{kind: 'c', id: cpID, data: cpData},
	}, 2<<20)
	writeHostileRef(t, dir, "branches/evil", cpID, "")
	p := pullingRepo(t, "file://"+dir)
	start := time.Now()
	_, err := p.Pull(ctx, "origin")
	took := time.Since(start)
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("pull of an index past its pack's end: %v, want a corruption error (exit 3)", err)
	}
	if took > 2*time.Second {
		t.Errorf("pull took %v: a pack shorter than its index is retried as if the remote were unreachable", took.Round(time.Millisecond))
	}
	storeUnharmed(t, p)
}

// TestAttackRemoteHostileRefNames: a remote's refs land in the store only
// as what they are: a remote cannot create refs outside branches, tags
// and snapshots (its own tracking refs aside), nor overwrite another
// remote's tracking refs.
func TestAttackRemoteHostileRefNames(t *testing.T) {
	ctx := context.Background()
	dir, url, src := hostileBase(t)
	head, _ := src.Resolve(ctx, "HEAD")
	writeHostileRef(t, dir, "remotes/backup/branches/main", head, "")
	writeHostileRef(t, dir, "junk", head, "")
	p := openTestRepo(t, t.TempDir())
	backup := fileRemote(t)
	for _, rc := range []RemoteConfig{{Name: "origin", URL: url}, {Name: "backup", URL: backup}} {
		if _, err := p.AddRemote(ctx, rc); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Pull(ctx, "origin"); err != nil {
		t.Logf("pull: %v", err)
	}
	refs, err := p.st.Refs(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range refs {
		ok := false
		for _, pre := range []string{branchPrefix, tagPrefix, snapshotPrefix, remoteRefPrefix + "origin/"} {
			ok = ok || strings.HasPrefix(ref.Name, pre)
		}
		if ref.Name == headName {
			ok = true
		}
		if !ok {
			t.Errorf("a pull from origin created the ref %q", ref.Name)
		}
	}
}

// secretLeaks runs ckpt with args and fails if stdout or stderr shows
// one of secrets.
func secretLeaks(t *testing.T, c *cli, env []string, args []string, secrets ...string) {
	t.Helper()
	code, out, errs := c.run(t, env, args...)
	all := out + errs
	for _, s := range secrets {
		if strings.Contains(strings.ToUpper(all), strings.ToUpper(s)) {
			shown := all
			for _, x := range secrets {
				shown = strings.ReplaceAll(shown, x, "<SECRET>")
			}
			t.Errorf("ckpt %s (exit %d) shows a secret:\n%s", strings.Join(args, " "), code, shown)
			return
		}
	}
}

// TestAttackRemoteSecretKeyInErrors: an age secret key given where a file
// name or a recipient is wanted (a common slip: CKPT_AGE_IDENTITY set to
// the key itself, or the key pasted after --identity or --recipient), and
// a garbled identity file, never reach stdout or stderr.
func TestAttackRemoteSecretKeyInErrors(t *testing.T) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	secret := id.String()
	body := secret[len("AGE-SECRET-KEY-1"):]
	ws := t.TempDir()
	testutil.WriteFiles(t, ws, map[string]string{"a.txt": "a\n"})
	c := newCLI(t, ws)
	url := fileRemote(t)
	garbled := filepath.Join(t.TempDir(), "garbled.txt")
	os.WriteFile(garbled, []byte("AGE-SECRET-KEY-9"+body+"\n"), 0o600)
	if code, out, errs := c.run(t, nil, "save", "-m", "one"); code != 0 {
		t.Fatalf("save: %d %s%s", code, out, errs)
	}
	if code, out, errs := c.run(t, nil, "remote", "add", "origin", url); code != 0 {
		t.Fatalf("remote add: %d %s%s", code, out, errs)
	}
	cases := []struct {
		name string
		env  []string
		args []string
	}{
		{"env key instead of file", []string{"CKPT_AGE_IDENTITY=" + secret}, []string{"push"}},
		{"env key instead of file, json", []string{"CKPT_AGE_IDENTITY=" + secret}, []string{"pull", "--json"}},
		{"recipient is a secret key", nil, []string{"remote", "add", "r1", url, "--recipient", secret}},
		{"identity is a secret key", nil, []string{"remote", "add", "r2", url, "--identity", secret}},
		{"clone identity is a secret key", nil, []string{"clone", "--identity", secret, url, filepath.Join(t.TempDir(), "c")}},
		{"garbled identity file", []string{"CKPT_AGE_IDENTITY=" + garbled}, []string{"push"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { secretLeaks(t, c, tc.env, tc.args, secret, body) })
	}
}

// TestAttackRemoteEndpointPasswordInErrors: a password in an S3 endpoint
// is refused without being repeated, percent-encoded or not.
func TestAttackRemoteEndpointPasswordInErrors(t *testing.T) {
	c := newCLI(t, t.TempDir())
	for _, u := range []string{
		"s3://ckpt-test/p?endpoint=http://admin:hunter2secret@127.0.0.1:9000",
		"s3://ckpt-test/p?endpoint=http%3A%2F%2Fadmin%3Ahunter2secret%40127.0.0.1%3A9000",
		"s3://ckpt-test/p?endpoint=http://admin%3Ahunter2secret@127.0.0.1:9000",
	} {
		secretLeaks(t, c, nil, []string{"remote", "add", "r", u}, "hunter2secret")
	}
}

// TestAttackRemoteGCDeletesPackAPushJustIndexed: a push cut short left a
// pack without its index; an hour later the push is run again while a
// remote gc runs. The push finds the pack already there (same content,
// same name), writes its index and moves the ref; the gc, which read the
// indexes before, sees an old pack no index lists and deletes it. The
// ref then names a checkpoint whose objects are gone. The gc is
// interleaved deterministically: its clock (read once, after it loads
// the indexes) runs the push.
func TestAttackRemoteGCDeletesPackAPushJustIndexed(t *testing.T) {
	ctx := context.Background()
	dir, url, p := hostileBase(t)
	ws := p.Root()
	saveKey := func(key string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, key))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	oldMain, oldHead := saveKey("refs/branches/main"), saveKey("refs/HEAD")
	before := listKeys(t, dir, "index")
	testutil.WriteFiles(t, ws, map[string]string{"new.txt": "pushed after the cut\n"})
	if _, err := p.Save(ctx, SaveOptions{Message: "two"}); err != nil {
		t.Fatal(err)
	}
	want := snapshot(t, ws)
	if _, err := p.Push(ctx, "", PushOptions{}); err != nil {
		t.Fatal(err)
	}
	// Make it a push cut short before its index: no index, no ref moved,
	// and the pack an hour and a half old.
	old := time.Now().Add(-90 * time.Minute)
	for k := range listKeys(t, dir, "index") {
		if before[k] {
			continue
		}
		name := filepath.Base(k)
		os.Remove(filepath.Join(dir, k))
		os.Remove(filepath.Join(p.storeDir, "remotes", "origin", "index", name[:2], name))
		if err := os.Chtimes(filepath.Join(dir, "packs", name[:2], name), old, old); err != nil {
			t.Fatal(err)
		}
	}
	writeKey(t, dir, "refs/branches/main", oldMain)
	writeKey(t, dir, "refs/HEAD", oldHead)

	g := openTestRepo(t, t.TempDir())
	if _, err := g.AddRemote(ctx, RemoteConfig{Name: "origin", URL: url}); err != nil {
		t.Fatal(err)
	}
	pushed := false
	g.opts.Now = func() time.Time {
		if !pushed {
			pushed = true
			if _, err := p.Push(ctx, "", PushOptions{}); err != nil {
				t.Errorf("the push during gc: %v", err)
			}
		}
		return time.Now()
	}
	res, err := g.GCRemote(ctx, "origin", RemoteGCOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !pushed {
		t.Fatal("the gc never read its clock: the interleaving did not happen")
	}
	t.Logf("gc: orphans %v, marked %v, deleted %v", res.Orphans, res.Marked, res.Deleted)
	if _, err := g.FsckRemote(ctx, "origin", RemoteFsckOptions{}); err != nil {
		t.Errorf("after a push and a gc at once, fsck --remote: %v", err)
	}
	out := filepath.Join(t.TempDir(), "clone")
	c, _, err := Clone(ctx, url, out, CloneOptions{Open: Options{Store: t.TempDir()}})
	if err != nil {
		t.Fatalf("after a push and a gc at once, the pushed branch does not clone: %v", err)
	}
	defer c.Close()
	if d := snapshotDiff(want, snapshot(t, out)); d != "" {
		t.Errorf("the clone differs:\n%s", d)
	}
}

func snapshotDiff(a, b treegen.State) string { return treegen.Diff(a, b) }

// listKeys lists the keys under prefix of a file remote.
func listKeys(t *testing.T, dir, prefix string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	filepath.WalkDir(filepath.Join(dir, prefix), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasPrefix(d.Name(), ".") && !strings.HasSuffix(d.Name(), ".lock") {
			rel, _ := filepath.Rel(dir, p)
			out[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	return out
}

// TestAttackRemoteKillMidTransfer: `ckpt push` and `ckpt pull` killed
// with SIGKILL at random points, again and again: the remote checks
// clean, the next push completes and a clone equals the source; the
// pulling store checks clean, holds no checkpoint without its tree, and
// the next pull completes.
func TestAttackRemoteKillMidTransfer(t *testing.T) {
	rounds := 4
	if !testing.Short() && !raceEnabled {
		rounds = 30 // (scripts/test's run without -race)
	}
	// Kills land within this many milliseconds of the start: a race-built
	// ckpt is many times slower, and its kills must still fall inside the
	// transfer, not only before it.
	killWithin := 60
	if raceEnabled {
		killWithin = 600
	}
	rnd := rand.New(rand.NewPCG(41, 7))
	ws := t.TempDir()
	files := map[string]string{}
	for i := 0; i < 300; i++ {
		b := make([]byte, 16<<10+rnd.IntN(32<<10))
		for j := range b {
			b[j] = byte(rnd.Uint32())
		}
		files[fmt.Sprintf("d%d/f%03d.bin", i%7, i)] = string(b)
	}
	testutil.WriteFiles(t, ws, files)
	src := newCLI(t, ws)
	url := fileRemote(t)
	mustRun := func(c *cli, args ...string) string {
		t.Helper()
		code, out, errs := c.run(t, nil, args...)
		if code != 0 {
			t.Fatalf("ckpt %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
		}
		return out
	}
	mustRun(src, "save", "-m", "one")
	mustRun(src, "remote", "add", "origin", url)
	kill := func(c *cli, args ...string) {
		cmd := c.cmd(context.Background(), nil, args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rnd.IntN(killWithin)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	}
	for i := 0; i < rounds; i++ {
		// A new checkpoint each round, so each push has work to do.
		testutil.WriteFiles(t, ws, map[string]string{fmt.Sprintf("d%d/f%03d.bin", i%7, rnd.IntN(300)): fmt.Sprint("round ", i, "\n")})
		mustRun(src, "save", "-m", fmt.Sprint("round ", i))
		kill(src, "push")
	}
	// Every push may have been killed before it wrote the remote's config
	// object (a busy machine, a race-built ckpt): then fsck says the remote
	// holds nothing yet, and the push below must still complete.
	if code, out, errs := src.run(t, nil, "fsck", "--remote", "origin"); code != 0 && !strings.Contains(errs, "holds no checkpoints (no ckpt config object)") {
		t.Errorf("fsck --remote after killed pushes: exit %d\n%s%s", code, out, errs)
	}
	mustRun(src, "push")
	if code, out, errs := src.run(t, nil, "fsck", "--remote", "origin"); code != 0 {
		t.Errorf("fsck --remote after the push: exit %d\n%s%s", code, out, errs)
	}
	want := snapshot(t, ws)
	cloneEquals(t, url, want, CloneOptions{})

	dst := newCLI(t, t.TempDir())
	mustRun(dst, "remote", "add", "origin", url)
	for i := 0; i < rounds; i++ {
		kill(dst, "pull")
		if code, out, errs := dst.run(t, nil, "fsck"); code != 0 {
			t.Fatalf("fsck of the pulling store after a killed pull (round %d): exit %d\n%s%s", i, code, out, errs)
		}
	}
	mustRun(dst, "pull")
	if code, out, errs := dst.run(t, nil, "fsck"); code != 0 {
		t.Errorf("fsck after the pull: exit %d\n%s%s", code, out, errs)
	}
	mustRun(dst, "restore", "origin/main")
	if d := treegen.Diff(want, snapshot(t, dst.ws)); d != "" {
		t.Errorf("after killed pulls and a pull, origin/main restores to something else:\n%s", d)
	}
}

// TestAttackRemoteConcurrentProcesses: two ckpt processes push the same
// branch, and different branches, at once, round after round: no ref
// update is lost (different branches), exactly one of a same-branch
// pair wins or both agree, and the remote checks clean.
func TestAttackRemoteConcurrentProcesses(t *testing.T) {
	rounds := 6
	if !testing.Short() && !raceEnabled {
		rounds = 50 // (scripts/test's run without -race)
	}
	url := fileRemote(t)
	var cs [2]*cli
	for i := range cs {
		ws := t.TempDir()
		testutil.WriteFiles(t, ws, map[string]string{"common.txt": "same\n"})
		cs[i] = newCLI(t, ws)
		if code, out, errs := cs[i].run(t, nil, "remote", "add", "origin", url); code != 0 {
			t.Fatalf("remote add: %d %s%s", code, out, errs)
		}
	}
	for round := 0; round < rounds; round++ {
		for i, c := range cs {
			testutil.WriteFiles(t, c.ws, map[string]string{fmt.Sprintf("f%d.txt", i): fmt.Sprint(round, "\n")})
			if code, out, errs := c.run(t, nil, "save", "-m", fmt.Sprint(round)); code != 0 {
				t.Fatalf("save: %d %s%s", code, out, errs)
			}
			if code, out, errs := c.run(t, nil, "branch", fmt.Sprintf("own%d-%d", i, round)); code != 0 {
				t.Fatalf("branch: %d %s%s", code, out, errs)
			}
		}
		type result struct {
			code     int
			out, err string
		}
		var res [2]result
		done := make(chan int)
		for i, c := range cs {
			go func() {
				cmd := c.cmd(context.Background(), nil, "push", "origin", "main", fmt.Sprintf("own%d-%d", i, round))
				var o, e bytes.Buffer
				cmd.Stdout, cmd.Stderr = &o, &e
				err := cmd.Run()
				code := 0
				if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
					code = ee.ExitCode()
				}
				res[i] = result{code, o.String(), e.String()}
				done <- i
			}()
		}
		<-done
		<-done
		for i, r := range res {
			if r.code != 0 && !strings.Contains(r.err, "refused") {
				t.Fatalf("round %d: push %d: exit %d\n%s%s", round, i, r.code, r.out, r.err)
			}
		}
		if round == 0 && res[0].code != 0 && res[1].code != 0 {
			t.Errorf("round 0: both pushes of main were refused:\n%s\n%s", res[0].err, res[1].err)
		}
	}
	p := pullingRepo(t, url)
	pr, err := p.Pull(context.Background(), "origin")
	if err != nil {
		t.Fatal(err)
	}
	own := 0
	for _, ref := range pr.Refs {
		if strings.HasPrefix(ref.Name, "branches/own") {
			own++
		}
	}
	if own != 2*rounds {
		t.Errorf("the remote has %d of the %d branches pushed", own, 2*rounds)
	}
	if _, err := p.FsckRemote(context.Background(), "origin", RemoteFsckOptions{}); err != nil {
		t.Errorf("fsck --remote: %v", err)
	}
}
