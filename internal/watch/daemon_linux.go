package watch

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/scan"
	"golang.org/x/sys/unix"
)

// Supported reports whether this platform has a watcher.
const Supported = true

// watchMask has no IN_EXCL_UNLINK: a write through a descriptor whose name
// was removed is an event too (see trackName).
const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF |
	unix.IN_DONT_FOLLOW | unix.IN_ONLYDIR

// Options configure a [Daemon].
type Options struct {
	// Root is the workspace (absolute, symlinks resolved).
	Root string
	// Cache is the stat cache file whose directories are watched.
	Cache string
	// Socket is where to listen (see SocketPath).
	Socket string
	// Idle stops the daemon after this long without a query (0: 2 hours).
	Idle time.Duration
	// Log, if not nil, receives one line per notable event.
	Log func(string)
	// Serve, if not nil, does the work of "serve" requests (see Serve).
	Serve ServeFunc
}

// Daemon watches one workspace.
type Daemon struct {
	opts    Options
	fd      int
	file    *os.File // fd, read through Go's poller so Close ends a Read
	started time.Time

	mu      sync.Mutex
	epoch   string
	seq     uint64
	fullSeq uint64 // the last seq at which the daemon lost track
	reason  string // why, for the answer
	dirty   map[string]uint64
	// changed: which entries of the dirty directories changed (see
	// changed_linux.go); nameCount counts them, namesFloor is the seq
	// from which they are complete.
	changed    map[string]*dirNames
	nameCount  int
	namesFloor uint64
	// fresh: directories created, moved in or moved away since the
	// daemon last lost track, with the seq of their last such event.
	// What happened in one before its watch was added is unknown, so an
	// answer names them (Answer.Unvouched): a save may take directories
	// from the cache only when no save reads any of them.
	fresh     map[string]freshDir
	wds       map[int32]string // watch descriptor -> directory
	paths     map[string]int32
	infoWD    int32 // .git/info (its exclude file is an ignore file)
	cookies   map[string]chan struct{}
	cacheStat string // identity of the stat cache last loaded
	lastQuery time.Time
	broken    string // set when watching can no longer be trusted at all
	exclude   string // identity of .git/info/exclude when last looked at
	// trust: for each token the daemon gave (its seq), since when the
	// stat cache it was given for is known to hold every change, seen
	// or not: the full answer its lineage of tokens began with, or the
	// start of an idle check that found the tree as that cache has it
	// (Checked). Each answer gives a token of its own, so a token names
	// one cache and its lineage; issued keeps their order, to bound trust.
	trust     map[uint64]time.Time
	issued    []uint64
	lastCheck time.Time // the end of the last idle check (see Checked)
	// names: what the events since the daemon last lost track say of each
	// name that was given, removed or written (see trackName).
	names        map[nameKey]nameState
	absentWrites int // names in state nameAbsentWrite
	// readEnd counts the bytes of events read from the kernel; evPos is
	// where the event being handled starts in that stream (see settle).
	readEnd, evPos uint64
	// unwatched: directories the stat cache holds that cannot be watched
	// (a path longer than PATH_MAX, the inotify watch limit reached):
	// every answer names them as changed, so every save reads them.
	unwatched map[string]bool
	// atLimit: the unwatched directories whose watch failed because the
	// inotify watch limit is reached (see limits_linux.go).
	atLimit map[string]bool
	// looks: what the daemon last saw of each unwatched directory (see
	// lookUnwatched).
	looks map[string]dirLook
	// floor: dirty and fresh no longer hold what is at or before this
	// seq (an answer for a token at floor or later does not need it); an
	// older token is answered "full". lastSince: the token of the last
	// answer that named what changed.
	floor, lastSince uint64
}

