//go:build !linux

package scan

import (
	"os"
)

type dirent struct {
	name      string
	isDir     bool
	typeKnown bool
	// isReg, isLink: a regular file, a symlink (when typeKnown).
	isReg, isLink bool
}

func readDirents(fd int, buf []byte) ([]dirent, error) {
	f := os.NewFile(uintptr(fd), "")
	des, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	out := make([]dirent, len(des))
	for i, de := range des {
		out[i] = dirent{name: de.Name(), isDir: de.IsDir(), typeKnown: true,
			isReg: de.Type().IsRegular(), isLink: de.Type()&os.ModeSymlink != 0}
	}
	return out, nil
}
