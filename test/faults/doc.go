// Package faults is ckpt's fault suite: one test per class of failure at
// the edges of the engine — a store inside the workspace, edits and symlink
// swaps while a restore or a save runs, crafted store content, kill -9
// during multi-file writes, recovery that cannot finish, hard links in
// watch mode, reserved names, fsck under load, pruning, permissions, bad
// MCP input, a full disk, a rolled-back database, very deep trees,
// read-only and damaged stores, partial restores across type changes, and
// Decree's inputs and routines (decree_*_test.go: alias bombs, huge logs,
// stuck routines and daemons, signals at each stage of a run, forged run
// records and reverts).
//
// Races are opened deterministically with failpoints (internal/failpoint):
// the test runs its edit at exactly the moment the engine reaches a path,
// rather than sleeping and hoping. Randomized variants run more rounds
// without -short. docs/guarantees.md names the test of each guarantee.
//
// The suite runs on Unix: it sends signals, makes FIFOs, sets the umask
// and limits a process's memory.
package faults
