//go:build unix

package fsroot

import (
	"strings"

	"golang.org/x/sys/unix"
)

// walk opens the directory rel below dirfd one component at a time, each
// with O_NOFOLLOW|O_DIRECTORY, so a symlink on the way fails the walk.
func walk(dirfd int, rel string, flag int) (int, error) {
	cur := dirfd
	parts := strings.Split(rel, "/")
	for i, c := range parts {
		f := pathFlag
		if i == len(parts)-1 {
			f = flag
		}
		next, err := openDirAt(cur, c, f)
		if cur != dirfd {
			unix.Close(cur)
		}
		if err != nil {
			return -1, err
		}
		cur = next
	}
	return cur, nil
}

// openDirAt opens the directory name in dirfd, refusing a symlink.
func openDirAt(dirfd int, name string, flag int) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flag|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, err
		}
		// O_PATH|O_NOFOLLOW opens a symlink itself rather than failing:
		// make sure it is a directory.
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return -1, err
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			unix.Close(fd)
			if st.Mode&unix.S_IFMT == unix.S_IFLNK {
				return -1, unix.ELOOP
			}
			return -1, unix.ENOTDIR
		}
		return fd, nil
	}
}

// renameCheck is a rename that refuses to replace, in two steps where the
// file system has no atomic way.
func renameCheck(oldfd int, oldName string, newfd int, newName string) error {
	var st unix.Stat_t
	if err := unix.Fstatat(newfd, newName, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil {
		return unix.EEXIST
	} else if err != unix.ENOENT {
		return err
	}
	return unix.Renameat(oldfd, oldName, newfd, newName)
}
