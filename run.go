package ckpt

import (
	"context"

	"github.com/seed1cedbf7c/ckpt/internal/decree"
	"github.com/seed1cedbf7c/ckpt/internal/run"
)

// Decree's guarded runs: the flow (inbox, attempts, revert, dead letters)
// is internal/decree's; these are its entry points, with the engine
// (decree_engine.go) handed in.

// RunRecord is a guarded run's record (run.json in .decree/runs/<id>/).
type RunRecord = run.Record

// RunAttempt is one attempt of a guarded run.
type RunAttempt = run.Attempt

// RunExit is how an attempt ended.
type RunExit = run.Exit

// MaxRunAttempts bounds the attempts of a run (max_retries, and
// [RunOptions.Attempts]).
const MaxRunAttempts = run.MaxAttempts

// RunOptions configure [Repo.Run], one ad-hoc guarded command.
type RunOptions = decree.RunOptions

// RunResult is what [Repo.Run] did.
type RunResult = decree.RunResult

// ProcessOptions configure [Repo.Process].
type ProcessOptions = decree.ProcessOptions

// ProcessResult is what [Repo.Process] did.
type ProcessResult = decree.ProcessResult

// RunDetail is a run's record and the paths of its files.
type RunDetail = decree.Detail

// Process runs every message in .decree/inbox through Decree's flow: for
// each, in order of chain and seq, a checkpoint (manifest.json),
// the routine, changes.diff after every attempt, retries that keep partial
// work, a clean-slate last attempt that can read failure-context.md, and —
// when every attempt failed — a verified revert and a dead letter
// (inbox/dead). Success moves the message to inbox/done and marks its spec
// processed. Unprocessed specs/*.spec.md are queued first, as decree process
// does; messages routines add to the inbox are run too, a chain's follow-ups
// first. Cancelling ctx stops the running attempt (it counts as failed, its
// diff is written) and ends processing. A run whose changes cannot be
// undone stops processing ([ProcessResult.Stopped], a [*RunStoppedError]).
func (r *Repo) Process(ctx context.Context, opts ProcessOptions) (*ProcessResult, error) {
	return decree.Process(ctx, r.decree(), opts)
}

// Run runs one command under Decree's flow, as an ad-hoc message whose
// routine is the command: same checkpoints, attempts, records and revert as
// [Repo.Process], and the same environment variables.
func (r *Repo) Run(ctx context.Context, opts RunOptions) (*RunResult, error) {
	return decree.Run(ctx, r.decree(), opts)
}

// Runs returns the guarded runs' records, newest first. A run that a ckpt
// which is gone left running shows as interrupted.
func (r *Repo) Runs(ctx context.Context) ([]*RunRecord, error) {
	return decree.Runs(ctx, r.decree())
}

// RunShow returns the run an id (or unique id prefix) names.
func (r *Repo) RunShow(ctx context.Context, id string) (*RunDetail, error) {
	return decree.Show(ctx, r.decree(), id)
}

// RevertRun undoes a finished run: its changes.diff in reverse, verified
// against its manifest.json. The current state is checkpointed first.
func (r *Repo) RevertRun(ctx context.Context, id string) (*RunRecord, error) {
	return decree.Revert(ctx, r.decree(), id)
}

// StopRoutines kills the process groups of the routines that runs in
// this process are running. A program that must exit in the middle of
// [Repo.Run] or [Repo.Process] (at a second SIGINT) calls it first, so no
// routine outlives it; the run's record is settled by the next ckpt
// ([Repo.Recover], or the next run of it).
func StopRoutines() { decree.StopRoutines() }

// settleRuns settles the runs a ckpt which is gone left running (see
// decree.Settle), for Recover.
func (r *Repo) settleRuns(ctx context.Context) (settled []string, removed []Path, err error) {
	settled, temps, err := decree.Settle(ctx, r.decree())
	for _, p := range temps {
		removed = append(removed, Path(p))
	}
	return settled, removed, err
}
