//go:build unix

package faults

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt"
)

// Class 16: a read-only store (another user's, a mounted backup). Reading
// commands work; mutating commands say the store is not writable, name
// it, and exit 1; nothing in the store changes.

// runNoDAC runs ckpt subject to file permissions even as root (without
// CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH), as cli_test.go's nodac does.
func (e *env) runNoDAC(args ...string) (int, string, string) {
	e.T.Helper()
	c := e.Cmd(args...)
	if os.Getuid() == 0 {
		sp, err := exec.LookPath("setpriv")
		if err != nil {
			e.T.Fatalf("setpriv (util-linux) is needed: %v", err)
		}
		c.Path = sp
		c.Args = append([]string{"setpriv", "--bounding-set=-dac_override,-dac_read_search", e.Bin}, args...)
	}
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			e.T.Fatalf("ckpt %s: %v", strings.Join(args, " "), err)
		}
		code = ee.ExitCode()
	}
	return code, out.String(), errb.String()
}

// storeSize matches the store's size in ckpt status (its -wal and -shm
// files count while they exist).
var storeSize = regexp.MustCompile(`\([0-9.]+ [KMG]?i?B, `)

// storeState lists every entry of the store with its content's hash (its
// mode left out: opening a store tightens modes).
func storeState(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		line := rel
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			h := sha256.Sum256(b)
			line += " " + hex.EncodeToString(h[:8])
		}
		lines = append(lines, line)
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func TestReadOnlyStore(t *testing.T) {
	cases := []struct {
		name string
		lock func(t *testing.T, store string)
	}{
		// The directory cannot be written: SQLite cannot make its -wal and
		// -shm files there.
		{"dir-0555", func(t *testing.T, store string) {
			os.Chmod(store, 0o555)
		}},
		// The directory can, but the files cannot.
		{"files-0400", func(t *testing.T, store string) {
			des, _ := os.ReadDir(store)
			for _, de := range des {
				os.Chmod(filepath.Join(store, de.Name()), 0o400)
			}
		}},
		// Both.
		{"all-read-only", func(t *testing.T, store string) {
			des, _ := os.ReadDir(store)
			for _, de := range des {
				os.Chmod(filepath.Join(store, de.Name()), 0o400)
			}
			os.Chmod(store, 0o555)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.Write(map[string]string{"a.txt": "a1", "b.txt": "b"})
			e.Must("save", "-q", "-m", "first")
			e.Write(map[string]string{"a.txt": "a2"})
			e.Must("save", "-q", "-m", "second")
			e.Must("tag", "v1", "HEAD~1")
			e.Write(map[string]string{"a.txt": "a3 (not saved)"})
			// What a writable store shows.
			reads := [][]string{
				{"list"}, {"log"}, {"show", "HEAD"}, {"show", "--manifest", "v1"},
				{"diff"}, {"diff", "HEAD~1", "HEAD"}, {"diff", "--stat"}, {"status"}, {"fsck"}, {"tags"},
			}
			want := map[string]string{}
			for _, args := range reads {
				want[strings.Join(args, " ")] = e.Must(args...)
			}
			t.Cleanup(func() { os.Chmod(e.Store, 0o700) }) // so t.TempDir can remove it
			tc.lock(t, e.Store)
			before := storeState(t, e.Store)
			for _, args := range reads {
				code, out, errs := e.runNoDAC(args...)
				if code != 0 {
					t.Errorf("ckpt %s on a read-only store: exit %d\n%s", strings.Join(args, " "), code, errs)
					continue
				}
				if w := want[strings.Join(args, " ")]; storeSize.ReplaceAllString(out, "") != storeSize.ReplaceAllString(w, "") {
					t.Errorf("ckpt %s on a read-only store: got\n%s\nwant\n%s", strings.Join(args, " "), out, w)
				}
			}
			for _, args := range [][]string{{"save", "-q"}, {"restore", "v1"}, {"undo"}, {"tag", "v2"}, {"gc"}, {"snapshot", "create", "s"}} {
				code, out, errs := e.runNoDAC(args...)
				if code != 1 {
					t.Errorf("ckpt %s on a read-only store: exit %d, want 1\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
				}
				if !strings.Contains(errs, "store "+e.Store+" is not writable") || !strings.Contains(errs, "ckpt: hint: ") {
					t.Errorf("ckpt %s: stderr does not say the store is not writable:\n%s", strings.Join(args, " "), errs)
				}
			}
			if got := e.Read("a.txt"); got != "a3 (not saved)" {
				t.Errorf("the workspace changed: a.txt = %q", got)
			}
			if after := storeState(t, e.Store); after != before {
				t.Errorf("the read-only store changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}

// TestReadOnlyStoreInUse: a read-only store whose owner has it open and
// writing (its -wal holds checkpoints the database file does not have yet)
// is read through the WAL: the reader sees every committed checkpoint.
func TestReadOnlyStoreInUse(t *testing.T) {
	e := newEnv(t)
	e.Write(map[string]string{"a.txt": "a1"})
	e.Must("save", "-q", "-m", "first")
	r := e.Open(ckpt.Options{})
	t.Cleanup(func() { os.Chmod(e.Store, 0o700) })
	os.Chmod(e.Store, 0o555) // the owner (root, here) still writes
	e.Write(map[string]string{"a.txt": "a2"})
	res, err := r.Save(context.Background(), ckpt.SaveOptions{Message: "only in the WAL"})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(e.Store, "ckpt.db-wal")); err != nil || fi.Size() == 0 {
		t.Fatalf("the test needs a WAL with content: %v", err)
	}
	code, out, errs := e.runNoDAC("list")
	if code != 0 || !strings.Contains(out, res.Checkpoint.Short()) || !strings.Contains(out, "only in the WAL") {
		t.Fatalf("list: exit %d\nstdout: %s\nstderr: %s\nwant the checkpoint %s", code, out, errs, res.Checkpoint.Short())
	}
	if code, _, errs := e.runNoDAC("save", "-q"); code != 1 || !strings.Contains(errs, "is not writable") {
		t.Fatalf("save: exit %d, %s", code, errs)
	}
}

// TestReadOnlyStoreWithJournal: a read-only store holding the journal of
// an interrupted restore still answers reading commands (recovery needs
// write access and waits for it).
func TestReadOnlyStoreWithJournal(t *testing.T) {
	e := newEnv(t)
	e.Write(map[string]string{"a.txt": "a1", "b.txt": "b1"})
	e.Must("save", "-q", "-m", "first")
	e.Write(map[string]string{"a.txt": "a2", "b.txt": "b2"})
	e.Must("save", "-q", "-m", "second")
	e.Extra = []string{"CKPT_FAILPOINT=restore/change=kill@1"}
	if code, _, _ := e.Run("restore", "HEAD~1"); code == 0 {
		t.Fatal("the restore survived its kill")
	}
	e.Extra = nil
	t.Cleanup(func() { os.Chmod(e.Store, 0o700) })
	os.Chmod(e.Store, 0o555)
	for _, args := range [][]string{{"list"}, {"log"}, {"show", "HEAD"}} {
		if code, _, errs := e.runNoDAC(args...); code != 0 {
			t.Errorf("ckpt %s: exit %d: %s", strings.Join(args, " "), code, errs)
		}
	}
	if code, _, errs := e.runNoDAC("recover"); code != 1 || !strings.Contains(errs, "is not writable") {
		t.Errorf("recover: exit %d, %s", code, errs)
	}
	os.Chmod(e.Store, 0o700)
	e.Must("recover")
	if e.Read("a.txt") != "a2" && e.Read("a.txt") != "a1" {
		t.Fatalf("a.txt = %q", e.Read("a.txt"))
	}
}
