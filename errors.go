package ckpt

import (
	"errors"
	"fmt"
	"strings"

	"github.com/seed1cedbf7c/ckpt/internal/decree"
	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
	"github.com/seed1cedbf7c/ckpt/internal/hint"
	"github.com/seed1cedbf7c/ckpt/internal/restore"
	"github.com/seed1cedbf7c/ckpt/internal/scan"
	"github.com/seed1cedbf7c/ckpt/internal/session"
	"github.com/seed1cedbf7c/ckpt/internal/store"
	"github.com/seed1cedbf7c/ckpt/internal/watch"
)

// Every error ckpt's API returns that callers may test for: the
// sentinels (with errors.Is), then the error types (with errors.As).
// Hint reads the suggestion for the user an error carries. The package's
// internal errors come last.

// Errors callers may test for with [errors.Is] and [errors.As].
var (
	// ErrNotFound: an unknown revision, checkpoint, ref or object.
	ErrNotFound = store.ErrNotFound
	// ErrCorrupt: stored data does not match its hash. Wrapped by
	// [*CorruptError]; the CLI exits with status 3.
	ErrCorrupt = store.ErrCorrupt
	// ErrLocked: another process held the store longer than the lock timeout.
	ErrLocked = store.ErrLocked
	// ErrFull: the store's file system has no space left.
	ErrFull = store.ErrFull
	// ErrNotWritable: the store was opened read-only (another user's, a
	// read-only mount); reading works, changing it fails with this.
	ErrNotWritable = store.ErrNotWritable
	// ErrNothingToUndo / ErrNothingToRedo: the timeline has no step that way.
	ErrNothingToUndo = errors.New("nothing to undo")
	ErrNothingToRedo = errors.New("nothing to redo")
	// ErrIntegrity is wrapped by [*IntegrityError] and [*RunStoppedError].
	ErrIntegrity = restore.ErrIntegrity
)

// ErrNoOpState: [Repo.OpRestore] was given an operation that left no
// workspace state to put back (a tag, a branch deletion: see
// [OpKind.HasState]).
var ErrNoOpState = errors.New("records no workspace state")

// ErrNotGit is returned by git-backend methods on other backends.
var ErrNotGit = errors.New("the workspace does not use the git backend")

// ErrExists: a branch, tag or snapshot of that name already exists.
var ErrExists = store.ErrExists

// ErrNotRegular: a file ckpt was asked to read by a path it did not choose
// is not a regular file (a device such as /dev/zero, a FIFO, a socket, a
// directory), so it is not read.
var ErrNotRegular = fsroot.ErrNotRegular

// ErrNoSession: the workspace has no session yet.
var ErrNoSession = session.ErrNoSession

// ErrInvalidSnapshotName is wrapped by the error [ValidSnapshotName]
// returns for a name that breaks the rules.
var ErrInvalidSnapshotName = errors.New("invalid snapshot name")

// ErrForeignStore is wrapped by the error for a store another user owns.
var ErrForeignStore = errors.New("store owned by another user")

// ErrUnapprovedCommand is wrapped by the error for a command named in a
// store's config.toml that the user did not set on this machine.
var ErrUnapprovedCommand = errors.New("command not approved")

// ErrNoWatcher: no watcher runs for the workspace.
var ErrNoWatcher = watch.ErrNoDaemon

// CorruptError reports a corrupt object in the store; it wraps [ErrCorrupt].
type CorruptError = store.CorruptError

// IntegrityError reports paths that do not hash to what a restore wrote.
// It wraps [ErrIntegrity] and [ErrCorrupt]'s exit status (3) applies.
type IntegrityError struct {
	Op    string
	Paths []string
}

// Error implements error.
func (e *IntegrityError) Error() string {
	const max = 20
	ps := e.Paths
	more := ""
	if len(ps) > max {
		more = fmt.Sprintf(" (and %d more)", len(ps)-max)
		ps = ps[:max]
	}
	return fmt.Sprintf("%s: %d path(s) do not match after writing: %s%s", e.Op, len(e.Paths), strings.Join(ps, ", "), more)
}

// Unwrap returns [ErrIntegrity].
func (e *IntegrityError) Unwrap() error { return ErrIntegrity }

// PathError is a failure to read or write a workspace path.
type PathError = scan.PathError

