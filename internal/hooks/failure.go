package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/seed1cedbf7c/ckpt"
)

// A hook that cannot checkpoint must not fail the agent, so it exits 0 —
// and the user, who does not read the agent's hook output, would never
// know that turns go unrecorded. So the last failure is kept in a small
// file in ckpt's state directory (written atomically, 0600) until a later
// hook call that reaches a workspace succeeds; `ckpt hook status` and
// `ckpt status` show it.

// Failure is the last hook call that failed.
type Failure struct {
	Time      time.Time `json:"time"`
	Agent     string    `json:"agent"`
	Event     string    `json:"event,omitempty"`
	Session   string    `json:"session,omitempty"`
	Workspace string    `json:"workspace,omitempty"`
	Error     string    `json:"error"`
	// Next says what to do about it.
	Next string `json:"next"`
	// Log is the hook log, with a line for every call.
	Log string `json:"log,omitempty"`
}

// FailurePath returns the file that holds the last failure:
// hook-failure.json in ckpt's state directory.
func FailurePath() string {
	d, err := ckpt.StateDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "hook-failure.json")
}

// maxFailureFile bounds what LastFailure reads.
const maxFailureFile = 64 << 10

// LastFailure returns the last hook failure recorded in file ("" for
// [FailurePath]), or nil when the last call succeeded.
func LastFailure(file string) (*Failure, error) {
	if file == "" {
		file = FailurePath()
	}
	if file == "" || file == "-" {
		return nil, nil
	}
	f, fi, err := ckpt.OpenRegularFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > maxFailureFile {
		return nil, fmt.Errorf("%s: %d bytes, more than a failure record holds", file, fi.Size())
	}
	data := make([]byte, fi.Size())
	if _, err := f.ReadAt(data, 0); err != nil {
		return nil, err
	}
	var fl Failure
	if err := json.Unmarshal(data, &fl); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	return &fl, nil
}

// recordFailure keeps fl as the last failure.
func recordFailure(file string, fl *Failure) error {
	if file == "" || file == "-" {
		return nil
	}
	data, err := json.MarshalIndent(fl, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	return writeAtomic(file, append(data, '\n'), nil, 0o600)
}

// clearFailure forgets the last failure if it happened before a call that
// began at start succeeded (a failure of a call running meanwhile stays).
func clearFailure(file string, start time.Time) error {
	fl, err := LastFailure(file)
	if fl == nil || err != nil || fl.Time.After(start) {
		return err
	}
	if err := os.Remove(file); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// nextStep says what to do about a failed call.
func nextStep(err error, logPath string) string {
	next := ckpt.Hint(err)
	var pe *ParseError
	switch {
	case errors.Is(err, ckpt.ErrLocked):
		next = "another ckpt held the store, so the event was skipped; if this repeats, raise --lock-timeout in the hook's command"
	case errors.Is(err, ErrTimeout):
		next = "the event took longer than --timeout and was skipped; on a very large workspace, raise --timeout (the installed entries allow 30s)"
	case errors.As(err, &pe):
		next = "the agent sent a payload ckpt cannot read (the log has it): update ckpt, or report it"
	case next == "":
		next = "fix the cause above; turns are not checkpointed until a hook call succeeds"
	}
	if logPath != "" && logPath != "-" {
		next += " (every call is in " + logPath + ")"
	}
	return next
}
