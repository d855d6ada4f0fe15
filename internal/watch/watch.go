// Package watch keeps a file-system watcher for a workspace, so that a save
// reads only the directories that changed (watch mode).
//
// A [Daemon] watches, with inotify, every directory the workspace's stat
// cache holds (the directories a scan descends: never ignored ones, never
// .git) and every directory created since. Each change marks its directory
// dirty with a sequence number. A client asks, over a Unix socket, which
// directories changed since a token — the token the stat cache recorded
// when the scan that wrote it began — and gets them with a new token, or
// "full" when the daemon cannot vouch for the answer: it restarted (the
// token's epoch differs), its event queue overflowed, an ignore file
// changed, or a file with other hard links got a name (see
// names_linux.go). With each changed directory it names the entries an
// event was about, so a save stats only those (see changed_linux.go).
// Directories created or moved since the token are named
// apart (Answer.Unvouched): the save reads everything unless the ignore
// rules leave every one of them out. Before answering, the daemon syncs
// with the kernel: it creates a cookie file in the workspace and waits for
// its event, so every change made before the question is counted.
//
// A client that gets no answer (no daemon, a timeout, any error) scans
// everything, as without a watcher: the watcher only ever saves work.
package watch

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/scan"
)

// CookiePrefix starts the names of the daemon's sync files in the
// workspace root (a scan skips them there).
const CookiePrefix = scan.CookiePrefix

// Answer is the daemon's reply to a query.
type Answer struct {
	// Token identifies this moment; a scan that starts now records it.
	Token string `json:"token"`
	// Full: the daemon cannot say what changed since the given token;
	// scan everything.
	Full bool `json:"full"`
	// Reason says why Full is set.
	Reason string `json:"reason,omitempty"`
	// Dirty are the directories (workspace-relative, "" for the root)
	// whose entries changed since the token.
	Dirty []string `json:"-"`
	// RawDirty carries Dirty on the wire: names are bytes, not always
	// UTF-8, which JSON strings would not keep.
	RawDirty [][]byte `json:"dirty"`
	// Names, for a directory of Dirty it holds, are the only entries of
	// it that may have changed since the token (sorted): an event named
	// each, and the others have the stat data they had then. A directory
	// of Dirty it does not hold may have any entry changed.
	Names map[string][]string `json:"-"`
	// RawNames carries Names on the wire, one list per entry of RawDirty
	// (an empty one: any entry).
	RawNames [][][]byte `json:"names,omitempty"`
	// Unvouched are directories created, moved in or moved away since
	// the token (workspace-relative): what happened in one before the
	// daemon watched it is unknown (a hard link made there, written
	// through and removed again changes a file elsewhere without an
	// event). Dirty names their parents. A save may take directories
	// from the cache only if no save reads any of them (each is, or is
	// below, a directory the ignore rules leave out); otherwise it reads
	// everything (scan.Options.Unvouched).
	Unvouched    []string `json:"-"`
	RawUnvouched [][]byte `json:"unvouched,omitempty"`
	// Warning, when set, is for the user: the inotify watch limit is
	// reached, so some directories are not watched and every save reads
	// them in full (what to do is in the text).
	Warning string `json:"warning,omitempty"`
}

// MaxTrust is how long the daemon vouches for its answers: that long
// after the last full read (or idle check that found nothing unseen, see
// Server.Checked), the next save reads everything.
var MaxTrust = 10 * time.Minute

