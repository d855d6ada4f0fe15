package watch

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"golang.org/x/sys/unix"
)

// # The inotify limits
//
// Each watched directory takes one inotify watch, and the kernel caps the
// watches of a user (fs.inotify.max_user_watches; since Linux 5.11 also
// per user namespace, user.max_inotify_watches), shared by all of that
// user's processes: editors and other watchers too. A directory whose
// watch fails with ENOSPC joins the unwatched set: every answer names it
// as changed, so every save reads it, and [Unchanged] then never takes it
// or one of its ancestors whole from the cache. Its subdirectories are
// watched if watches are left. As with a directory whose watch is added
// late, what happened in it before is unknown, so the daemon loses track
// once (the next save reads everything). After each save (a new stat
// cache) the daemon tries the unwatched directories again: those it can
// watch now leave the set (losing track once more), those gone are
// forgotten. Only the workspace root must be watched: its cookie files
// are how the daemon syncs with the kernel.
//
// The number of inotify instances is capped too
// (fs.inotify.max_user_instances): a daemon that cannot get one does not
// start, with an error naming the setting.
//
// Hard links: the daemon sees a link made in a watched directory by the
// name it gives (names_linux.go), but no name given in an unwatched one.
// A save reads the unwatched directory, yet not the directory of the
// file's other link, which it may take whole from the cache while a
// write through the new link changed that file. So before each answer
// the daemon looks at the unwatched directories whose stat data changed
// since it last looked (lookUnwatched): a file with other links that was
// not there before makes it lose track (the next save reads everything
// and flags both directories). A link made, written through and removed
// between two saves leaves no file to find, as for a link made from
// outside the workspace; the periodic full scan (MaxTrust) bounds that.

// Where the kernel shows its limits.
const (
	sysctlWatches     = "/proc/sys/fs/inotify/max_user_watches"
	sysctlNSWatches   = "/proc/sys/user/max_inotify_watches"
	sysctlInstances   = "/proc/sys/fs/inotify/max_user_instances"
	sysctlNSInstances = "/proc/sys/user/max_inotify_instances"
)

// addWatch adds the inotify watch of a directory. The failpoint
// watch/add(DIR) makes it fail as at the watch limit (ENOSPC).
func (d *Daemon) addWatch(rel string) (int, error) {
	if failpoint.Enabled() {
		if err := failpoint.Hit("watch/add", rel); err != nil {
			return -1, fmt.Errorf("%w (%v)", unix.ENOSPC, err)
		}
	}
	return unix.InotifyAddWatch(d.fd, d.abs(rel), watchMask)
}

// unwatchAtLimit records a directory that cannot be watched because the
// watch limit is reached, and logs the warning when it is the first.
func (d *Daemon) unwatchAtLimit(rel string) {
	if d.atLimit == nil {
		d.atLimit = map[string]bool{}
	}
	first := len(d.atLimit) == 0
	d.unwatched[rel] = true
	d.atLimit[rel] = true
	if first {
		d.log("warning: %s", limitText("directory "+orDot(rel)+" and perhaps others cannot be watched", readLimits()))
	}
}

// forgetUnwatched takes a directory out of the unwatched set (watched
// now, or gone).
func (d *Daemon) forgetUnwatched(rel string) {
	if !d.unwatched[rel] {
		return
	}
	delete(d.unwatched, rel)
	if d.atLimit[rel] {
		delete(d.atLimit, rel)
		if len(d.atLimit) == 0 {
			d.log("every directory is watched again")
		}
	}
}

// limitWarning is the warning for the user while directories are not
// watched for the watch limit ("" when none is).
func (d *Daemon) limitWarning() string {
	if len(d.atLimit) == 0 {
		return ""
	}
	return limitText(countDirs(len(d.atLimit)), readLimits())
}

// limit is one kernel limit: the sysctl that sets it and its value.
type limit struct {
	name  string // for sysctl(8)
	value int64  // -1: unknown
}

// readLimits returns the watch limit that binds: the per-user one, or
// the user namespace's when that is lower (a container).
func readLimits() limit {
	return lower(limit{"fs.inotify.max_user_watches", readInt(sysctlWatches)},
		limit{"user.max_inotify_watches", readInt(sysctlNSWatches)})
}

func lower(a, b limit) limit {
	if b.value >= 0 && (a.value < 0 || b.value < a.value) {
		return b
	}
	return a
}

