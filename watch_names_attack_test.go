//go:build linux

package ckpt

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Attacks on the watcher's per-entry names (a save stats only the entries
// an event named): every save with the watcher must record what a full
// scan finds. Each runs served and asked (NoServe).

func namesReady(t *testing.T, files map[string]string, noServe bool) (*Repo, string) {
	t.Helper()
	r, ws := openTest(t, files)
	startWatcherWith(t, r, WatchOptions{NoServe: noServe})
	for i := 0; i < 2; i++ {
		if _, err := r.Save(context.Background(), SaveOptions{AllowEmpty: true}); err != nil {
			t.Fatal(err)
		}
	}
	return r, ws
}

func bothModes(t *testing.T, f func(t *testing.T, noServe bool)) {
	for _, m := range []struct {
		name    string
		noServe bool
	}{{"served", false}, {"asked", true}} {
		t.Run(m.name, func(t *testing.T) {
			before := unstatedEntries.Load()
			f(t, m.noServe)
			t.Logf("entries taken from the cache: %d", unstatedEntries.Load()-before)
		})
	}
}

func dirFiles(n int) map[string]string {
	m := map[string]string{"top.txt": "t\n"}
	for i := 0; i < n; i++ {
		m[fmt.Sprintf("d/f%02d.txt", i)] = fmt.Sprintf("content %02d\n", i)
		m[fmt.Sprintf("e/g%02d.txt", i)] = fmt.Sprintf("content %02d\n", i)
	}
	return m
}

func TestNamesAttackMetadata(t *testing.T) {
	bothModes(t, func(t *testing.T, noServe bool) {
		r, ws := namesReady(t, dirFiles(10), noServe)
		p := func(s string) string { return filepath.Join(ws, s) }
		// same-size rewrite, mtime put back
		fi, _ := os.Stat(p("d/f01.txt"))
		writeFile(t, ws, "d/f01.txt", "CONTENT 01\n")
		os.Chtimes(p("d/f01.txt"), fi.ModTime(), fi.ModTime())
		saveMatchesFull(t, r, "same-size rewrite, old mtime")
		// chmod only
		os.Chmod(p("d/f02.txt"), 0o755)
		saveMatchesFull(t, r, "chmod +x")
		// truncate to the same size through a path
		fi, _ = os.Stat(p("d/f03.txt"))
		os.Truncate(p("d/f03.txt"), 0)
		os.Truncate(p("d/f03.txt"), fi.Size())
		os.Chtimes(p("d/f03.txt"), fi.ModTime(), fi.ModTime())
		saveMatchesFull(t, r, "truncate to same size")
		// xattr
		unix.Setxattr(p("d/f04.txt"), "user.x", []byte("y"), 0)
		writeFile(t, ws, "d/f05.txt", "CONTENT 05\n")
		saveMatchesFull(t, r, "xattr")
		// racy: edit right after a save, same size, repeatedly
		for i := 0; i < 20; i++ {
			writeFile(t, ws, "d/f06.txt", fmt.Sprintf("racy %04d\n", i))
			saveMatchesFull(t, r, fmt.Sprint("racy edit ", i))
			writeFile(t, ws, "d/f06.txt", fmt.Sprintf("RACY %04d\n", i))
			writeFile(t, ws, "d/f07.txt", fmt.Sprintf("other %04d\n", i))
			saveMatchesFull(t, r, fmt.Sprint("racy edit again ", i))
		}
	})
}

