//go:build unix && !linux

package fsroot

import "golang.org/x/sys/unix"

const pathFlag = unix.O_RDONLY

func (r *Root) resolve(rel string, flag int) (int, error) {
	if rel == "" {
		return unix.Openat(r.fd, ".", flag|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
	return walk(r.fd, rel, flag)
}

func renameNoReplace(oldfd int, oldName string, newfd int, newName string) error {
	return renameCheck(oldfd, oldName, newfd, newName)
}

func (r *Root) openDirect(rel string, flag int, perm uint32) (int, bool, error) {
	return -1, false, nil
}
