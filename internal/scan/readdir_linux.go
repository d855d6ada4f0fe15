package scan

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// dirent is one directory entry: its name and, when the file system
// reports it, whether it is a directory (typeKnown false: unknown).
type dirent struct {
	name      string
	isDir     bool
	typeKnown bool
	// isReg, isLink: a regular file, a symlink (when typeKnown).
	isReg, isLink bool
}

// readDirents reads every entry of the open directory fd with getdents64.
// All names of one directory share a single string allocation.
func readDirents(fd int, buf []byte) ([]dirent, error) {
	var arena []byte
	type raw struct {
		off, n int
		typ    uint8
	}
	var raws []raw
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			break
		}
		for p := 0; p < n; {
			reclen := int(*(*uint16)(unsafe.Pointer(&buf[p+16])))
			typ := buf[p+18]
			nameStart := p + 19
			end := nameStart
			for end < p+reclen && buf[end] != 0 {
				end++
			}
			name := buf[nameStart:end]
			p += reclen
			if len(name) == 1 && name[0] == '.' || len(name) == 2 && name[0] == '.' && name[1] == '.' {
				continue
			}
			raws = append(raws, raw{off: len(arena), n: len(name), typ: typ})
			arena = append(arena, name...)
		}
	}
	all := string(arena)
	out := make([]dirent, len(raws))
	for i, r := range raws {
		out[i] = dirent{name: all[r.off : r.off+r.n], isDir: r.typ == unix.DT_DIR, typeKnown: r.typ != unix.DT_UNKNOWN,
			isReg: r.typ == unix.DT_REG, isLink: r.typ == unix.DT_LNK}
	}
	return out, nil
}
