// Package session records conversations with agents against checkpoints,
// and takes them back: turns, messages, rewind, fork and summarize. The
// root package ckpt re-exports its types and hands it the engine; the
// faces reach it only through ckpt.
//
// # Sessions and turns
//
// A [Session] is a conversation with an agent in one workspace: ordered
// turns and the conversation's messages, stored in the store's sessions
// table (one JSON document per session, messages in order beside it), so
// it survives restarts and crashes. The most recently updated session is
// the current one.
//
// A [Turn] is one user prompt and what followed it. It is anchored to two
// whole-workspace checkpoints: Begin, taken when the turn began, and End,
// taken when it ended (nil while the turn is in progress). Its Files are
// the paths that differ between the two. A turn begins with
// [Controller.BeginTurn] (which ends a turn still in progress first) and
// ends with [Controller.EndTurn]; [Controller.RecordTurn] records a turn
// that is already over, from HEAD to a checkpoint taken now. A summary
// turn stands for several original turns and keeps their spans in Parts.
//
// A [Message] belongs to a turn and has a role: user, assistant, tool,
// system or summary. Messages are never deleted by a rewind or a summary:
// they are hidden (Hidden names why), and kept for the record.
//
// # Rewind, fork, summarize
//
// [Controller.Rewind] takes a session back to the start of a turn. Its
// code scope undoes only what the turns changed, newest part first, by a
// three-way plan per path (the turn's end is the base, its start theirs,
// the workspace ours): a path the user left alone goes back, one both
// changed is line-merged, and anything else keeps the user's side and is
// reported as a conflict. The plan is computed without writing; the
// engine stores and restores it ([Engine.RestoreEdited]). With Exact the
// workspace is restored to the turn's Begin checkpoint instead, edits made
// between turns included, through the engine's verified, undoable
// restore. Either way the state before is checkpointed first, so undo
// takes the rewind back. The conversation scope hides
// the messages from the turn's prompt on and moves the turns to Rewound.
//
// [Controller.Fork] starts a new session from a turn: the conversation
// before it, on a new history branch at the turn's Begin checkpoint.
// [Controller.Summarize] replaces turns with one summary turn and message,
// written by the store's summarizer command or the built-in summary.
//
// # The engine and the lock
//
// The package knows the checkpoint engine only through [Engine], which the
// root package's Repo implements. Every operation that changes a session
// or the workspace takes the engine's operation lock first
// ([Engine.Lock]), loads the session under it, and releases it when done;
// functions and engine methods that expect the lock held say so (their
// names end in Locked, or their doc says "lock held") and never take it
// themselves. Reading a session or its messages takes no lock.
//
// Sessions are roots for gc: [Roots] lists the checkpoints their turns
// (rewound ones included) need.
package session
