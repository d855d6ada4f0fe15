package httpserver_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/httpserver"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// ckpt runs the CLI in another process on the fixture's workspace and
// store, and returns when it has exited.
func (f *fixture) ckpt(args ...string) {
	f.t.Helper()
	bin := filepath.Join(filepath.Dir(f.store), "bin", "ckpt")
	if _, err := os.Stat(bin); err != nil {
		testutil.CkptBinary(f.t, filepath.Dir(bin))
	}
	cmd := exec.Command(bin, append([]string{"--store", f.store, "--workspace", f.ws}, args...)...)
	cmd.Env = append(os.Environ(), "CKPT_NO_WATCH=1", "XDG_STATE_HOME="+filepath.Dir(f.store))
	if code, stdout, stderr := testutil.Run(f.t, cmd); code != 0 {
		f.t.Fatalf("ckpt %v: exit %d\n%s%s", args, code, stdout, stderr)
	}
}

// A change made through the server is told once, by the engine's event.
func TestEventsFromServer(t *testing.T) {
	f := newFixture(t, httpserver.Options{})
	f.save("first")
	s := f.events(nil)
	f.ok(request{method: "POST", path: "/api/snapshots", body: httpserver.SnapshotRequest{Name: "s1"}}, 201, nil)
	ev := s.waitFor(ckpt.EventSnapshotCreated, 2*time.Second)
	if ev.data.Name != "s1" || ev.data.Source != "server" || ev.id != strconv.FormatUint(ev.data.ID, 10) {
		t.Errorf("event %+v", ev)
	}
	testutil.WriteFiles(t, f.ws, map[string]string{"a.txt": "edited\n"})
	f.ok(request{method: "POST", path: "/api/restore", body: httpserver.RestoreRequest{Rev: "s1"}}, 0, nil)
	ev = s.waitFor(ckpt.EventRestored, 2*time.Second)
	if ev.data.Source != "server" || len(ev.data.Paths) != 1 {
		t.Errorf("event %+v", ev)
	}
	// Polls that see these changes do not tell them again.
	if ev, ok := s.next(500 * time.Millisecond); ok {
		t.Errorf("one more event: %+v", ev)
	}
}

// Changes made by another ckpt process reach the stream (within 250 ms
// on an idle machine: the test logs each delay).
func TestEventsFromOtherProcess(t *testing.T) {
	f := newFixture(t, httpserver.Options{PollInterval: 150 * time.Millisecond})
	f.save("first")
	s := f.events(nil)
	check := func(kind ckpt.EventKind, ok func(httpserver.StreamEvent) bool, args ...string) {
		t.Helper()
		f.ckpt(args...)
		done := time.Now()
		ev := s.waitFor(kind, 2*time.Second)
		// Measured, not asserted (a loaded machine may be slower): the
		// poll every 150 ms brings it within 250 ms on an idle one.
		t.Logf("ckpt %v: the %s event came %v after it ended", args, kind, time.Since(done))
		if ev.data.Source != "other" || !ok(ev.data) {
			t.Errorf("ckpt %v: %+v", args, ev.data)
		}
	}
	testutil.WriteFiles(t, f.ws, map[string]string{"a.txt": "two\n"})
	check(ckpt.EventCheckpoint, func(e httpserver.StreamEvent) bool { return e.Message == "by the CLI" && e.CheckpointKind == "manual" }, "save", "-m", "by the CLI")
	check(ckpt.EventRestored, func(e httpserver.StreamEvent) bool { return !e.Checkpoint.IsZero() }, "undo")
	check(ckpt.EventSnapshotCreated, func(e httpserver.StreamEvent) bool { return e.Name == "snap" }, "snapshot", "create", "snap")
	check(ckpt.EventTag, func(e httpserver.StreamEvent) bool { return e.Name == "v1" }, "tag", "v1")
	f.ckpt("session", "new")
	check(ckpt.EventTurnBegan, func(e httpserver.StreamEvent) bool { return e.Turn == 1 && e.Message == "do it" && e.Session != "" }, "turn", "begin", "-m", "do it")
	check(ckpt.EventMessage, func(e httpserver.StreamEvent) bool { return e.Turn == 1 }, "turn", "message", "--role", "assistant", "-m", "done")
	check(ckpt.EventTurnEnded, func(e httpserver.StreamEvent) bool { return e.Turn == 1 }, "turn", "end")
	check(ckpt.EventSnapshotDeleted, func(e httpserver.StreamEvent) bool { return e.Name == "snap" }, "snapshot", "delete", "snap")
}