// Run watches until ctx is done, a stop request, the workspace goes away,
// or Idle passes without a query. It returns an error if the socket is
// taken (another daemon runs) or inotify is unavailable.
func Run(ctx context.Context, opts Options) error {
	if opts.Idle <= 0 {
		opts.Idle = 2 * time.Hour
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return initError(err)
	}
	d := &Daemon{opts: opts, fd: fd, file: os.NewFile(uintptr(fd), "inotify"), started: time.Now(), dirty: map[string]uint64{}, changed: map[string]*dirNames{}, fresh: map[string]freshDir{}, wds: map[int32]string{},
		paths: map[string]int32{}, infoWD: -1, cookies: map[string]chan struct{}{}, lastQuery: time.Now(), trust: map[uint64]time.Time{},
		names: map[nameKey]nameState{}, unwatched: map[string]bool{}}
	var rb [8]byte
	rand.Read(rb[:])
	d.epoch = hex.EncodeToString(rb[:])
	d.fullSeq = 0

	if c, err := net.Dial("unix", opts.Socket); err == nil {
		c.Close()
		d.file.Close()
		return fmt.Errorf("watch: a watcher already listens on %s", opts.Socket)
	}
	os.Remove(opts.Socket)
	ln, err := net.Listen("unix", opts.Socket)
	if err != nil {
		d.file.Close()
		return fmt.Errorf("watch: listen on %s: %w", opts.Socket, err)
	}
	// The socket file goes when the daemon stops, unless another daemon
	// (started once this one said it stops) made its own there since.
	if ul, ok := ln.(*net.UnixListener); ok {
		ul.SetUnlinkOnClose(false)
	}
	var own unix.Stat_t
	if err := unix.Stat(opts.Socket, &own); err == nil {
		defer func() {
			var now unix.Stat_t
			if unix.Stat(opts.Socket, &now) == nil && now.Dev == own.Dev && now.Ino == own.Ino {
				os.Remove(opts.Socket)
			}
		}()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	d.mu.Lock()
	if err := d.add("", false); err != nil {
		d.mu.Unlock()
		ln.Close()
		d.file.Close()
		return rootError(opts.Root, err)
	}
	d.addInfo()
	d.exclude = excludeIdentity(d.opts.Root)
	d.refreshLocked()
	d.mu.Unlock()

	events := make(chan error, 1)
	go func() { events <- d.readEvents(ctx) }()
	defer func() { <-events }()
	go func() {
		<-ctx.Done()
		ln.Close()
		d.file.Close() // ends the reader's Read
	}()
	go func() {
		t := time.NewTicker(time.Minute)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				d.mu.Lock()
				idle := time.Since(d.lastQuery) > d.opts.Idle
				d.mu.Unlock()
				if idle {
					d.log("idle for %s: stopping", d.opts.Idle)
					cancel()
					return
				}
			}
		}
	}()
	var delay time.Duration
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE) || errors.Is(err, unix.ENOBUFS) || errors.Is(err, unix.ENOMEM) {
				// Out of descriptors or memory for now: wait for
				// connections to end, as net/http does.
				if delay == 0 {
					d.log("accept: %v: waiting", err)
				}
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(delay):
				}
				continue
			}
			// cancel first: the deferred wait for the event reader
			// needs it.
			cancel()
			return fmt.Errorf("watch: accept: %w", err)
		}
		delay = 0
		go d.serve(ctx, conn, cancel)
	}
}

func (d *Daemon) log(format string, a ...any) {
	if d.opts.Log != nil {
		d.opts.Log(fmt.Sprintf(format, a...))
	}
}

func (d *Daemon) abs(rel string) string {
	if rel == "" {
		return d.opts.Root
	}
	return filepath.Join(d.opts.Root, filepath.FromSlash(rel))
}

// add watches one directory; with walk, every directory below it too
// (marking each dirty: they are new). A directory that cannot be watched
// because the inotify watch limit is reached is unwatched, and the walk
// goes on below it: every save reads it, and its subdirectories are
// watched if watches are left.
func (d *Daemon) add(rel string, walk bool) error {
	var err error
	if _, ok := d.paths[rel]; !ok {
		var wd int
		wd, err = d.addWatch(rel)
		if err != nil {
			switch {
			case errors.Is(err, unix.ENOSPC):
				d.unwatchAtLimit(rel)
			case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR):
				// Gone again: the save will see it gone.
				d.forgetUnwatched(rel)
				return err
			default:
				// Present but not watchable (ENAMETOOLONG below PATH_MAX,
				// EACCES): never vouch for it.
				if !d.unwatched[rel] {
					d.log("cannot watch %s (%v): every save reads it", orDot(rel), err)
				}
				d.unwatched[rel] = true
				return err
			}
		} else {
			d.forgetUnwatched(rel)
			d.wds[int32(wd)] = rel
			d.paths[rel] = int32(wd)
		}
	}
	if !walk {
		return err
	}
	d.changeWhole(rel)
	des, rerr := os.ReadDir(d.abs(rel))
	if rerr != nil {
		return err // gone again, or unreadable: the scan will say
	}
	for _, de := range des {
		if !de.IsDir() || de.Name() == ".git" || (rel == "" && strings.HasPrefix(de.Name(), CookiePrefix)) {
			continue
		}
		d.add(join(rel, de.Name()), true)
	}
	return err
}

