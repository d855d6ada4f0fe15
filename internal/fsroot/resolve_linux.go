package fsroot

import (
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// pathFlag opens directories that are only used as the base of *at calls:
// O_PATH needs no read permission (a directory with mode 0311 can still be
// passed through, as the kernel's own lookup would).
const pathFlag = unix.O_PATH

// noOpenat2 is set once openat2 turned out to be missing (Linux < 5.6, or
// a seccomp filter that refuses it).
var noOpenat2 atomic.Bool

// maxDirect is the longest path given to openat2 in one piece (PATH_MAX is
// 4096 with the NUL).
const maxDirect = 4000

// resolve opens the directory rel ("" for the root) with flag (O_RDONLY or
// pathFlag), following no symlink on the way.
func (r *Root) resolve(rel string, flag int) (int, error) {
	if rel == "" {
		return unix.Openat(r.fd, ".", flag|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
	if !noOpenat2.Load() {
		if len(rel) <= maxDirect {
			fd, err := openat2(r.fd, rel, flag)
			if err != unix.ENOSYS && err != unix.EPERM {
				return fd, err
			}
			noOpenat2.Store(true)
		} else {
			// Too long for one call: the longest prefix that fits, then
			// one component at a time.
			cut := strings.LastIndexByte(rel[:maxDirect], '/')
			if cut > 0 {
				fd, err := openat2(r.fd, rel[:cut], pathFlag)
				if err == nil {
					defer unix.Close(fd)
					return walk(fd, rel[cut+1:], flag)
				}
				if err != unix.ENOSYS && err != unix.EPERM {
					return -1, err
				}
				noOpenat2.Store(true)
			}
		}
	}
	return walk(r.fd, rel, flag)
}

// openDirect opens rel (any type) with flag in one openat2 call when it
// can; ok is false when the caller must resolve the parent itself.
func (r *Root) openDirect(rel string, flag int, perm uint32) (fd int, ok bool, err error) {
	if noOpenat2.Load() || len(rel) > maxDirect {
		return -1, false, nil
	}
	how := &unix.OpenHow{
		Flags:   uint64(flag | unix.O_NOFOLLOW | unix.O_CLOEXEC),
		Mode:    uint64(perm),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	fd, err = openHow(r.fd, rel, how)
	if err == unix.ENOSYS || err == unix.EPERM {
		noOpenat2.Store(true)
		return -1, false, nil
	}
	return fd, true, err
}

func openat2(dirfd int, rel string, flag int) (int, error) {
	return openHow(dirfd, rel, &unix.OpenHow{
		Flags:   uint64(flag | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
}

func openHow(dirfd int, rel string, how *unix.OpenHow) (int, error) {
	for i := 0; ; i++ {
		fd, err := unix.Openat2(dirfd, rel, how)
		// EAGAIN: a rename elsewhere raced the lookup (RESOLVE_BENEATH's
		// safety check); try again.
		if (err == unix.EAGAIN && i < 16) || err == unix.EINTR {
			continue
		}
		return fd, err
	}
}

func renameNoReplace(oldfd int, oldName string, newfd int, newName string) error {
	err := unix.Renameat2(oldfd, oldName, newfd, newName, unix.RENAME_NOREPLACE)
	if err == unix.EINVAL || err == unix.ENOSYS {
		// The file system cannot do it atomically.
		return renameCheck(oldfd, oldName, newfd, newName)
	}
	return err
}
