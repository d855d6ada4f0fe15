package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Store files are 0600 and store directories 0700, whatever the umask or
// the parent directory: a store holds every checkpointed file (an .env
// included), so no other local user may read it.

// MkdirPrivate makes dir (and missing parents) with mode 0700; a directory
// it creates is chmod-ed to exactly 0700, whatever the umask. An existing
// one is left to [tighten].
func MkdirPrivate(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	// Create the missing ancestors one by one, so each new one is set.
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || d == filepath.Dir(d) {
			break
		}
		missing = append(missing, d)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		err := os.Mkdir(missing[i], 0o700)
		if errors.Is(err, fs.ErrExist) {
			continue // made meanwhile by another process
		}
		if err != nil {
			return err
		}
		if err := os.Chmod(missing[i], 0o700); err != nil {
			return err
		}
	}
	return nil
}

// tighten takes group and other permissions away from the store directory
// and the files and directories directly in it that this user owns (a
// store made by an older ckpt, or under a lax umask). Failures (a
// read-only mount, another user's store) are ignored: the store still
// works, as it did.
func tighten(dir string) {
	private(dir)
	des, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, de := range des {
		if de.Type().IsRegular() || de.IsDir() {
			private(filepath.Join(dir, de.Name()))
		}
	}
}

// private removes the group and other bits of p when this user owns it.
func private(p string) {
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode().Perm()&0o077 == 0 {
		return
	}
	if !ownedByMe(fi) {
		return
	}
	os.Chmod(p, fi.Mode().Perm()&^0o077)
}