func TestNamesAttackDescriptors(t *testing.T) {
	bothModes(t, func(t *testing.T, noServe bool) {
		r, ws := namesReady(t, dirFiles(10), noServe)
		p := func(s string) string { return filepath.Join(ws, s) }
		// opened, then renamed within the directory
		f, err := os.OpenFile(p("d/f01.txt"), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		os.Rename(p("d/f01.txt"), p("d/r01.txt"))
		saveMatchesFull(t, r, "renamed in dir")
		f.WriteAt([]byte("XX"), 0)
		saveMatchesFull(t, r, "written through fd after rename in dir")
		// across directories
		os.Rename(p("d/r01.txt"), p("e/r01.txt"))
		saveMatchesFull(t, r, "renamed across")
		f.WriteAt([]byte("YY"), 0)
		writeFile(t, ws, "e/g01.txt", "sibling\n")
		saveMatchesFull(t, r, "written through fd after rename across")
		f.Close()
		// a rename over an open file, then writes through both
		g, _ := os.OpenFile(p("d/f02.txt"), os.O_WRONLY, 0)
		os.Rename(p("d/f03.txt"), p("d/f02.txt"))
		h, _ := os.OpenFile(p("d/f02.txt"), os.O_WRONLY, 0)
		saveMatchesFull(t, r, "renamed over open")
		g.WriteAt([]byte("GG"), 0)
		h.WriteAt([]byte("HH"), 0)
		saveMatchesFull(t, r, "written after rename over")
		g.Close()
		h.Close()
		// a → b then b → a between two saves
		os.Rename(p("d/f04.txt"), p("d/tmp"))
		os.Rename(p("d/tmp"), p("d/f04.txt"))
		saveMatchesFull(t, r, "a→b→a")
		// opened, renamed out and back, written
		k, _ := os.OpenFile(p("d/f05.txt"), os.O_WRONLY, 0)
		os.Rename(p("d/f05.txt"), p("e/f05.txt"))
		os.Rename(p("e/f05.txt"), p("d/f05.txt"))
		saveMatchesFull(t, r, "out and back")
		k.WriteAt([]byte("KK"), 0)
		saveMatchesFull(t, r, "written after out and back")
		k.Close()
	})
}

func TestNamesAttackTypes(t *testing.T) {
	bothModes(t, func(t *testing.T, noServe bool) {
		r, ws := namesReady(t, dirFiles(5), noServe)
		p := func(s string) string { return filepath.Join(ws, s) }
		os.Remove(p("d/f01.txt"))
		os.Mkdir(p("d/f01.txt"), 0o755)
		writeFile(t, ws, "d/f01.txt/x", "x\n")
		saveMatchesFull(t, r, "file→dir")
		os.RemoveAll(p("d/f01.txt"))
		os.Symlink("f00.txt", p("d/f01.txt"))
		saveMatchesFull(t, r, "dir→symlink")
		os.Remove(p("d/f01.txt"))
		writeFile(t, ws, "d/f01.txt", "back\n")
		saveMatchesFull(t, r, "symlink→file")
		os.Remove(p("d/f02.txt"))
		os.Symlink("f03.txt", p("d/f02.txt"))
		saveMatchesFull(t, r, "file→symlink")
		os.Remove(p("d/f02.txt"))
		os.Symlink("f04.txt", p("d/f02.txt"))
		saveMatchesFull(t, r, "symlink retargeted, same length")
		// swap two files with renameat2(RENAME_EXCHANGE)
		if err := unix.Renameat2(unix.AT_FDCWD, p("d/f03.txt"), unix.AT_FDCWD, p("e/g03.txt"), unix.RENAME_EXCHANGE); err == nil {
			saveMatchesFull(t, r, "exchange across")
		}
		if err := unix.Renameat2(unix.AT_FDCWD, p("d/f03.txt"), unix.AT_FDCWD, p("d/f04.txt"), unix.RENAME_EXCHANGE); err == nil {
			saveMatchesFull(t, r, "exchange within")
		}
		if err := unix.Renameat2(unix.AT_FDCWD, p("d"), unix.AT_FDCWD, p("e"), unix.RENAME_EXCHANGE); err == nil {
			saveMatchesFull(t, r, "exchange dirs")
		}
	})
}

func TestNamesAttackManyNames(t *testing.T) {
	bothModes(t, func(t *testing.T, noServe bool) {
		r, ws := namesReady(t, dirFiles(5), noServe)
		for i := 0; i < 300; i++ {
			writeFile(t, ws, fmt.Sprintf("d/many%03d", i), "m\n")
		}
		saveMatchesFull(t, r, "300 new")
		for i := 0; i < 300; i += 7 {
			writeFile(t, ws, fmt.Sprintf("d/many%03d", i), "M\n")
		}
		saveMatchesFull(t, r, "few after many")
		for i := 0; i < 257; i++ {
			writeFile(t, ws, fmt.Sprintf("d/many%03d", i), "x\n")
		}
		writeFile(t, ws, "d/many299", "late\n")
		saveMatchesFull(t, r, "257 edits then one")
	})
}

func TestNamesAttackWeirdNames(t *testing.T) {
	bothModes(t, func(t *testing.T, noServe bool) {
		names := []string{"a", "a-", "a.b", "a\nb", "a\xff", "\xfe\xfe", "a b", "A", "a\tb", "ä", "a\u0308"}
		files := map[string]string{"top.txt": "t\n"}
		for i, n := range names {
			files["w/"+n] = fmt.Sprint(i, "\n")
		}
		files["w/a.b/inner"] = "i\n"
		delete(files, "w/a.b")
		r, ws := namesReady(t, files, noServe)
		for i, n := range names {
			if n == "a.b" {
				continue
			}
			writeFile(t, ws, "w/"+n, fmt.Sprint("edited ", i, "\n"))
			saveMatchesFull(t, r, fmt.Sprintf("edit %q", n))
		}
	})
}

func TestNamesAttackWritesDuringSave(t *testing.T) {
	bothModes(t, func(t *testing.T, noServe bool) {
		r, ws := namesReady(t, dirFiles(20), noServe)
		ctx := context.Background()
		for round := 0; round < 6; round++ {
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := 0; ; k++ {
					select {
					case <-stop:
						return
					default:
					}
					// same-size rewrites, no other change in the dir
					name := fmt.Sprintf("d/f%02d.txt", k%20)
					os.WriteFile(filepath.Join(ws, name), []byte(fmt.Sprintf("cOntent %02d\n", k%100)), 0o644)
					os.Chmod(filepath.Join(ws, fmt.Sprintf("e/g%02d.txt", k%20)), os.FileMode(0o644|(k%2)*0o111))
				}
			}()
			for s := 0; s < 3; s++ {
				if _, err := r.Save(ctx, SaveOptions{AllowEmpty: true}); err != nil {
					t.Fatal(err)
				}
			}
			close(stop)
			wg.Wait()
			saveMatchesFull(t, r, fmt.Sprint("round ", round, " after writer"))
		}
	})
}