// addInfo watches .git/info, whose exclude file is an ignore file.
func (d *Daemon) addInfo() {
	wd, err := unix.InotifyAddWatch(d.fd, filepath.Join(d.opts.Root, ".git", "info"), watchMask)
	if err == nil {
		d.infoWD = int32(wd)
	}
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// lose records that the daemon can no longer say what changed before now.
// The next save reads everything, so what the daemon knew of names is no
// longer needed (see trackName).
func (d *Daemon) lose(reason string) {
	d.seq++
	d.fullSeq = d.seq
	d.reason = reason
	d.log("full rescan needed: %s", reason)
	d.forgetNames()
	// Every answer from now on is "full" or for a token past this point.
	clear(d.fresh)
}

// freshDir is an entry of Daemon.fresh: the seq of a directory's last
// event and what it was.
type freshDir struct {
	seq  uint64
	what string
}

// maxDirty is how many directories the daemon keeps in dirty before it
// drops those no answer still to come needs (see prune).
var maxDirty = 1 << 12

// maxFresh bounds the directories the daemon keeps in fresh; beyond it,
// it loses track.
var maxFresh = 1 << 14

// unvouch records that what happened in directory rel before its watch
// was added (created, moved in) or while it moved (moved away) is unknown.
func (d *Daemon) unvouch(rel, what string) {
	d.fresh[rel] = freshDir{d.seq, what}
	if len(d.fresh) > maxFresh {
		// What the last answer's client (the stat cache) no longer
		// needs goes first: a watcher answering saves loses track only
		// for that many directories made between two of them.
		d.prune(d.lastSince)
	}
	if len(d.fresh) > maxFresh {
		d.lose(fmt.Sprintf("more than %d directories were created or moved since the last full scan", maxFresh))
	}
}

// forget drops the watches of a directory and everything below it.
func (d *Daemon) forget(rel string) {
	for p, wd := range d.paths {
		if p == rel || strings.HasPrefix(p, rel+"/") {
			unix.InotifyRmWatch(d.fd, uint32(wd))
			delete(d.paths, p)
			delete(d.wds, wd)
		}
	}
}

// refreshLocked watches the directories of the current stat cache that are
// not watched yet. They may have changed unseen, so they are marked dirty.
func (d *Daemon) refreshLocked() {
	fi, err := os.Stat(d.opts.Cache)
	if err != nil {
		return
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	id := fmt.Sprint(fi.ModTime().UnixNano(), fi.Size())
	if st != nil {
		id += fmt.Sprint(" ", st.Ino)
	}
	if id == d.cacheStat {
		return
	}
	c, err := scan.LoadCache(d.opts.Cache)
	if err != nil || c == nil {
		return
	}
	defer c.Close()
	d.cacheStat = id
	d.watchListed(c.DirList())
}

// watchListed watches the listed directories that are not watched yet,
// and retries the unwatched ones. They may have changed unseen, so the
// next answer is "full".
func (d *Daemon) watchListed(dirs []string) {
	var added, limited []string
	tried := map[string]bool{}
	try := func(rel string) {
		was := d.unwatched[rel]
		err := d.add(rel, false)
		if d.unwatched[rel] {
			tried[rel] = true
		}
		switch {
		case err == nil:
			added = append(added, orDot(rel))
		case !was && d.atLimit[rel]:
			limited = append(limited, orDot(rel))
		}
	}
	for _, rel := range dirs {
		if _, ok := d.paths[rel]; !ok {
			try(rel)
		}
	}
	// The others unwatched (created since the cache was written): watch
	// them if watches were freed, forget them if they are gone.
	for _, rel := range sortedKeys(d.unwatched) {
		if !tried[rel] {
			try(rel)
		}
	}
	// Not watched either: the same holds for them, and from now on every
	// save reads them.
	switch len(limited) {
	case 0:
	case 1:
		d.lose("directory " + limited[0] + " cannot be watched (the inotify watch limit is reached)")
	default:
		d.lose(fmt.Sprintf("%d directories cannot be watched (the inotify watch limit is reached; %s, ...)", len(limited), limited[0]))
	}
	// What happened in them before their watches were added is unknown
	// (a hard link made, written through and removed again). One line
	// for all of them: a first checkpoint adds thousands at once.
	switch len(added) {
	case 0:
	case 1:
		d.lose("directory " + added[0] + " was not watched")
	default:
		d.lose(fmt.Sprintf("%d directories were not watched (%s, ...)", len(added), added[0]))
	}
}

func orDot(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}

func (d *Daemon) readEvents(ctx context.Context) error {
	buf := make([]byte, 64<<10)
	for {
		n, err := d.file.Read(buf)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, os.ErrClosed) {
				return nil
			}
			d.mu.Lock()
			d.lose("reading events failed: " + err.Error())
			d.broken = d.reason
			d.mu.Unlock()
			return err
		}
		if failpoint.Enabled() {
			failpoint.Hit("watch/read", "")
		}
		d.mu.Lock()
		base := d.readEnd
		d.readEnd += uint64(n)
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			d.evPos = base + uint64(off)
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			end := off + unix.SizeofInotifyEvent + int(ev.Len)
			if end > n {
				break // cannot happen: the kernel returns whole events
			}
			name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:end]), "\x00")
			d.handle(ev.Wd, ev.Mask, name)
			off = end
		}
		d.mu.Unlock()
	}
}

