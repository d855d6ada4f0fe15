package decree

import (
	"fmt"

	"github.com/seed1cedbf7c/ckpt/internal/restore"
)

// StoppedError: a run's changes could not be undone — neither its
// changes.diff reversed nor its checkpoint restored — so the workspace is
// not the tree before the run, and processing stopped: no other message
// runs on it. The message is dead-lettered with the reason. The root
// package exports it as RunStoppedError.
type StoppedError struct {
	ID string
	// Checkpoint is the run's checkpoint: the state before it.
	Checkpoint string
	// Revert and Restore are why each way failed.
	Revert, Restore error
}

// Error implements error.
func (e *StoppedError) Error() string {
	return fmt.Sprintf("run %s: the workspace could not be put back to the state before the run (revert: %v; restore of checkpoint %s: %v); processing stopped",
		e.ID, e.Revert, shortRev(e.Checkpoint), e.Restore)
}

// Unwrap returns both causes ([restore.ErrIntegrity] is among them when
// either was an integrity failure).
func (e *StoppedError) Unwrap() []error { return []error{e.Revert, e.Restore} }

// Is makes a stopped run an integrity failure ([restore.ErrIntegrity],
// which the root package exports as ErrIntegrity): the workspace is not
// the state the run's records say it must be back to.
func (e *StoppedError) Is(target error) bool { return target == restore.ErrIntegrity }

// Hint says what to do next.
func (e *StoppedError) Hint() string {
	return "nothing is lost: the state before the run is checkpoint " + shortRev(e.Checkpoint) +
		"; fix what blocks it (above) and run `ckpt restore " + shortRev(e.Checkpoint) + "`, then `ckpt process` again"
}

// BusyError: a run is being run by another ckpt process. The root package
// exports it as RunBusyError.
type BusyError struct {
	ID  string
	PID int
}

// Error implements error.
func (e *BusyError) Error() string {
	return fmt.Sprintf("run %s is being run by another ckpt (pid %d)", e.ID, e.PID)
}

func shortRev(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
