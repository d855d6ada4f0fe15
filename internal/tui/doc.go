// Package tui is the rewind picker: the terminal UI `ckpt rewind` opens
// when it is given no turn (Claude Code's Esc-Esc / /rewind).
//
// The picker lists a session's turns, newest first, each with its time,
// the first line of its prompt and the files it changed. Enter on a turn
// opens the action menu (Reasonix's, which is Claude Code's)
//
//	[code+conversation] [conversation] [code] [fork from here]
//	[summarize from here] [summarize up to here] [cancel]
//
// and, for the highlighted action, shows what it would change before it
// changes anything: for code, the files the rewind would create, update or
// delete (a dry run through the engine); for the conversation, how many
// messages and turns leave it and the prompt that comes back; for a
// summary, the turns it replaces (the turn and every later one, or every
// turn up to it), their messages and which summarizer will write it — the
// summarizer itself runs only on Enter. Enter again does it; Esc goes back
// to the list; Esc Esc, q or Ctrl-C quit (Ctrl-C while an action runs
// stops it). The key u toggles between keeping the user's edits between
// turns (the default) and an exact rewind (--exact).
//
// Like every frontend it drives the session only through the engine's
// [ckpt.Controller]; it never prints. [Run] runs it on a terminal and
// returns what it did, for the caller to report.
package tui
