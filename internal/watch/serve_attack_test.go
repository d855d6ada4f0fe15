//go:build linux

package watch

import (
	"bytes"
	"context"
	"net"
	"testing"
	"time"
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
