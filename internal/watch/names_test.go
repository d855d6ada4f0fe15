//go:build linux

package watch

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	"golang.org/x/sys/unix"
)

// atEvent runs fn once, in the daemon, just before it handles the first
// event naming rel: what fn does happens before the daemon looks.
func atEvent(t *testing.T, rel string, fn func()) {
	t.Helper()
	var once sync.Once
	disarm := failpoint.Set("watch/event("+rel+")", func(string) error {
		once.Do(fn)
		return nil
	})
	t.Cleanup(disarm)
}

func appendFile(t *testing.T, p, s string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// Each rule of trackName: the daemon loses track (the next save reads
// everything) whenever a file with other links may have been written
// through a name in another directory, and only then.
func TestHardLinkRules(t *testing.T) {
	type tc struct {
		name string
		do   func(t *testing.T, root string)
		full string // the reason's text; "" = the daemon vouches
		// unvouched: the answer names this directory apart (the save
		// reads everything unless the rules leave it out).
		unvouched string
		before    func(t *testing.T, root string)
	}
	must := func(t *testing.T, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	p := func(root, rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	// settle waits until the daemon has handled every event so far.
	var settle func(t *testing.T)
	cases := []tc{
		{name: "a link made", full: "hard link c/g was made", do: func(t *testing.T, root string) {
			must(t, os.Link(p(root, "a/b/f.txt"), p(root, "c/g")))
		}},
		{name: "a link moved in from outside", full: "hard link c/g was made", do: func(t *testing.T, root string) {
			out := t.TempDir()
			must(t, os.WriteFile(filepath.Join(out, "x"), []byte("x"), 0o644))
			must(t, os.Link(filepath.Join(out, "x"), filepath.Join(out, "y")))
			must(t, os.Rename(filepath.Join(out, "y"), p(root, "c/g")))
		}},
		{name: "a linked file renamed", full: "hard link c/g was made", before: func(t *testing.T, root string) {
			must(t, os.Link(p(root, "a/b/f.txt"), p(root, "sub/g")))
		}, do: func(t *testing.T, root string) {
			must(t, os.Rename(p(root, "sub/g"), p(root, "c/g")))
		}},
		{name: "plain files created, written, renamed, removed", do: func(t *testing.T, root string) {
			// Each step once the daemon has handled the one before: a
			// name changed again before the daemon looks makes it lose
			// track (the cases below).
			for _, step := range []func(){
				func() { must(t, os.WriteFile(p(root, "c/n"), []byte("n"), 0o644)) },
				func() { appendFile(t, p(root, "c/n"), "more") },
				func() { must(t, os.Rename(p(root, "c/n"), p(root, "sub/n"))) },
				func() { must(t, os.WriteFile(p(root, "c/n"), []byte("again"), 0o644)) },
				func() { must(t, os.Remove(p(root, "sub/n"))) },
				func() { must(t, os.Remove(p(root, "a/b/f.txt"))) },
			} {
				step()
				settle(t)
			}
		}},
		{name: "created and removed before the daemon looked, never written", do: func(t *testing.T, root string) {
			atEvent(t, "c/tmp", func() { os.Remove(p(root, "c/tmp")) })
			f, err := os.OpenFile(p(root, "c/tmp"), os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
			must(t, err)
			must(t, f.Close()) // IN_CLOSE_WRITE: not a write
		}},
		{name: "a link made, written through and removed before the daemon looked", full: "gone before the watcher could look", do: func(t *testing.T, root string) {
			atEvent(t, "c/g", func() {
				appendFile(t, p(root, "c/g"), "through the link")
				os.Remove(p(root, "c/g"))
			})
			must(t, os.Link(p(root, "a/b/f.txt"), p(root, "c/g")))
		}},
		{name: "a link made, written through, replaced by a plain file before the daemon looked", full: "changed again before the watcher could look", do: func(t *testing.T, root string) {
			atEvent(t, "c/g", func() {
				appendFile(t, p(root, "c/g"), "through the link")
				os.Remove(p(root, "c/g"))
				os.WriteFile(p(root, "c/g"), []byte("a plain file"), 0o644)
			})
			must(t, os.Link(p(root, "a/b/f.txt"), p(root, "c/g")))
		}},
		{name: "a link made, written through, renamed over before the daemon looked", full: "replaced before the watcher could look", do: func(t *testing.T, root string) {
			must(t, os.WriteFile(p(root, "c/h"), []byte("a plain file"), 0o644))
			atEvent(t, "c/g", func() {
				appendFile(t, p(root, "c/g"), "through the link")
				os.Rename(p(root, "c/h"), p(root, "c/g"))
			})
			must(t, os.Link(p(root, "a/b/f.txt"), p(root, "c/g")))
		}},
		{name: "a link made and moved on before the daemon looked", full: "hard link sub/g was made", do: func(t *testing.T, root string) {
			atEvent(t, "c/g", func() { os.Rename(p(root, "c/g"), p(root, "sub/g")) })
			must(t, os.Link(p(root, "a/b/f.txt"), p(root, "c/g")))
		}},
		{name: "a link made in a new directory", unvouched: "c/new", do: func(t *testing.T, root string) {
			atEvent(t, "c/new", func() {
				os.Link(p(root, "a/b/f.txt"), p(root, "c/new/g"))
				appendFile(t, p(root, "c/new/g"), "through the link")
				os.Remove(p(root, "c/new/g"))
			})
			must(t, os.Mkdir(p(root, "c/new"), 0o755))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root, sock := setup(t)
			cur := ""
			settle = func(t *testing.T) { cur = query(t, sock, cur).Token }
			if c.before != nil {
				c.before(t, root)
			}
			tok := query(t, sock, "").Token
			if a := query(t, sock, tok); a.Full {
				t.Fatalf("nothing changed: %+v", a)
			} else {
				tok = a.Token
			}
			cur = tok
			c.do(t, root)
			a := query(t, sock, tok)
			switch {
			case c.full == "" && a.Full:
				t.Fatalf("the daemon lost track: %s", a.Reason)
			case c.full != "" && !a.Full:
				t.Fatalf("the daemon vouched (dirty %v); want a full scan for %q", a.Dirty, c.full)
			case c.full != "" && !strings.Contains(a.Reason, c.full):
				t.Fatalf("reason %q, want %q", a.Reason, c.full)
			case c.full == "" && !slices.Equal(a.Unvouched, slices.DeleteFunc([]string{c.unvouched}, func(s string) bool { return s == "" })):
				t.Fatalf("unvouched %q, want %q", a.Unvouched, c.unvouched)
			}
			if a = query(t, sock, a.Token); a.Full || len(a.Dirty) != 0 {
				t.Fatalf("nothing changed since: %+v", a)
			}
		})
	}
}

// A write through a descriptor opened by a hard link whose name was
// removed: an event of the removed name, and a change of the file's
// other links.
func TestWriteThroughRemovedLink(t *testing.T) {
	root, sock := setup(t)
	g := filepath.Join(root, "c", "g")
	a := query(t, sock, "")
	if err := os.Link(filepath.Join(root, "a/b/f.txt"), g); err != nil {
		t.Fatal(err)
	}
	if a = query(t, sock, a.Token); !a.Full {
		t.Fatalf("after ln: %+v", a)
	}
	f, err := os.OpenFile(g, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Remove(g); err != nil {
		t.Fatal(err)
	}
	if a = query(t, sock, a.Token); a.Full {
		t.Fatalf("after rm: %+v", a)
	}
	f.WriteString("through the removed name")
	if a = query(t, sock, a.Token); !a.Full || !strings.Contains(a.Reason, "after its name was removed") {
		t.Fatalf("after a write through the removed name: %+v", a)
	}

	// The same with the removal before the daemon last lost track
	// (which forgets names): the write finds the name gone, and no
	// removal follows.
	h := filepath.Join(root, "c", "h")
	if err := os.Link(filepath.Join(root, "sub/deep/f.txt"), h); err != nil {
		t.Fatal(err)
	}
	f2, err := os.OpenFile(h, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	if err := os.Remove(h); err != nil {
		t.Fatal(err)
	}
	a = query(t, sock, a.Token)
	if err := os.WriteFile(filepath.Join(root, "c", ".ckptignore"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if a = query(t, sock, a.Token); !a.Full || !strings.Contains(a.Reason, ".ckptignore changed") {
		t.Fatalf("after an ignore file changed: %+v", a)
	}
	f2.WriteString("through the removed name")
	if a = query(t, sock, a.Token); !a.Full || !strings.Contains(a.Reason, "while its name was being removed") {
		t.Fatalf("after a write through the name removed earlier: %+v", a)
	}
}

// setupRemovalDuringLook starts a daemon whose first look at c/g falls
// into the window of a removal (see TestLookDuringRemoval) and returns
// the root, the socket and an answer for a save after which nothing
// changed. The stand-in is set before the daemon starts and reset after
// it stopped (cleanups run last first).
func setupRemovalDuringLook(t *testing.T) (root, sock string, a *Answer) {
	t.Helper()
	var once sync.Once
	statx = func(dirfd int, path string, flags, mask int, stx *unix.Statx_t) error {
		err := unix.Statx(dirfd, path, flags, mask, stx)
		if strings.HasSuffix(path, "/c/g") && err == nil {
			once.Do(func() {
				// The name was found; the removal drops the count
				// before the count is read.
				if err := os.Remove(path); err != nil {
					t.Error(err)
				}
				stx.Nlink--
			})
		}
		return err
	}
	t.Cleanup(func() { statx = unix.Statx })
	root, sock = setup(t)
	a = query(t, sock, "")
	if a = query(t, sock, a.Token); a.Full {
		t.Fatalf("nothing changed: %+v", a)
	}
	return root, sock, a
}

// The kernel drops a file's link count before it takes the removed name
// out of the directory cache: a look while `rm c/g` runs finds c/g and,
// in the same statx, a count without c/g. For a link of a/b/f.txt that
// count is 1, as for a plain file. Here the look is made to fall into that
// window (the removal completes within it, as the kernel's does within
// the directory's lock): a link made, written through and removed while
// the daemon looked must still make it lose track.
func TestLookDuringRemoval(t *testing.T) {
	root, sock, a := setupRemovalDuringLook(t)
	g := filepath.Join(root, "c", "g")
	// The write comes after the link's event and before the daemon looks.
	atEvent(t, "c/g", func() { appendFile(t, g, "through the link") })
	if err := os.Link(filepath.Join(root, "a/b/f.txt"), g); err != nil {
		t.Fatal(err)
	}
	if a = query(t, sock, a.Token); !a.Full || !strings.Contains(a.Reason, "removed while the watcher looked") {
		t.Fatalf("a link written through while its removal ran: %+v", a)
	}

	// A plain file created, then written and removed after the daemon
	// looked: no hard link, and the daemon vouches.
	p := filepath.Join(root, "c", "plain")
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	a = query(t, sock, a.Token)
	appendFile(t, p, "more")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if a = query(t, sock, a.Token); a.Full {
		t.Fatalf("a plain file written and removed after the look: %s", a.Reason)
	}
}

// The race above with another copy of the stat cache answered "full"
// between the look and the removal's event (its cookie in the same batch
// of events as the link's, the removal's in the next): that answer must
// not make the daemon forget, for this copy, that the name it looked at
// was going away.
func TestLookDuringRemovalAcrossAFullAnswer(t *testing.T) {
	root, sock, a := setupRemovalDuringLook(t)
	g := filepath.Join(root, "c", "g")

	// Hold the daemon after it read the trigger's event, and queue the
	// link, a write through it and the other copy's cookie meanwhile;
	// then hold the batch after theirs (the removal's event) until the
	// other copy's answer is given.
	held, release, answered := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var reads atomic.Int32
	disarm := failpoint.Set("watch/read", func(string) error {
		switch reads.Add(1) {
		case 1:
			close(held)
			<-release
		case 3:
			<-answered
		}
		return nil
	})
	t.Cleanup(disarm)
	if err := os.WriteFile(filepath.Join(root, "c", "trigger"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	<-held
	if err := os.Link(filepath.Join(root, "a/b/f.txt"), g); err != nil {
		t.Fatal(err)
	}
	appendFile(t, g, "through the link")
	other := make(chan *Answer, 1)
	go func() {
		b, err := Query(context.Background(), sock, "otherepoch:1", 3*time.Second)
		if err != nil {
			t.Error(err)
		}
		close(answered)
		other <- b
	}()
	for deadline := time.Now().Add(5 * time.Second); ; {
		if cookieIn(t, root) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no cookie file appeared")
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	if b := <-other; b == nil || !b.Full {
		t.Fatalf("the other copy: %+v", b)
	}
	if a = query(t, sock, a.Token); !a.Full || !strings.Contains(a.Reason, "removed while the watcher looked") {
		t.Fatalf("a link written through while its removal ran, another copy answered between: %+v", a)
	}
}

// cookieIn reports whether a sync file is in the workspace root.
func cookieIn(t *testing.T, root string) bool {
	t.Helper()
	des, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if strings.HasPrefix(de.Name(), CookiePrefix) {
			return true
		}
	}
	return false
}

// The same race with the kernel's own timing: links made, written
// through and removed at once, the daemon looking while they go. Every
// answer must be "full" (before the fix, about one in a thousand was not).
func TestLinkWrittenAndRemovedAtOnce(t *testing.T) {
	testutil.Long(t, "2000 rounds against the kernel's real timing")
	root, sock := setup(t)
	a := query(t, sock, "")
	for i := range 2000 {
		g := filepath.Join(root, "c", "g"+strconv.Itoa(i))
		if err := os.Link(filepath.Join(root, "a/b/f.txt"), g); err != nil {
			t.Fatal(err)
		}
		appendFile(t, g, "x")
		if err := os.Remove(g); err != nil {
			t.Fatal(err)
		}
		if a = query(t, sock, a.Token); !a.Full {
			t.Fatalf("link %d made, written through and removed: the daemon vouched (dirty %v)", i, a.Dirty)
		}
	}
}

// The kernel names an unnamed (O_TMPFILE) file "#<inode>"; nothing else
// looks like that.
func TestUnnamedName(t *testing.T) {
	for name, want := range map[string]bool{"#1": true, "#1234567890123": true, "#": false, "#a1": false, "#1#": false, "1": false, "#12 ": false, "x#1": false} {
		if unnamedName(name) != want {
			t.Errorf("unnamedName(%q) = %v", name, !want)
		}
	}
}