// handle processes one event (d.mu held).
func (d *Daemon) handle(wd int32, mask uint32, name string) {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		d.lose("the kernel's event queue overflowed")
		return
	}
	if wd == d.infoWD {
		if name == "exclude" {
			d.lose(".git/info/exclude changed")
		}
		return
	}
	rel, ok := d.wds[wd]
	if !ok {
		return
	}
	if mask&unix.IN_IGNORED != 0 {
		delete(d.wds, wd)
		if d.paths[rel] == wd {
			delete(d.paths, rel)
		}
		return
	}
	if rel == "" && strings.HasPrefix(name, CookiePrefix) {
		if mask&unix.IN_CREATE != 0 {
			if ch, ok := d.cookies[name]; ok {
				close(ch)
				delete(d.cookies, name)
			}
		}
		return
	}
	if mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0 {
		if rel == "" {
			d.lose("the workspace directory was moved or deleted")
			d.broken = d.reason
		} else if mask&unix.IN_MOVE_SELF != 0 {
			d.seq++
			d.unvouch(rel, "moved")
			d.forget(rel)
		}
		return
	}
	if failpoint.Enabled() {
		failpoint.Hit("watch/event", join(rel, name))
	}
	if name == "" {
		d.changeWhole(rel) // about the directory itself
	} else {
		d.changeName(rel, name)
	}
	if mask&unix.IN_ISDIR == 0 && mask&(unix.IN_MODIFY|unix.IN_ATTRIB|unix.IN_CLOSE_WRITE) != 0 && unnamedName(name) {
		d.lose(join(rel, name) + " was written: the name of an unnamed (O_TMPFILE) file, which may have been linked under any name")
	}
	switch name {
	case ".gitignore", ".ckptignore", ".decreeignore":
		d.lose(join(rel, name) + " changed")
	}
	if mask&unix.IN_ISDIR == 0 {
		d.trackName(rel, name, mask)
		return
	}
	if name == ".git" || (rel == "" && strings.HasPrefix(name, CookiePrefix)) {
		return
	}
	child := join(rel, name)
	switch {
	case mask&unix.IN_CREATE != 0:
		// Until its watch is added, nothing done in the new directory is
		// an event: a hard link made in it, written through and removed
		// again would change a file elsewhere unseen. Unless no save
		// reads the directory (an ignored one: a link from there is not
		// seen anyway), the next save reads everything.
		d.unvouch(child, "created")
		// A watch still registered under the name is the replaced
		// directory's (kept alive by an open descriptor): drop it.
		d.forget(child)
		d.add(child, true)
	case mask&unix.IN_MOVED_TO != 0:
		d.unvouch(child, "moved in")
		d.forget(child)
		d.add(child, true)
	case mask&unix.IN_MOVED_FROM != 0:
		d.unvouch(child, "moved away")
		d.forget(child)
	case mask&unix.IN_DELETE != 0:
		d.forget(child)
	}
}

