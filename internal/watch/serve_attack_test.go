//go:build linux

package watch

import (
	"bytes"
	"context"
	"net"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A request line is read whole into memory: a client sending a line
// without end must not make the watcher hold all of it (a 1.5 GB line
// took the watcher to 2.6 GB of memory). It is cut off, and the watcher
// goes on answering.
func TestHugeRequestLineCutOff(t *testing.T) {
	_, sock := setup(t)
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetWriteDeadline(time.Now().Add(time.Minute))
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	sent := 0
	for sent < 4*maxRequestLine && err == nil {
		var n int
		n, err = conn.Write(chunk)
		sent += n
	}
	if err == nil {
		t.Fatalf("the watcher read %d bytes of one request line; it should stop at %d", sent, maxRequestLine)
	}
	if _, err := GetStatus(context.Background(), sock); err != nil {
		t.Fatalf("the watcher no longer answers: %v", err)
	}
}

// Running out of file descriptors (a burst of clients that connect and
// say nothing, or any descriptor leak) made accept fail with EMFILE, and
// Run then hung for good in its deferred wait for the event reader, which
// waits for the context Run cancels only after it: the socket still took
// connections that nobody answered, every save waited 32 s for its served
// request to stall, --stop failed and no new watcher could start, until
// the idle timeout. It must wait and go on accepting once descriptors are
// free.
func TestOutOfDescriptorsKeepsWatching(t *testing.T) {
	_, sock := setup(t)
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	open, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	lim := old
	lim.Cur = uint64(len(open) + 40)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	for len(conns) < 100 {
		c, err := net.Dial("unix", sock)
		if err != nil {
			break
		}
		conns = append(conns, c)
	}
	// Give the watcher time to reach accept with no descriptor left; a
	// status request goes through once they are free again.
	time.Sleep(200 * time.Millisecond)
	for _, c := range conns {
		c.Close()
	}
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	if len(conns) == 100 {
		t.Fatalf("100 connections with a limit of %d descriptors", lim.Cur)
	}
	var last error
	for i := 0; i < 10; i++ {
		if _, last = GetStatus(context.Background(), sock); last == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the watcher stopped once out of descriptors: %v", last)
}

// ckpt watch --stop returns once the watcher replied; a watcher started
// right after may listen on the socket path before the old one's exit
// removes "its" socket: the old one removed the new one's, which then ran
// unreachable until --idle while ckpt watch -d reported "the watcher did
// not answer within 5s" (seen in watch_served_attack.txtar, 1 run in 15).
// A daemon removes the socket file only if it is still its own.
func TestExitKeepsAnotherDaemonsSocket(t *testing.T) {
	root, sock := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	sock2 := sock + "2"
	done := make(chan error, 1)
	go func() { done <- Run(ctx, Options{Root: root, Cache: sock + ".cache", Socket: sock2}) }()
	for i := 0; ; i++ {
		if _, err := GetStatus(ctx, sock2); err == nil {
			break
		} else if i == 200 {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Another daemon took the path (its listener made a new socket file).
	if err := os.Remove(sock2); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", sock2)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cancel()
	<-done
	if _, err := os.Stat(sock2); err != nil {
		t.Fatalf("the daemon that stopped removed the socket another one listens on: %v", err)
	}
}

// Stop returned once the daemon replied, while it still listened: a
// watcher started right after (ckpt watch --stop; ckpt watch -d) found it
// listening and gave up, and ckpt watch -d, answered by the old one just
// before it went, said a watcher runs when none did (or waited 5 s for
// one). Once Stop returns, the daemon takes no connection.
func TestStopReturnsOnceStopped(t *testing.T) {
	for i := 0; i < 20; i++ {
		_, sock := setup(t)
		if err := Stop(context.Background(), sock); err != nil {
			t.Fatal(err)
		}
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			t.Fatalf("try %d: Stop returned while the watcher still took connections", i)
		}
	}
}
