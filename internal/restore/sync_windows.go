package restore

import (
	"errors"

	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
	"golang.org/x/sys/windows"
)

// canSyncFS is false: flushing a whole volume needs administrator rights
// on Windows, so every restore syncs each staged file instead.
const canSyncFS = false

// syncFS is never reached (canSyncFS is false).
func syncFS(string) {}

// syncDir does nothing: Windows cannot flush a directory opened for
// reading, and NTFS journals the renames that put files in place. The
// files' contents were synced one by one when staged.
func syncDir(*fsroot.Root, string) {}

func isNotEmpty(err error) bool {
	return errors.Is(err, windows.ERROR_DIR_NOT_EMPTY) || errors.Is(err, windows.ERROR_ALREADY_EXISTS)
}

func isCrossDevice(err error) bool { return errors.Is(err, windows.ERROR_NOT_SAME_DEVICE) }
