package watch

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// # Hard links
//
// A write through one hard link of a file is an inotify event only in the
// directory of that link: a save taking another link's directory from the
// cache would keep that file's old content. A scan flags every directory
// holding a regular file with other links (scan.Cache: such a directory is
// always read), so what the daemon must catch is a link made after the scan
// read the other link's directory. Making a link in a watched directory,
// or moving one in, gives a name (IN_CREATE, IN_MOVED_TO; link(2) raises
// IN_ATTRIB only on the file itself, never in its other directories), so
// the daemon looks at every file that gets a name: if it has other links,
// the daemon loses track and the next save reads everything, which flags
// both directories.
//
// The daemon looks when it handles the event, which may be after the name
// changed again: the file may be gone, or another file may hold the name.
// Taking a later file for the one named would miss a link made, written
// through and removed before the daemon looked. So it keeps, per name, what
// the events since it last lost track said and what it saw:
//
//   - a name given whose file is gone when the daemon looks: if the name
//     had no event before, nothing is lost unless the file is written
//     through the name before the name goes (MODIFY, ATTRIB): then the
//     daemon loses track. With earlier events, or a directory found there,
//     it loses track at once.
//   - a name given whose file has other links: lose track.
//   - the next event of a name after it was given (removed, or given again
//     by a rename over it) finds the same file the daemon saw when the name
//     was given: what it saw then was a later file; lose track.
//   - a write through a name whose last event removed it, or, with no event
//     seen, a write through a name that is gone when the daemon looks and
//     whose next event gives it again (or has not come by the next
//     question): a write through a descriptor whose name was removed,
//     which may be a link of any file; lose track.
//
// A look is two reads in the kernel: the name, then the file's link count.
// A removal of the name (unlink, or a rename over it) drops the count
// before it takes the name out of the directory cache, so a look while it
// runs finds the name and a count without it: a link of a file with one
// other link looks like a plain file. The removal holds the directory's
// lock throughout and queues its event before it lets go; so after a look
// that finds a regular file without other links, the daemon takes that
// lock in turn (reading the directory) and notes how far the events
// queued by then reach (settle). If the name's next event is a removal
// within that reach, the look may have seen such a count: the daemon
// takes the look as having found the name gone (first rule), and loses
// track if the name had events before or was written through in between.
//
// Why that is enough: name events in one directory happen, and are queued,
// in one order (the directory's lock), and the daemon handles them in that
// order; each look sees the name as some event at or after the handled one
// left it, never earlier. For one name, take the last event b that gave it
// a file the look did not see. If the look saw the name empty, the first
// rule applies. Otherwise it saw the file of a later event J, whose own
// look saw J's file (b is the last that did not), so the looks of every
// event between b and J saw J's file too, the one right after b included:
// the third rule applies. Either way the daemon loses track, unless b was
// the name's first event and its file was not written through it. Losing
// track covers the earlier misses as well: a file the daemon did not see
// was gone from the name before the look, so whatever was written through
// the name was written before, and the next save reads everything. (That is
// also why forgetting all names then is safe.)
//
// What remains unseen: a write through a descriptor opened by a name that
// was removed and then given to another file (the write is an event of the
// name, like a write to the new file), and links made from outside the
// workspace or from directories no save reads. The scan's flag catches
// those links once a save stats the file: after an event of it, since a
// save stats only the entries of a directory an event named (see
// changed_linux.go), or at the periodic full read.

// # Unnamed files
//
// A file opened with O_TMPFILE has no name; linkat(2) can give it one later,
// in any directory, and the descriptor keeps writing to it. Such writes are
// events of the kernel's name for the unnamed file, "#<inode>", in the
// directory it was opened in — not of the name it was given, and maybe not
// in that name's directory. A write event of a name of that form (which
// an entry of the same name may hold, to mislead a look) makes the daemon
// lose track: the next save reads everything.

