package watch

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"
)

// # Work served by the daemon
//
// Besides answering queries, the daemon can do work for a client in its own
// process (a save, with the stat cache and the workspace's state already in
// memory): a "serve" request carries the client's body to the daemon's
// ServeFunc, whose result goes back as it is. While the work runs the
// daemon sends a line at least every KeepAlive (progress, or an empty
// line), so a client can tell a long save from a daemon that hangs.
//
// A ServeFunc must not change the store before Accept has returned nil:
// Accept writes a line to the client, and fails once the client has hung
// up. A client that gives up closes the connection first and only then
// waits for the work to stop (see the root package's served saves), so a
// request it gave up on is never carried out behind its back.

// KeepAlive is the longest the daemon stays silent while serving.
const KeepAlive = time.Second

// StallTimeout is how long a client waits for a line before it gives up.
var StallTimeout = 30 * time.Second

// Server is the daemon as a ServeFunc sees it.
type Server interface {
	// Answer is the answer to a query for token, as a client over the
	// socket would get it (the daemon syncs with the kernel first).
	Answer(ctx context.Context, token string) *Answer
	// WatchDirs watches the directories of a stat cache written in the
	// daemon's process that are not watched yet (as the daemon does for
	// the stat cache file on every query).
	WatchDirs(dirs []string)
	// Trust is since when the stat cache the daemon gave token for is
	// known to hold every change, seen or not: the full answer its
	// lineage of tokens began with (a save then reads everything), or
	// an idle check of it (Checked). An answer for a token whose trust
	// is more than MaxTrust old is "full"; zero for a token the daemon
	// does not know.
	Trust(token string) time.Time
	// Quiet reports whether the daemon has seen nothing happen since it
	// gave token (no event, no other answer, and it did not lose track).
	Quiet(token string) bool
	// Checked reports an idle check: a read of the whole tree, begun at
	// at, compared with the stat cache the daemon gave token for. same:
	// it found the tree as that cache has it, so nothing changed unseen
	// before at, and that cache's trust counts from at.
	Checked(token string, at time.Time, same bool)
}

// Call is one served request.
type Call struct {
	// Peer is the client's process id, from the kernel (SO_PEERCRED).
	Peer int
	// Body is the client's request.
	Body json.RawMessage
	// Progress sends an interim report to the client.
	Progress func(json.RawMessage)
	// Accept tells the client the work starts; it fails if the client has
	// gone. Nothing may be changed before it returns nil.
	Accept func() error
}

// ServeFunc does the work of a "serve" request in the daemon's process.
type ServeFunc func(ctx context.Context, s Server, c *Call) (json.RawMessage, error)

// ServeError is a failed served request. Uncertain: the request may have
// been carried out, or may still be (the connection broke after it was
// sent); the caller must find out before acting on its own.
type ServeError struct {
	Uncertain bool
	Err       error
}

func (e *ServeError) Error() string { return "watcher: " + e.Err.Error() }
func (e *ServeError) Unwrap() error { return e.Err }

// Serve sends body to the daemon's ServeFunc and returns its result;
// progress (may be nil) receives its interim reports. accepted, if not
// nil, is called once the daemon has accepted the work.
func Serve(ctx context.Context, sock string, body json.RawMessage, progress func(json.RawMessage), accepted func()) (json.RawMessage, error) {
	d := net.Dialer{Timeout: 2 * time.Second}
	conn, err := d.DialContext(ctx, "unix", sock)
	if err != nil {
		return nil, &ServeError{Err: fmt.Errorf("%w (%s)", ErrNoDaemon, sock)}
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	b, err := json.Marshal(request{Op: "serve", Body: body})
	if err != nil {
		return nil, &ServeError{Err: err}
	}
	conn.SetWriteDeadline(time.Now().Add(2 * time.Second))
	if _, err := conn.Write(append(b, '\n')); err != nil {
		return nil, &ServeError{Uncertain: true, Err: err}
	}
	conn.SetWriteDeadline(time.Time{})
	br := bufio.NewReaderSize(conn, 64<<10)
	for {
		conn.SetReadDeadline(time.Now().Add(StallTimeout))
		line, err := br.ReadBytes('\n')
		if err != nil {
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			return nil, &ServeError{Uncertain: true, Err: err}
		}
		var resp response
		if err := json.Unmarshal(line, &resp); err != nil {
			return nil, &ServeError{Uncertain: true, Err: fmt.Errorf("bad reply: %w", err)}
		}
		switch {
		case resp.Error != "":
			return nil, &ServeError{Uncertain: true, Err: errors.New(resp.Error)}
		case resp.Accepted:
			if accepted != nil {
				accepted()
			}
		case resp.Progress != nil:
			if progress != nil {
				progress(resp.Progress)
			}
		case resp.Body != nil:
			return resp.Body, nil
		}
	}
}