// AncestorStoreError is FindWorkspace's error for a directory inside a
// workspace that is not the top of a git work tree: ckpt does not act on
// all of that workspace from below it (a restore there would change
// files far from where the command ran).
type AncestorStoreError struct {
	Dir       string // where the command started
	Workspace string // the ancestor ckpt protects
	Store     string // its store
}

// Error implements error.
func (e *AncestorStoreError) Error() string {
	return fmt.Sprintf("%s lies inside %s, whose store %s holds checkpoints, but %s is not the top of a git repository: ckpt does not take it to be the workspace of a directory below it",
		e.Dir, e.Workspace, e.Store, e.Workspace)
}

// Hint says how to go on.
func (e *AncestorStoreError) Hint() string {
	return fmt.Sprintf("to use that store, run ckpt -C %s (the whole of %s); to protect %s on its own, run ckpt --workspace %s",
		e.Workspace, e.Workspace, e.Dir, e.Dir)
}

// NoStoreError is what Open returns with [Options.NoCreate] when the
// workspace has no store yet.
type NoStoreError struct {
	Workspace string
	Store     string // the store directory that does not exist
	Backend   string // the backend Open would have created it with
}

// Error implements error.
func (e *NoStoreError) Error() string {
	return fmt.Sprintf("no checkpoints here yet (%s has no store at %s)", e.Workspace, e.Store)
}

// Hint says how to go on.
func (e *NoStoreError) Hint() string { return "ckpt save records the first checkpoint" }

// ConfigError reports an invalid config.toml.
type ConfigError struct {
	Path string
	Err  error
}

// Error implements error.
func (e *ConfigError) Error() string { return e.Path + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *ConfigError) Unwrap() error { return e.Err }

// Hint says how to repair the file.
func (e *ConfigError) Hint() string {
	return "fix or remove the line in " + e.Path + " (ckpt config --unset KEY removes a setting)"
}

// FsckError is returned when fsck finds problems; it wraps [ErrCorrupt].
type FsckError struct{ Problems []FsckProblem }

// Error implements error.
func (e *FsckError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "store is corrupt: %d problem(s)", len(e.Problems))
	for i, p := range e.Problems {
		if i == 10 {
			fmt.Fprintf(&b, "; ...")
			break
		}
		b.WriteString("; ")
		b.WriteString(p.String())
	}
	return b.String()
}

// Unwrap returns [ErrCorrupt].
func (e *FsckError) Unwrap() error { return ErrCorrupt }

// GitSyncError is a failure to bring the git refs in line with the store.
type GitSyncError struct {
	Prefix     string
	Repository string
	Err        error
}

// Error implements error.
func (e *GitSyncError) Error() string {
	return fmt.Sprintf("git backend: updating the refs under %s in %s: %v", e.Prefix, e.Repository, e.Err)
}

// Unwrap returns the cause.
func (e *GitSyncError) Unwrap() error { return e.Err }

// Hint says what to do next.
func (e *GitSyncError) Hint() string {
	if h := Hint(e.Err); h != "" {
		return h
	}
	return "the checkpoint is safe in the store; fix the problem, then any ckpt command that changes something (ckpt save does, even with nothing to save) updates the refs"
}

// NameError reports an invalid branch, tag or snapshot name.
type NameError struct {
	Kind, Name, Reason string
}

// Error implements error.
func (e *NameError) Error() string {
	return fmt.Sprintf("invalid %s name %q: %s", e.Kind, e.Name, e.Reason)
}

// RevisionError reports a revision that names no checkpoint, or more than one.
// It wraps [ErrNotFound] unless Ambiguous.
type RevisionError struct {
	Rev        string
	Reason     string
	Candidates []string
	Ambiguous  bool
	pruned     bool // a full id gc removed
}

// Error implements error.
func (e *RevisionError) Error() string {
	s := fmt.Sprintf("unknown revision %q: %s", e.Rev, e.Reason)
	if e.Ambiguous {
		s = fmt.Sprintf("ambiguous revision %q: %s", e.Rev, e.Reason)
	}
	if len(e.Candidates) > 0 {
		s += " (" + strings.Join(e.Candidates, ", ") + ")"
	}
	return s
}

// Unwrap returns [ErrNotFound] for unknown revisions.
func (e *RevisionError) Unwrap() error {
	if e.Ambiguous {
		return nil
	}
	return ErrNotFound
}

