// Package run implements the mechanics of Decree's guarded runs: the
// .decree/ layout, config.yml, inbox messages (YAML front matter, normalized
// the way Decree normalizes them), routines (shell scripts and notebooks,
// their declared parameters and environment), executing an attempt, run
// records, failure-context.md, and specs/processed-spec.md.
//
// The flow that ties them to checkpoints — checkpoint, run, diff, retry,
// revert, dead letter — is internal/decree's, over the engine the root
// package provides (Repo.Process and Repo.Run are its entry points). Messages and records are untrusted input: every
// path and name read from them is validated here before use.
package run