// sync waits until every event queued before it has been handled: it
// creates a cookie file in the root and waits for its event.
func (d *Daemon) sync(ctx context.Context) error {
	var rb [8]byte
	rand.Read(rb[:])
	name := CookiePrefix + hex.EncodeToString(rb[:])
	ch := make(chan struct{})
	d.mu.Lock()
	d.cookies[name] = ch
	d.mu.Unlock()
	p := filepath.Join(d.opts.Root, name)
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		d.mu.Lock()
		delete(d.cookies, name)
		d.mu.Unlock()
		return fmt.Errorf("sync: %w", err)
	}
	f.Close()
	defer os.Remove(p)
	select {
	case <-ch:
		return nil
	case <-time.After(2 * time.Second):
		d.mu.Lock()
		delete(d.cookies, name)
		d.mu.Unlock()
		return errors.New("sync: no event for the cookie file")
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (d *Daemon) answer(ctx context.Context, token string, vouch bool) *Answer {
	if err := d.sync(ctx); err != nil {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.lose(err.Error())
		return &Answer{Token: d.issue(time.Now()), Full: true, Reason: err.Error()}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.lastQuery = time.Now()
	// .git/info/exclude is an ignore file in a directory that may not be
	// watched (created later, or a worktree's git dir elsewhere): compare
	// it by its stat data on every question.
	if id := excludeIdentity(d.opts.Root); id != d.exclude {
		d.exclude = id
		d.lose(".git/info/exclude changed")
	}
	d.refreshLocked()
	d.lookUnwatched()
	if d.absentWrites > 0 {
		// Written while its name was going away, and the removal is not
		// an event yet: the write may have gone through a removed name.
		d.lose("a file was written while its name was being removed")
	}
	a := &Answer{}
	epoch, since, ok := parseToken(token)
	trusted, known := time.Time{}, false
	if ok && epoch == d.epoch {
		trusted, known = d.trust[since]
	}
	defer func() {
		if a.Full {
			// The save reads everything: its cache will hold every
			// change made before now. What the daemon knows of names
			// stays: another copy of the stat cache, answered from its
			// own token, may still need it (only lose forgets).
			a.Token = d.issue(time.Now())
		} else {
			a.Token = d.issue(trusted)
		}
	}()
	switch {
	case d.broken != "":
		a.Full, a.Reason = true, d.broken
	case !ok:
		a.Full, a.Reason = true, "the stat cache has no watcher token"
	case epoch != d.epoch:
		a.Full, a.Reason = true, "the watcher started after the stat cache was written"
	case since < d.fullSeq:
		a.Full, a.Reason = true, d.reason
	case since < d.floor:
		a.Full, a.Reason = true, "the stat cache is older than one the watcher answered for since"
	case !known:
		a.Full, a.Reason = true, "the watcher no longer knows when the stat cache was last read in full"
	case time.Since(trusted) > MaxTrust:
		// A backstop for what inotify cannot see (a hard link made
		// elsewhere, writes through mmap): now and then, read everything.
		a.Full, a.Reason = true, "periodic full scan"
	default:
		for dir, seq := range d.dirty {
			if seq > since && !d.unwatched[dir] {
				a.RawDirty = append(a.RawDirty, []byte(dir))
				names, ok := d.changedNames(dir, since)
				raw := make([][]byte, len(names)) // none: any entry
				for i, n := range names {
					raw[i] = []byte(n)
				}
				if !ok {
					raw = [][]byte{}
				}
				a.RawNames = append(a.RawNames, raw)
			}
		}
		for dir := range d.unwatched {
			a.RawDirty = append(a.RawDirty, []byte(dir))
			a.RawNames = append(a.RawNames, [][]byte{})
		}
		for dir, f := range d.fresh {
			if f.seq > since {
				a.RawUnvouched = append(a.RawUnvouched, []byte(dir))
			}
		}
		d.lastSince = since
		if len(d.dirty) > maxDirty {
			// What is at or before since is in no answer for a token
			// this client holds, now or after its save.
			d.prune(since)
		}
		if len(a.RawUnvouched) > 0 && !vouch {
			// A client from before Unvouched would take directories from
			// the cache regardless.
			dir := string(a.RawUnvouched[0])
			a.Full, a.Reason = true, "directory "+dir+" was "+d.fresh[dir].what
			a.RawDirty, a.RawNames, a.RawUnvouched = nil, nil, nil
		}
	}
	a.Warning = d.limitWarning()
	return a
}

// prune forgets the dirty and fresh entries no answer for a token at
// since or later needs; from then on an older token is answered "full".
func (d *Daemon) prune(since uint64) {
	if since <= d.floor || since > d.seq {
		return
	}
	d.floor = since
	for dir, seq := range d.dirty {
		if seq <= since {
			delete(d.dirty, dir)
		}
	}
	d.pruneNames(since)
	for dir, f := range d.fresh {
		if f.seq <= since {
			delete(d.fresh, dir)
		}
	}
}

// Answer implements Server.
func (d *Daemon) Answer(ctx context.Context, token string) *Answer {
	a := d.answer(ctx, token, true)
	a.decode()
	return a
}

// maxIssued bounds the tokens whose trust the daemon keeps; an older one
// is answered "full".
const maxIssued = 4096

// issue gives a new token, for a stat cache known to hold every change
// made before trusted (d.mu held).
func (d *Daemon) issue(trusted time.Time) string {
	d.seq++
	d.trust[d.seq] = trusted
	d.issued = append(d.issued, d.seq)
	if len(d.issued) > maxIssued {
		delete(d.trust, d.issued[0])
		d.issued = slices.Delete(d.issued, 0, 1)
	}
	return d.token()
}

// Trust implements Server.
func (d *Daemon) Trust(token string) time.Time {
	epoch, seq, ok := parseToken(token)
	d.mu.Lock()
	defer d.mu.Unlock()
	if !ok || epoch != d.epoch {
		return time.Time{}
	}
	return d.trust[seq]
}

// lastTrust is the trust of the last token given (d.mu held).
func (d *Daemon) lastTrust() time.Time {
	if len(d.issued) == 0 {
		return time.Time{}
	}
	return d.trust[d.issued[len(d.issued)-1]]
}

// Quiet implements Server.
func (d *Daemon) Quiet(token string) bool {
	epoch, since, ok := parseToken(token)
	d.mu.Lock()
	defer d.mu.Unlock()
	return ok && epoch == d.epoch && since == d.seq && d.broken == ""
}

// Checked implements Server.
func (d *Daemon) Checked(token string, at time.Time, same bool) {
	epoch, seq, ok := parseToken(token)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.lastCheck = time.Now()
	trusted, known := d.trust[seq]
	if same && ok && epoch == d.epoch && known && at.After(trusted) {
		d.trust[seq] = at
		d.log("idle check (%v): the tree is as the stat cache has it", time.Since(at).Round(time.Millisecond))
	} else if !same {
		d.log("idle check (%v): the tree differs from the stat cache (changed since, or unseen)", time.Since(at).Round(time.Millisecond))
	}
}

// WatchDirs implements Server.
func (d *Daemon) WatchDirs(dirs []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.watchListed(dirs)
}

// serveCall runs a "serve" request: Accepted, keep-alive and progress
// lines, then the result (see Serve).
func (d *Daemon) serveCall(ctx context.Context, conn net.Conn, body json.RawMessage) {
	conn.SetDeadline(time.Time{})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wmu sync.Mutex
	send := func(r response) error {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		wmu.Lock()
		defer wmu.Unlock()
		conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if _, err := conn.Write(append(b, '\n')); err != nil {
			cancel() // the client is gone: stop the work
			return err
		}
		return nil
	}
	if d.opts.Serve == nil {
		send(response{Error: "watch: this watcher serves no requests"})
		return
	}
	// The client sends nothing more: a read returns when it hangs up.
	go func() {
		var b [1]byte
		conn.Read(b[:])
		cancel()
	}()
	done := make(chan struct{})
	defer close(done)
	go func() {
		t := time.NewTicker(KeepAlive)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				send(response{})
			}
		}
	}()
	d.mu.Lock()
	d.lastQuery = time.Now()
	d.mu.Unlock()
	call := &Call{Peer: peerPID(conn), Body: body,
		Progress: func(p json.RawMessage) { send(response{Progress: p}) },
		Accept:   func() error { return send(response{Accepted: true}) }}
	out, err := d.opts.Serve(ctx, d, call)
	if err != nil {
		send(response{Error: err.Error()})
		return
	}
	send(response{Body: out})
}

