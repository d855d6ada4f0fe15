package flock

import (
	"os"

	"golang.org/x/sys/windows"
)

// Windows locks byte ranges, and a locked range cannot be read by others:
// the lock covers one byte far past any content, so the file itself (a
// holder's pid, say) stays readable.
const lockOffsetHigh = 0x40000000

func lockEx(f *os.File, flags uint32) error {
	ol := windows.Overlapped{OffsetHigh: lockOffsetHigh}
	return windows.LockFileEx(windows.Handle(f.Fd()), flags|windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, &ol)
}

func tryLock(f *os.File) (bool, error) {
	err := lockEx(f, windows.LOCKFILE_FAIL_IMMEDIATELY)
	switch err {
	case nil:
		return true, nil
	case windows.ERROR_LOCK_VIOLATION, windows.ERROR_IO_PENDING:
		return false, nil
	}
	return false, err
}

func lock(f *os.File) error { return lockEx(f, 0) }

func unlock(f *os.File) error {
	ol := windows.Overlapped{OffsetHigh: lockOffsetHigh}
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}