// Two Repo handles saving at once on the same workspace and store.
func TestNamesAttackConcurrentHandles(t *testing.T) {
	bothModes(t, func(t *testing.T, noServe bool) {
		r, ws := namesReady(t, dirFiles(20), noServe)
		ctx := context.Background()
		r2, err := Open(ctx, ws, Options{Store: r.storeDir})
		if err != nil {
			t.Fatal(err)
		}
		defer r2.Close()
		for round := 0; round < 8; round++ {
			for i := 0; i < 5; i++ {
				writeFile(t, ws, fmt.Sprintf("d/f%02d.txt", (round*5+i)%20), fmt.Sprintf("r%02d i%02d\n", round, i))
			}
			var wg sync.WaitGroup
			for _, rr := range []*Repo{r, r2} {
				wg.Add(1)
				go func(rr *Repo) {
					defer wg.Done()
					rr.Save(ctx, SaveOptions{AllowEmpty: true})
				}(rr)
			}
			// an edit while both run
			time.Sleep(time.Duration(round) * time.Millisecond)
			writeFile(t, ws, fmt.Sprintf("d/f%02d.txt", (round*3)%20), fmt.Sprintf("during %02d\n", round))
			wg.Wait()
			saveMatchesFull(t, r, fmt.Sprint("round ", round, " r"))
			writeFile(t, ws, "top.txt", fmt.Sprint(round))
			saveMatchesFull(t, r2, fmt.Sprint("round ", round, " r2"))
		}
	})
}

