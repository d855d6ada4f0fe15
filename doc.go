// Package ckpt checkpoints a workspace and restores it: the engine behind
// the ckpt command, its MCP and HTTP servers and its agent hooks, usable as
// a library by any Go program that edits files on someone's behalf.
//
// # Checkpoints
//
// [Open] a workspace (a directory) with its store, then [Repo.Save] records
// a checkpoint: every file and symlink of the workspace that is not ignored
// (git's ignore rules, plus .ckptignore and .decreeignore), as a Merkle tree
// of content-addressed objects. Only files whose metadata changed since the
// last save are read, and unchanged directories are not stored again, so a
// checkpoint costs what the change costs. [Repo.SaveFiles] records just some
// paths, before an edit tool writes them.
//
//	repo, err := ckpt.Open(ctx, "/path/to/project", ckpt.Options{})
//	res, err := repo.Save(ctx, ckpt.SaveOptions{Message: "before the turn"})
//
// # Looking
//
// [Repo.List] and [Repo.Log] list checkpoints, [Repo.Show] describes one,
// [Repo.Diff] compares two states (a checkpoint with another or with the
// working tree) and renders git-style diffs that git apply and patch accept;
// [Repo.Manifest] gives Decree's manifest.json. Checkpoints are named by
// revisions ([Repo.Resolve]): ids or unique prefixes, HEAD, HEAD~N, and
// snapshot, tag and branch names.
//
// # Restoring
//
// [Repo.Restore] makes the workspace, or some paths, equal to a checkpoint.
// It first checkpoints the current state if it differs from HEAD, writes
// only what differs, through [os.Root] (nothing outside the workspace is
// written, no symlink followed out of it), never touches ignored or skipped
// files, and then hash-verifies every path it wrote: a mismatch is an
// [*IntegrityError]. A restore interrupted by a crash is finished by the next
// Open (or [Repo.Recover]). Every save and restore is recorded in an
// operation log, so [Repo.Undo] and [Repo.Redo] step back and forth — a
// restore included. [Repo.OpLog] lists that log and [Repo.OpRestore] puts
// back the state any entry of it left.
//
// # Named snapshots
//
// [Repo.SnapshotCreate] records the whole workspace under a name (the ref
// "snapshots/NAME"), [Repo.SnapshotRestore] puts it back with the verified,
// undoable restore, [Repo.SnapshotDiff] compares it with the working tree,
// and [Repo.Snapshots] and [Repo.SnapshotDelete] list and remove them. A
// snapshot may expire ([SnapshotOptions.TTL], [Config.SnapshotTTL]);
// [Repo.ExpireSnapshots] deletes the expired ones. The sandbox snapshot
// tools' text responses, which the ckpt snapshot commands and the MCP tools
// share, are words of the faces (internal/snaptext), not of this package.
//
// # Agent sessions
//
// A [Session] records a conversation with an agent as turns, each anchored
// to the whole-workspace checkpoints taken when it began and ended, and
// its messages. [Repo.Controller] returns the [Controller] every frontend
// drives a session through: [Controller.BeginTurn], [Controller.EndTurn],
// [Controller.AddMessage], and [Controller.Rewind] (code, conversation or
// both, optionally keeping the user's edits), [Controller.Fork] and
// [Controller.Summarize]. [Repo.Sessions], [Repo.ResolveSession],
// [Repo.NewSession], [Repo.OpenSession] and [Repo.DeleteSession] manage
// them. The feature is implemented in internal/session, on top of this
// package's checkpoints and restores; its types are re-exported here.
//
// # Guarded runs
//
// [Repo.Process] runs the messages of .decree/inbox the way Decree does,
// and [Repo.Run] one command: a checkpoint before the run, the changes of
// every attempt as a diff, retries, and — when every attempt failed — a
// verified revert to that checkpoint and a dead letter. [Repo.Runs],
// [Repo.RunShow] and [Repo.RevertRun] read and undo runs. The flow is
// internal/decree's, over this package's checkpoints; these methods are its
// entry points, and a run that cannot be put back stops processing with a
// [*RunStoppedError].
//
// # Integrity and errors
//
// Every stored object is re-hashed when it is read; corruption is a
// [*CorruptError] (wrapping [ErrCorrupt]) naming the object, returned before
// anything is written to the workspace. [Repo.Fsck] checks a whole store.
// A restore whose written files do not hash to their target is an
// [*IntegrityError] (wrapping [ErrIntegrity]).
//
// Every error to test for is in errors.go. Sentinels, for [errors.Is]:
// [ErrNotFound], [ErrCorrupt], [ErrLocked], [ErrFull], [ErrNotWritable],
// [ErrNothingToUndo], [ErrNothingToRedo], [ErrNoOpState], [ErrIntegrity],
// [ErrNotGit], [ErrExists], [ErrNotRegular], [ErrNoSession],
// [ErrInvalidSnapshotName], [ErrForeignStore], [ErrUnapprovedCommand],
// [ErrNoWatcher]. Types, for
// [errors.As]: [*CorruptError], [*IntegrityError], [*PathError],
// [*AncestorStoreError], [*NoStoreError], [*ConfigError], [*FsckError],
// [*GitSyncError], [*NameError], [*RevisionError], [*RunStoppedError],
// [*RunBusyError], [*RemoteError], [*RemoteCorruptError],
// [*PushRejectedError].
// [Hint] returns a suggestion for the user attached to an error, if any.
//
// # Concurrency
//
// A Repo is safe for concurrent use. Operations that change the store or the
// workspace hold the store's lock, across processes: a second process waits
// (up to [Options.LockTimeout]) instead of failing. Reading never waits.
//
// # Progress and events
//
// The engine never prints. Long operations report through
// [Options.Progress]; what happened is delivered as [Event] values to
// functions registered with [Repo.Subscribe].
//
// # Stores
//
// The default store lives outside the workspace, in [DefaultStoreDir]
// (under $XDG_STATE_HOME/ckpt): one SQLite database in WAL mode plus a stat
// cache. [BackendMemory] keeps everything in memory, for tests and for
// programs that want undo within one process. The formats are documented in
// docs/formats.md, the guarantees in docs/guarantees.md.
package ckpt
