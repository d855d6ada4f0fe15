// Package decree is Decree's guarded-run flow over a checkpoint engine:
// messages from .decree/inbox (or one ad-hoc command) run under
// checkpoint, with retries, a verified revert and dead letters. The files
// it reads and writes — messages, routines, config.yml, run records — and
// running a routine are internal/run's; the checkpoints, diffs and the
// revert itself are the [Engine]'s, which the root package implements.
// The user's guide is docs/runs.md.
//
// # A run's life
//
// [Process] queues every unprocessed specs/*.spec.md as a message, then
// runs the inbox in order of chain and seq (a chain's follow-ups first).
// [Run] runs one command as an ad-hoc message, with the same flow. For
// each message, with R attempts (max_retries):
//
//  1. The run directory .decree/runs/<chain>-<seq> is made, and the
//     message copied to message.md. run.json (the [run.Record]) is written
//     at every step from here on, and names the ckpt running it (owner).
//  2. Checkpoint: the workspace is saved (kind run, meta "run" = the id) —
//     the state before the run — and its manifest.json written. This is
//     what every revert goes back to.
//  3. Attempt N: the routine runs; run.json names it (current) and its
//     process group while it does. Whatever its outcome, the workspace is
//     saved again (kind run) and the changes since the run's checkpoint
//     are written as attempt-N.diff and changes.diff, its log as
//     attempt-N.log.
//  4. Success: the message moves to inbox/done (a spec is marked
//     processed); the run is done.
//  5. Failure of attempts 1 … R-2: the work is kept for the next attempt.
//     Before attempt R (R > 1) the run is undone and failure-context.md
//     written, so the last attempt starts clean and knows what went wrong.
//  6. Failure of attempt R: the run is undone and the message
//     dead-lettered (inbox/dead); the run is dead.
//
// # Undo, and what a stop means
//
// Undoing a run is first [Engine.Revert] — changes.diff reversed over the
// workspace and checked against manifest.json before anything is written
// — and, if that fails, [Engine.RestoreCheckpoint] of the run's
// checkpoint. A revert is journaled by the engine and finishes once
// started: the [Mark] it carries in its journal is what run.json says
// afterwards, written by the revert or by the crash recovery that
// finishes it ([Finish]), before the journal is cleared, so the record
// never lags the workspace.
//
// If both ways fail, the workspace is not the tree before the run: the run
// is recorded dead and unreverted, its message dead-lettered, and
// processing stops with a [*StoppedError] (an integrity failure). No later
// message runs, and Process refuses to start, until the workspace is that
// tree again (the user restored the checkpoint, or [Revert] succeeded).
//
// # Interruptions
//
// Cancelling the context stops the routine's process group; the attempt
// counts as failed, its changes are kept and recorded, and the run is
// interrupted: running it again resumes with the next attempt, against
// the original checkpoint. A run that a ckpt which is gone left running
// (killed, or ended at a second signal after [StopRoutines]) is settled by
// the next ckpt ([Settle], run by the root's Recover, or running the
// message again): what is left of its routine is killed and the attempt
// recorded as interrupted. A run whose ckpt is alive is a [*BusyError].
//
// Messages and run directories are untrusted input (a routine can write
// them): every path and name read from them is validated before use.
package decree