// Hint suggests how to find a valid revision.
func (e *RevisionError) Hint() string {
	if e.Ambiguous {
		if len(e.Candidates) > 0 && strings.Contains(e.Candidates[0], "/") {
			return "name one of them in full: " + strings.Join(e.Candidates, ", ")
		}
		return "use more hex digits of the id"
	}
	if e.pruned {
		return "gc removed it (retention: `ckpt config keep`, `max_age`, `max_size`); `ckpt list` shows the checkpoints kept"
	}
	return "`ckpt list` shows checkpoints; revisions are ids (any unique prefix of 4+ hex digits), HEAD, HEAD~N, @last (the newest checkpoint), or snapshot, tag and branch names"
}

// RunStoppedError: a run's changes could not be undone — neither its
// changes.diff reversed nor its checkpoint restored — so the workspace is
// not the tree before the run, and processing stopped: no other message
// runs on it. The message is dead-lettered with the reason. It is an
// integrity failure: errors.Is(err, [ErrIntegrity]) holds.
type RunStoppedError = decree.StoppedError

// RunBusyError: a run is being run by another ckpt process.
type RunBusyError = decree.BusyError

// Hint returns the user-facing suggestion attached to err, if any.
func Hint(err error) string { return hint.Of(err) }

// Internal errors.

// errBaseChanged: the workspace changed after a restore's target was
// computed from it (see journalData.Base); nothing was stored or written.
var errBaseChanged = errors.New("the workspace changed while ckpt computed the result")

// unfinishedError is a recovery that could not finish.
type unfinishedError struct {
	op  string
	err error
}

func (e *unfinishedError) Error() string {
	return fmt.Sprintf("cannot finish the interrupted %s: %v", e.op, e.err)
}

func (e *unfinishedError) Unwrap() error { return e.err }

// errNothingToRevert: every affected path already holds its state from
// before the run.
var errNothingToRevert = errors.New("nothing to revert")

// errDryRun rolls back a dry run's transaction.
var errDryRun = errors.New("dry run")

// notFoundError is an error that wraps [ErrNotFound] without repeating it.
type notFoundError struct{ msg string }

func (e *notFoundError) Error() string { return e.msg }

func (e *notFoundError) Unwrap() error { return ErrNotFound }

// existsError is an error that wraps [ErrExists] without repeating it.
type existsError struct{ msg string }

func (e *existsError) Error() string { return e.msg }

func (e *existsError) Unwrap() error { return ErrExists }

// withHint attaches a suggestion for the user to err (read with [Hint]).
func withHint(err error, h string) error { return hint.With(err, h) }

// RemoteError is a remote that is not configured.
type RemoteError struct {
	Name   string
	Reason string
	hint   string
}

func (e *RemoteError) Error() string {
	if e.Name == "" {
		return e.Reason
	}
	return fmt.Sprintf("remote %s: %s", e.Name, e.Reason)
}

// Hint says what to do.
func (e *RemoteError) Hint() string { return e.hint }

// RemoteCorruptError: fsck --remote found problems. It wraps ErrCorrupt.
type RemoteCorruptError struct {
	Remote   string
	Problems []string
	Dropped  []string
}

func (e *RemoteCorruptError) Error() string {
	return fmt.Sprintf("remote %s is damaged: %d problem(s) (listed above)", e.Remote, len(e.Problems))
}
func (e *RemoteCorruptError) Unwrap() error { return ErrCorrupt }

// Hint says what to do.
func (e *RemoteCorruptError) Hint() string {
	if len(e.Dropped) > 0 {
		return "the damaged packs are removed: ckpt push --full from a store that holds these checkpoints uploads them again"
	}
	return "pull and clone never import an object that does not verify; --repair removes the damaged packs, then ckpt push --full from a store that holds these checkpoints uploads them again"
}

// PushRejectedError: some refs were not moved.
type PushRejectedError struct{ Refs []PushedRef }

func (e *PushRejectedError) Error() string {
	var s []string
	for _, r := range e.Refs {
		s = append(s, refLabelOr(r.Name)+" ("+r.Reason+")")
	}
	return "the remote refused " + strings.Join(s, ", ")
}

// Hint says what to do.
func (e *PushRejectedError) Hint() string {
	return "ckpt pull first to see what the remote has, or push with --force to replace it"
}