// unnamedName reports whether name has the form the kernel gives an
// unnamed (O_TMPFILE) file: '#' and decimal digits.
func unnamedName(name string) bool {
	if len(name) < 2 || name[0] != '#' {
		return false
	}
	for _, c := range name[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// maxNames bounds the names the daemon keeps; beyond it, it loses track.
const maxNames = 1 << 16

type nameKey struct{ dir, name string }

type nameKind uint8

const (
	// nameBound: the last event gave the name a file; id is that file
	// when sampled (an event of the name found it: a write, with no
	// event before, finds it without knowing it is the one given).
	nameBound nameKind = iota
	// nameUnseen: given by its first event, but gone when the daemon
	// looked.
	nameUnseen
	// nameUnbound: the last event removed the name.
	nameUnbound
	// nameAbsentWrite: no event gave or removed it yet, and a write came
	// while it was gone.
	nameAbsentWrite
)

// nameState is what the daemon knows of one name from its events.
type nameState struct {
	kind    nameKind
	sampled bool
	id      fileID
	// until: the look that bound the name found a regular file without
	// other links; a removal of the name queued before this position
	// in the event stream may have been under way during that look (see
	// settle). 0 when not.
	until uint64
	// known: the name had events before that look; written: a write
	// through the name came since.
	known, written bool
}

// fileID identifies a file: its inode and, where the file system records
// it, its birth time (an inode number is reused soon after a file goes).
type fileID struct {
	dev, ino uint64
	btime    int64
}

// lookResult is what a name holds when the daemon looks.
type lookResult struct {
	ok     bool // something holds the name
	dir    bool
	reg    bool // a regular file
	linked bool // a regular file with other hard links
	id     fileID
}

// statx is unix.Statx (a test stands in for the kernel's timing).
var statx = unix.Statx

// look reads what a name (workspace-relative) holds now, without
// following a symbolic link.
func (d *Daemon) look(rel string) lookResult {
	var stx unix.Statx_t
	err := statx(unix.AT_FDCWD, d.abs(rel), unix.AT_SYMLINK_NOFOLLOW,
		unix.STATX_TYPE|unix.STATX_MODE|unix.STATX_INO|unix.STATX_NLINK|unix.STATX_BTIME, &stx)
	if err == unix.ENOSYS || err == unix.EPERM {
		// No statx (an old kernel, a seccomp filter): lstat, no birth time.
		var st unix.Stat_t
		if err := unix.Lstat(d.abs(rel), &st); err != nil {
			return lookResult{}
		}
		mode := st.Mode & unix.S_IFMT
		return lookResult{ok: true, dir: mode == unix.S_IFDIR, reg: mode == unix.S_IFREG, linked: mode == unix.S_IFREG && st.Nlink > 1,
			id: fileID{dev: uint64(st.Dev), ino: st.Ino}}
	}
	if err != nil {
		return lookResult{}
	}
	r := lookResult{ok: true, id: fileID{dev: unix.Mkdev(stx.Dev_major, stx.Dev_minor), ino: stx.Ino}}
	if stx.Mask&unix.STATX_BTIME != 0 {
		r.id.btime = stx.Btime.Sec*1e9 + int64(stx.Btime.Nsec)
	}
	mode := uint32(stx.Mode) & unix.S_IFMT
	r.dir = mode == unix.S_IFDIR
	r.reg = mode == unix.S_IFREG
	r.linked = mode == unix.S_IFREG && stx.Nlink > 1
	return r
}

// settle waits until no removal in dir that was under way is still under
// way, and returns the position in
// the event stream that every event queued by then comes before. On any
// failure it returns the end of the stream: every later removal counts.
//
// Linux's unlink and rename hold the parent directory's lock (i_rwsem)
// from before they drop the link count until after they queue the event;
// reading the directory (getdents) takes that lock shared, so it waits
// for them.
func (d *Daemon) settle(dir string) uint64 {
	fd, err := unix.Open(d.abs(dir), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return ^uint64(0)
	}
	var buf [512]byte
	_, err = unix.Getdents(fd, buf[:])
	unix.Close(fd)
	if err != nil {
		return ^uint64(0)
	}
	n, err := unix.IoctlGetInt(d.fd, unix.TIOCINQ) // FIONREAD
	if err != nil || n < 0 {
		return ^uint64(0)
	}
	return d.readEnd + uint64(n)
}

// trackName applies the rules above to one event of a name that is not a
// directory (d.mu held).
func (d *Daemon) trackName(dir, name string, mask uint32) {
	key := nameKey{dir, name}
	st, known := d.names[key]
	p := join(dir, name)
	// lookRaced: this event removes the name (a removal, or a rename
	// over it), and may have been under way while the daemon looked at
	// the file the name was given (see settle).
	lookRaced := known && st.until != 0 && d.evPos < st.until && (st.known || st.written)
	const racedReason = " was removed while the watcher looked at it: it may have been a hard link"
	switch {
	case mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0:
		now := d.look(p)
		switch {
		case known && st.kind == nameAbsentWrite:
			d.lose(p + " was written after its name was removed (through a descriptor still open): it may be a hard link of any file")
		case known && st.kind == nameBound && st.sampled && now.ok && now.id == st.id:
			d.lose(p + " was replaced before the watcher could look at it")
		case mask&unix.IN_MOVED_TO != 0 && lookRaced:
			d.lose(p + racedReason)
		case !now.ok && !known:
			d.setName(key, nameState{kind: nameUnseen})
		case !now.ok || now.dir:
			d.lose(p + " changed again before the watcher could look at it")
		case now.linked:
			d.lose("a hard link " + p + " was made: a write through another of its links is no event in " + orDot(dir))
		default:
			ns := nameState{kind: nameBound, sampled: true, id: now.id}
			if now.reg {
				ns.until, ns.known = d.settle(dir), known
			}
			d.setName(key, ns)
		}
	case mask&(unix.IN_DELETE|unix.IN_MOVED_FROM) != 0:
		if known && st.kind == nameBound && st.sampled {
			if now := d.look(p); now.ok && now.id == st.id {
				d.lose(p + " changed again before the watcher could look at it")
				return
			}
		}
		if mask&unix.IN_DELETE != 0 && lookRaced {
			d.lose(p + racedReason)
			return
		}
		d.setName(key, nameState{kind: nameUnbound})
	case mask&(unix.IN_MODIFY|unix.IN_ATTRIB) != 0:
		switch {
		case !known:
			if d.look(p).ok {
				d.setName(key, nameState{kind: nameBound})
			} else {
				d.setName(key, nameState{kind: nameAbsentWrite})
			}
		case st.kind == nameUnseen:
			d.lose(p + " was written, but the file it named was gone before the watcher could look at it: it may be a hard link")
		case st.kind == nameUnbound:
			d.lose(p + " was written after its name was removed (through a descriptor still open): it may be a hard link of any file")
		case st.until != 0 && !st.written:
			st.written = true
			d.names[key] = st
		}
	}
}

// setName records a name's state; beyond maxNames names the daemon loses
// track (which forgets them all).
func (d *Daemon) setName(key nameKey, st nameState) {
	if old, ok := d.names[key]; ok && old.kind == nameAbsentWrite {
		d.absentWrites--
	}
	if st.kind == nameAbsentWrite {
		d.absentWrites++
	}
	d.names[key] = st
	if len(d.names) > maxNames {
		d.lose("more than " + strconv.Itoa(maxNames) + " names changed since the last full scan")
	}
}

// forgetNames drops what the daemon knows of names: after it lost track,
// every token's next save reads everything, so a file it did not see
// while the file held a name was written, if at all, before that save
// reads it. A full answer to one token does not forget: another copy of
// the stat cache may still be answered incrementally.
func (d *Daemon) forgetNames() {
	clear(d.names)
	d.absentWrites = 0
}