func readInt(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// raiseHint says how to raise a limit now and for good.
func raiseHint(l limit, floor int64) string {
	want := max(floor, 2*l.value)
	return fmt.Sprintf("raise it with `sudo sysctl %s=%d` and keep it with the line `%s=%d` in /etc/sysctl.d/60-ckpt-inotify.conf",
		l.name, want, l.name, want)
}

func (l limit) String() string {
	if l.value < 0 {
		return l.name + " = ?"
	}
	return fmt.Sprintf("%s = %d", l.name, l.value)
}

// limitText is the warning at limit l; what says which directories are
// not watched.
func limitText(what string, l limit) string {
	return fmt.Sprintf("the inotify watch limit is reached (%s, shared by all of this user's processes): "+
		"%s, so every save reads them in full; %s (the watcher tries again after each save)",
		l, what, raiseHint(l, 524288))
}

func countDirs(n int) string {
	if n == 1 {
		return "1 directory is not watched"
	}
	return strconv.Itoa(n) + " directories are not watched"
}

// initError explains a failed inotify_init1: EMFILE is the limit of
// inotify instances.
func initError(err error) error {
	if !errors.Is(err, unix.EMFILE) {
		return fmt.Errorf("watch: inotify: %w", err)
	}
	l := lower(limit{"fs.inotify.max_user_instances", readInt(sysctlInstances)},
		limit{"user.max_inotify_instances", readInt(sysctlNSInstances)})
	return fmt.Errorf("watch: no inotify instance: the limit of inotify instances is reached (%s, shared by all of this user's processes); %s, or stop other programs that watch files: %w",
		l, raiseHint(l, 1024), err)
}

// rootError explains why the workspace root cannot be watched.
func rootError(root string, err error) error {
	if !errors.Is(err, unix.ENOSPC) {
		return fmt.Errorf("watch %s: %w", root, err)
	}
	l := readLimits()
	return fmt.Errorf("watch %s: the inotify watch limit is reached (%s, shared by all of this user's processes) before the workspace root could be watched; %s: %w",
		root, l, raiseHint(l, 524288), err)
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// dirLook is what the daemon saw of an unwatched directory: its stat data
// and the files in it with other hard links.
type dirLook struct {
	ino, ctime, mtime int64
	linked            map[uint64]bool // inodes
}

// lookUnwatched looks again at the unwatched directories whose stat data
// changed since the last look: a file with other links in one that was
// not there before makes the daemon lose track. (A directory the daemon
// cannot stat, a path longer than PATH_MAX, is not looked at.)
func (d *Daemon) lookUnwatched() {
	if d.looks == nil {
		d.looks = map[string]dirLook{}
	}
	for rel := range d.looks {
		if !d.unwatched[rel] {
			delete(d.looks, rel)
		}
	}
	var linked []string
	for rel := range d.unwatched {
		var st unix.Stat_t
		if unix.Lstat(d.abs(rel), &st) != nil {
			delete(d.looks, rel)
			continue
		}
		prev, seen := d.looks[rel]
		now := dirLook{ino: int64(st.Ino), ctime: st.Ctim.Nano(), mtime: st.Mtim.Nano()}
		if seen && prev.ino == now.ino && prev.ctime == now.ctime && prev.mtime == now.mtime {
			continue
		}
		if recent := time.Now().Add(-2 * time.Second).UnixNano(); now.ctime > recent || now.mtime > recent {
			// The clock the kernel stamps with is coarse: a change in
			// the same tick would keep this stat data. Look next time.
			now.ctime = -1
		}
		now.linked = linkedFiles(d.abs(rel))
		for ino := range now.linked {
			if !seen || !prev.linked[ino] {
				linked = append(linked, orDot(rel))
				break
			}
		}
		d.looks[rel] = now
	}
	if len(linked) > 0 {
		slices.Sort(linked)
		d.lose("a file with other hard links is in directory " + linked[0] + ", which is not watched")
	}
}

// linkedFiles returns the inodes of the files in dir with other links.
func linkedFiles(dir string) map[uint64]bool {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out map[uint64]bool
	for _, de := range des {
		if de.IsDir() {
			continue
		}
		var st unix.Stat_t
		if unix.Lstat(dir+"/"+de.Name(), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink < 2 {
			continue
		}
		if out == nil {
			out = map[uint64]bool{}
		}
		out[st.Ino] = true
	}
	return out
}
