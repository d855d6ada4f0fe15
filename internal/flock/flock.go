// Package flock locks a whole open file between processes: flock(2) on
// Unix, LockFileEx on Windows. The system releases the lock when the
// holder's file is closed or the holder dies.
package flock

import "os"

// TryLock takes the exclusive lock on f if no other holder has it. It
// reports false, with a nil error, when someone else holds it.
func TryLock(f *os.File) (bool, error) { return tryLock(f) }

// Lock takes the exclusive lock on f, waiting for the holder to release it.
func Lock(f *os.File) error { return lock(f) }

// Unlock releases the lock on f.
func Unlock(f *os.File) error { return unlock(f) }