// Last-Event-ID resumes after the last event seen, without loss; an id
// the server no longer holds gets a resync event first.
func TestEventsResume(t *testing.T) {
	f := newFixture(t, httpserver.Options{Ring: 4})
	f.save("first")
	s := f.events(nil)
	f.ok(request{method: "POST", path: "/api/snapshots", body: httpserver.SnapshotRequest{Name: "a"}}, 201, nil)
	last := s.waitFor(ckpt.EventSnapshotCreated, 2*time.Second)
	s.close()
	for _, n := range []string{"b", "c"} {
		f.ok(request{method: "POST", path: "/api/snapshots", body: httpserver.SnapshotRequest{Name: n}}, 201, nil)
	}
	s = f.events(map[string]string{"Last-Event-ID": last.id})
	var names []string
	for len(names) < 2 {
		ev, ok := s.next(2 * time.Second)
		if !ok || ev.data.ID != last.data.ID+1 {
			t.Fatalf("after %d: %+v", last.data.ID, ev)
		}
		if ev.data.Kind == ckpt.EventSnapshotCreated {
			names = append(names, ev.data.Name)
		}
		last = ev
	}
	if names[0] != "b" || names[1] != "c" {
		t.Errorf("resumed with %v, want b c", names)
	}
	s.close()
	// Three more (a checkpoint and a snapshot each): the ring of four has
	// lost the first two of them.
	for _, n := range []string{"d", "e", "f"} {
		testutil.WriteFiles(t, f.ws, map[string]string{"a.txt": n})
		f.ok(request{method: "POST", path: "/api/snapshots", body: httpserver.SnapshotRequest{Name: n}}, 201, nil)
	}
	s = f.events(map[string]string{"Last-Event-ID": last.id})
	if ev, ok := s.next(2 * time.Second); !ok || ev.data.Kind != httpserver.EventResync {
		t.Fatalf("first event %+v, want resync", ev)
	}
	names = nil
	for range 4 {
		ev, _ := s.next(2 * time.Second)
		names = append(names, string(ev.data.Kind)+" "+ev.data.Name)
	}
	if got := strings.Join(names, ", "); got != "checkpoint , snapshot-created e, checkpoint , snapshot-created f" {
		t.Errorf("after the resync: %s", got)
	}
	// An id from another server's stream: resync.
	s2 := f.events(map[string]string{"Last-Event-ID": "999999"})
	if ev, ok := s2.next(2 * time.Second); !ok || ev.data.Kind != httpserver.EventResync {
		t.Errorf("first event %+v, want resync", ev)
	}
	if r := f.do(request{method: "GET", path: "/api/events", header: map[string]string{"Last-Event-ID": "x"}}); r.status != 400 {
		t.Errorf("Last-Event-ID x: %d %s", r.status, r.body)
	}
}

func TestEventsHeartbeat(t *testing.T) {
	f := newFixture(t, httpserver.Options{Heartbeat: 30 * time.Millisecond})
	s := f.events(nil)
	deadline := time.After(2 * time.Second)
	beats := 0
	for beats < 3 {
		select {
		case ev := <-s.events:
			if ev.comment == "heartbeat" {
				beats++
			}
		case <-deadline:
			t.Fatalf("%d heartbeats in 2s", beats)
		}
	}
}

// Closing the server ends the streams.
func TestEventsEndOnClose(t *testing.T) {
	f := newFixture(t, httpserver.Options{})
	s := f.events(nil)
	f.srv.Close()
	deadline := time.After(2 * time.Second)
	for {
		select {
		case _, ok := <-s.events:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("the stream did not end")
		}
	}
}
