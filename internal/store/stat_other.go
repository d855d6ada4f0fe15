//go:build !unix

package store

import "io/fs"

// statDev reports no device: Windows file info carries none, so the
// workspace's file system is not recorded there.
func statDev(fs.FileInfo) (uint64, bool) { return 0, false }

// ownedByMe reports false: Windows guards files with ACLs, not mode bits,
// so there are no group and other bits to take away.
func ownedByMe(fs.FileInfo) bool { return false }