// peerPID is the process id of a Unix socket's other end (0: unknown).
func peerPID(conn net.Conn) int {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return 0
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0
	}
	pid := 0
	raw.Control(func(fd uintptr) {
		if cred, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED); err == nil {
			pid = int(cred.Pid)
		}
	})
	return pid
}

func (d *Daemon) token() string { return fmt.Sprintf("%s:%d", d.epoch, d.seq) }

func (d *Daemon) status() *Status {
	d.mu.Lock()
	defer d.mu.Unlock()
	return &Status{Root: d.opts.Root, PID: os.Getpid(), Started: d.started, Epoch: d.epoch, Seq: d.seq,
		Watches: len(d.wds), LastQuery: d.lastQuery, Error: d.broken,
		Unwatched: len(d.unwatched), Remembered: len(d.dirty) + len(d.fresh), Warning: d.limitWarning(),
		LastFull: d.lastTrust(), LastCheck: d.lastCheck}
}

// maxRequestLine bounds a request (a served save's carries its message
// and metadata).
const maxRequestLine = 16 << 20

func (d *Daemon) serve(ctx context.Context, conn net.Conn, stop func()) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	// A request is one line, never longer than maxRequestLine: a client
	// sending more is cut off (its line would be held whole in memory).
	line, err := bufio.NewReader(io.LimitReader(conn, maxRequestLine+1)).ReadBytes('\n')
	if len(line) > maxRequestLine {
		b, _ := json.Marshal(response{Error: fmt.Sprintf("watch: request longer than %d bytes", maxRequestLine)})
		conn.Write(append(b, '\n'))
		return
	}
	if err != nil {
		return
	}
	var req request
	var resp response
	if err := json.Unmarshal(line, &req); err != nil {
		resp.Error = "watch: bad request: " + err.Error()
	} else {
		switch req.Op {
		case "query":
			resp.Answer = d.answer(ctx, req.Token, req.Unvouched)
		case "status":
			resp.Status = d.status()
		case "stop":
			resp.Status = d.status()
			defer stop()
		case "serve":
			d.serveCall(ctx, conn, req.Body)
			return
		default:
			resp.Error = "watch: unknown request " + req.Op
		}
	}
	b, _ := json.Marshal(resp)
	conn.Write(append(b, '\n'))
}

// excludeIdentity is the stat data of the workspace's .git/info/exclude
// (following a worktree's .git file), or "" when there is none.
func excludeIdentity(root string) string {
	p := scan.InfoExcludePath(root)
	if p == "" {
		return ""
	}
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return ""
	}
	return fmt.Sprint(p, st.Ino, st.Size, st.Mtim.Nano(), st.Ctim.Nano())
}

// processStart identifies a running process: its start time from
// /proc/PID/stat, or "" when pid is 0, the process is gone or is a
// zombie (it has closed its files; only its exit status is left).
func processStart(pid int) string {
	if pid <= 0 {
		return ""
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses,
	// so fields count from the last ')'. Start time is field 22.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return ""
	}
	return f[19]
}
