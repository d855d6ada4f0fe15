//go:build !unix

package store

import (
	"io/fs"
	"os"
)

// FileDevice reports no device: Windows file info carries none, so the
// workspace's file system is not recorded there.
func FileDevice(fs.FileInfo) (uint64, bool) { return 0, false }

// FileOwner reports no owner: Windows guards files with ACLs, not a uid.
func FileOwner(fs.FileInfo) (int, bool) { return 0, false }

// ownedByMe reports false: there are no group and other mode bits to take
// away on Windows.
func ownedByMe(fs.FileInfo) bool { return false }

// fileID reports no identity: the path identifies the file.
func fileID(fs.FileInfo) (string, bool) { return "", false }

// probeWritable reports whether path can be opened for writing (Windows
// locks are not dropped by closing another handle).
func probeWritable(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	return f.Close()
}