// Status describes a running daemon.
type Status struct {
	Root    string    `json:"root"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	Epoch   string    `json:"epoch"`
	Seq     uint64    `json:"seq"`
	Watches int       `json:"watches"`
	// LastQuery is when a client last asked (the daemon stops after a
	// while without questions).
	LastQuery time.Time `json:"last_query"`
	Error     string    `json:"error,omitempty"`
	// Unwatched counts the directories that cannot be watched (the
	// inotify watch limit reached, a path too long): every save reads
	// them in full.
	Unwatched int `json:"unwatched"`
	// Remembered counts the directories the watcher keeps as changed or
	// new for the answers still to come (bounded: what no client needs
	// any more is dropped).
	Remembered int `json:"remembered"`
	// LastFull is, for the stat cache of the last answer, when a save
	// last read everything or an idle check last found the tree as that
	// cache has it; its saves read everything again MaxTrust after it (a
	// backstop for what inotify cannot see). LastCheck is when the last
	// idle check ended (zero: none yet), whatever it found.
	LastFull  time.Time `json:"last_full"`
	LastCheck time.Time `json:"last_check,omitzero"`
	// Warning says, for the user, that the inotify watch limit is
	// reached and how to raise it ("" when it is not).
	Warning string `json:"warning,omitempty"`
}

type request struct {
	Op    string `json:"op"` // query, status, stop, serve
	Token string `json:"token,omitempty"`
	// Unvouched: the client reads Answer.Unvouched (a client that does
	// not gets "full" instead).
	Unvouched bool            `json:"unvouched,omitempty"`
	Body      json.RawMessage `json:"body,omitempty"`
}

type response struct {
	Answer *Answer `json:"answer,omitempty"`
	Status *Status `json:"status,omitempty"`
	Error  string  `json:"error,omitempty"`
	// Serve requests: Accepted, then Progress lines (or empty lines
	// while the work runs), then Body.
	Accepted bool            `json:"accepted,omitempty"`
	Progress json.RawMessage `json:"progress,omitempty"`
	Body     json.RawMessage `json:"body,omitempty"`
}

// SocketPath returns where the daemon of a store listens: watch.sock in the
// store directory, or, when that path is too long for a Unix socket, a
// name derived from it in the temporary directory.
func SocketPath(storeDir string) string {
	p := filepath.Join(storeDir, "watch.sock")
	if len(p) < 100 {
		return p
	}
	h := sha256.Sum256([]byte(storeDir))
	return filepath.Join(os.TempDir(), "ckpt-watch-"+hex.EncodeToString(h[:8])+".sock")
}

// ErrNoDaemon: no daemon answers for the store.
var ErrNoDaemon = errors.New("no watcher is running")

func call(ctx context.Context, sock string, req request, timeout time.Duration) (*response, error) {
	d := net.Dialer{Timeout: timeout}
	conn, err := d.DialContext(ctx, "unix", sock)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", ErrNoDaemon, sock)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(timeout))
	b, _ := json.Marshal(req)
	if _, err := conn.Write(append(b, '\n')); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(conn).ReadBytes('\n')
	if err != nil {
		return nil, fmt.Errorf("watcher at %s: %w", sock, err)
	}
	var resp response
	if err := json.Unmarshal(line, &resp); err != nil {
		return nil, fmt.Errorf("watcher at %s: %w", sock, err)
	}
	if resp.Error != "" {
		return nil, errors.New(resp.Error)
	}
	return &resp, nil
}

// Query asks the daemon what changed since token ("" when the stat cache
// has none). Any failure is an error: the caller then scans everything.
func Query(ctx context.Context, sock, token string, timeout time.Duration) (*Answer, error) {
	resp, err := call(ctx, sock, request{Op: "query", Token: token, Unvouched: true}, timeout)
	if err != nil {
		return nil, err
	}
	if resp.Answer == nil {
		return nil, errors.New("watcher: empty answer")
	}
	a := resp.Answer
	a.decode()
	return a, nil
}

// decode fills Dirty, Names and Unvouched from their wire forms. Names
// go with Dirty one list per directory; a daemon from before them sends
// none, and then any entry of a dirty directory may have changed.
func (a *Answer) decode() {
	a.Dirty = make([]string, len(a.RawDirty))
	for i, d := range a.RawDirty {
		a.Dirty[i] = string(d)
	}
	if len(a.RawNames) == len(a.RawDirty) {
		for i, raw := range a.RawNames {
			if len(raw) == 0 {
				continue
			}
			names := make([]string, len(raw))
			for j, n := range raw {
				names[j] = string(n)
			}
			if !slices.IsSorted(names) {
				slices.Sort(names)
			}
			if a.Names == nil {
				a.Names = map[string][]string{}
			}
			a.Names[a.Dirty[i]] = names
		}
	}
	a.RawDirty, a.RawNames = nil, nil
	a.Unvouched = make([]string, len(a.RawUnvouched))
	for i, d := range a.RawUnvouched {
		a.Unvouched[i] = string(d)
	}
	a.RawUnvouched = nil
}

// GetStatus returns a running daemon's status.
func GetStatus(ctx context.Context, sock string) (*Status, error) {
	resp, err := call(ctx, sock, request{Op: "status"}, 2*time.Second)
	if err != nil {
		return nil, err
	}
	if resp.Status == nil {
		return nil, errors.New("watcher: empty status")
	}
	return resp.Status, nil
}

// Stop asks a running daemon to stop.
func Stop(ctx context.Context, sock string) error {
	resp, err := call(ctx, sock, request{Op: "stop"}, 2*time.Second)
	if err != nil {
		return err
	}
	pid := 0
	if resp.Status != nil && resp.Status.PID != os.Getpid() {
		pid = resp.Status.PID
	}
	started := processStart(pid)
	// The daemon replies before it stops: wait until it takes no more
	// connections, so a watcher started next does not find it there.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("unix", sock)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			return fmt.Errorf("the watcher at %s said it stops, but still answers after 10s", sock)
		}
		if err := sleepCtx(ctx, 10*time.Millisecond); err != nil {
			return err
		}
	}
	// Then until its process is gone: once its socket is closed it
	// still writes its stat cache and closes the store, and a caller
	// may remove the store next. (A watcher in this process is done
	// when its Run returns.)
	if started == "" {
		return nil
	}
	deadline = time.Now().Add(time.Minute)
	for processStart(pid) == started {
		if time.Now().After(deadline) {
			return fmt.Errorf("the watcher at %s (pid %d) closed its socket but still runs after a minute; kill it with: kill %d", sock, pid, pid)
		}
		if err := sleepCtx(ctx, 5*time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// Unchanged returns the test a scan uses to take a directory whole from
// the stat cache: a directory is unchanged when neither it nor anything
// below it is dirty.
func Unchanged(dirty []string) func(rel string) bool {
	touched := touchedDirs(dirty)
	return func(rel string) bool { return !touched[rel] }
}

// Changed returns the test a scan uses to stat only the entries of a
// directory it reads that may have changed (scan.Options.Changed): those
// the answer names for a dirty directory, none for a directory read only
// because something below it is dirty, and any (false) for a dirty
// directory the answer names none of, or one it does not know.
func Changed(a *Answer) func(rel string) ([]string, bool) {
	touched := touchedDirs(a.Dirty)
	dirty := make(map[string]bool, len(a.Dirty))
	for _, d := range a.Dirty {
		dirty[d] = true
	}
	return func(rel string) ([]string, bool) {
		switch {
		case dirty[rel]:
			names, ok := a.Names[rel]
			return names, ok
		case touched[rel]:
			return nil, true
		}
		return nil, false
	}
}

// touchedDirs is the set of the dirty directories and their ancestors.
func touchedDirs(dirty []string) map[string]bool {
	touched := map[string]bool{}
	for _, d := range dirty {
		for {
			if touched[d] {
				break
			}
			touched[d] = true
			if d == "" {
				break
			}
			i := strings.LastIndexByte(d, '/')
			if i < 0 {
				d = ""
			} else {
				d = d[:i]
			}
		}
	}
	return touched
}

// parseToken splits "epoch:seq".
func parseToken(t string) (string, uint64, bool) {
	e, s, ok := strings.Cut(t, ":")
	if !ok || e == "" {
		return "", 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return e, n, err == nil
}