// A watcher stopped and started again between saves (served: the saving
// Repo is the watcher's own, reopened), edits while it is down and after.
func TestNamesAttackWatcherRestart(t *testing.T) {
	bothModes(t, func(t *testing.T, noServe bool) {
		r, ws := openTest(t, dirFiles(10))
		ctx := context.Background()
		for round := 0; round < 3; round++ {
			wctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- r.Watch(wctx, WatchOptions{NoServe: noServe}) }()
			for i := 0; i < 200; i++ {
				if _, err := r.WatchStatus(ctx); err == nil {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			for s := 0; s < 3; s++ {
				writeFile(t, ws, fmt.Sprintf("d/f%02d.txt", (round+s)%10), fmt.Sprintf("r%d s%d\n", round, s))
				saveMatchesFull(t, r, fmt.Sprint("round ", round, " save ", s))
			}
			cancel()
			<-done
			// edits with no watcher: same size, old mtime kept
			p := filepath.Join(ws, fmt.Sprintf("d/f%02d.txt", (round+5)%10))
			fi, _ := os.Stat(p)
			os.WriteFile(p, []byte(fmt.Sprintf("DOWN %05d\n", round)), 0o644)
			os.Chtimes(p, fi.ModTime(), fi.ModTime())
		}
	})
}

// Hard links made inside the workspace: the daemon loses track, and the
// directories holding them stay read entry by entry.
func TestNamesAttackHardLinksInside(t *testing.T) {
	bothModes(t, func(t *testing.T, noServe bool) {
		r, ws := namesReady(t, dirFiles(10), noServe)
		p := func(s string) string { return filepath.Join(ws, s) }
		if err := os.Link(p("d/f01.txt"), p("e/link")); err != nil {
			t.Fatal(err)
		}
		saveMatchesFull(t, r, "linked")
		f, _ := os.OpenFile(p("e/link"), os.O_WRONLY, 0)
		f.WriteAt([]byte("ZZ"), 0)
		f.Close()
		writeFile(t, ws, "d/f02.txt", "sibling\n")
		saveMatchesFull(t, r, "written through e/link")
		os.Remove(p("e/link"))
		saveMatchesFull(t, r, "link removed")
		// linked, written through and unlinked between two saves
		os.Link(p("d/f03.txt"), p("e/l2"))
		os.WriteFile(p("e/l2"), []byte("content 99\n"), 0o644)
		os.Remove(p("e/l2"))
		writeFile(t, ws, "d/f04.txt", "sibling 2\n")
		saveMatchesFull(t, r, "link, write, unlink")
		// same directory
		os.Link(p("d/f05.txt"), p("d/l3"))
		saveMatchesFull(t, r, "same-dir link")
		os.WriteFile(p("d/l3"), []byte("content 77\n"), 0o644)
		os.Remove(p("d/l3"))
		saveMatchesFull(t, r, "same-dir link written and removed")
	})
}

// An O_TMPFILE file linked in: writes through its first descriptor are
// events of the name "#<inode>" (the unhashed dentry), not of its link.
// With a file of that name present, the daemon sees nothing amiss.

// tmpfileIn opens an unnamed file (O_TMPFILE) in dir and gives it name
// (through /proc/self/fd, which needs no privilege, unlike AT_EMPTY_PATH).
func tmpfileIn(t *testing.T, dir, name string) (fd int, ino uint64) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY, 0o644)
	if err != nil {
		t.Fatalf("O_TMPFILE in %s: %v", dir, err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		t.Fatal(err)
	}
	if _, err := unix.Write(fd, []byte("one\n")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Linkat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", fd), unix.AT_FDCWD, name, unix.AT_SYMLINK_FOLLOW); err != nil {
		t.Fatalf("linking the O_TMPFILE file as %s: %v", name, err)
	}
	return fd, st.Ino
}

// A write through the descriptor of a file made unnamed (O_TMPFILE) and
// linked later is an event of the kernel's name for it, "#<inode>", in
// the directory it was opened in — not of its name. The watcher cannot
// tell which entry changed: it reads everything, also when an entry of
// that name exists (a decoy), and when the file was linked into another
// directory.
func TestNamesAttackTmpfile(t *testing.T) {
	for _, c := range []struct {
		name      string
		openIn    string
		decoy     bool
		linkAfter bool // linked after the watcher started
	}{
		{"same directory", "d", false, false},
		{"same directory, decoy", "d", true, false},
		{"other directory, decoy", "e", true, false},
		{"linked while watched, decoy", "d", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			bothModes(t, func(t *testing.T, noServe bool) {
				r, ws := openTest(t, dirFiles(5))
				var fd int
				var ino uint64
				link := func() {
					fd, ino = tmpfileIn(t, filepath.Join(ws, c.openIn), filepath.Join(ws, "d/tmp.txt"))
				}
				if !c.linkAfter {
					link()
				}
				startWatcherWith(t, r, WatchOptions{NoServe: noServe})
				if c.linkAfter {
					link()
				}
				if c.decoy {
					writeFile(t, ws, fmt.Sprintf("%s/#%d", c.openIn, ino), "decoy\n")
				}
				for i := 0; i < 2; i++ {
					saveMatchesFull(t, r, fmt.Sprint("ready ", i))
				}
				if _, err := unix.Pwrite(fd, []byte("two\n"), 0); err != nil {
					t.Fatal(err)
				}
				saveMatchesFull(t, r, "written through the tmpfile descriptor")
				unix.Pwrite(fd, []byte("333\n"), 0)
				writeFile(t, ws, "d/f00.txt", "sibling\n")
				saveMatchesFull(t, r, "written through it with a sibling edit")
			})
		})
	}
}
