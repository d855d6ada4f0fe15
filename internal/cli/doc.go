// Package cli implements the ckpt command line. Main runs it and maps
// errors to exit statuses (cli.go).
//
// One file per top-level command, named after it (save.go, runs.go,
// workspaces.go), holding its subcommands: an options struct, a newXCmd
// constructor and a runX function whose I/O comes from the env.
//
// Every command is built from the same pieces (command.go):
//
//   - jsonFlag adds --json;
//   - withRepo opens the repo (no progress bar with --json), does the
//     work and ends the progress bar; env.controller opens a session;
//   - env.result prints a result: JSON with --json, the id (or nothing)
//     with -q, else the text;
//   - listing prints a list: JSON, the ids with -q, else a line each, and
//     says on stderr when it is empty;
//   - env.sayf prints what a command did (not with -q), env.warnf talks on
//     stderr (not with -q).
//
// Words every face shares come from the root package: ckpt.FormatCounts
// ("+3 ~1 -2") and ckpt.HumanSize ("1.5 MiB").
package cli
