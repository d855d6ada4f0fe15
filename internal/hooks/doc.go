// Package hooks adapts coding agents' hook calls to ckpt's sessions: it
// reads what Claude Code, Gemini CLI and Codex send their hook programs,
// turns it into an [Event], and drives the workspace's session through the
// engine's [ckpt.Controller] — a checkpoint when a turn begins, another
// when it ends, the prompt, the assistant's replies and the tool calls as
// the session's messages.
//
// # Never in the agent's way
//
// A hook runs inside the agent's loop, so [Run] never fails the agent: a
// malformed payload, an unknown event, a store it cannot open or one
// another ckpt process holds longer than the (short) lock timeout are
// reported on stderr, in the hook log ([LogPath]) and as the last failure
// ([LastFailure], which `ckpt hook status` and `ckpt status` show until a
// call succeeds), and the agent goes on. Its time is bounded; on the
// deadline it returns and the abandoned operation is cancelled (the
// store's transactions make that safe). What it reads is bounded too: a
// transcript only if it is a regular file, at most its last 16 MiB. The
// CLI runs Run in a guarded child process (see internal/cli), so even a
// crash of the runtime does not reach the agent as a failure.
//
// A hook never widens a workspace: it does not make one of the home
// directory, "/", or a directory above workspaces ckpt protects
// ([WorkspaceRefusedError]).
//
// # Events
//
//	agent        event (payload)               ckpt
//	claude-code  SessionStart                  open or resume the session by session_id
//	             UserPromptSubmit (prompt)     begin a turn: checkpoint, prompt as its label
//	             Stop, StopFailure             end the turn: checkpoint, files changed, messages
//	             SessionEnd                    end a turn still in progress
//	             PreCompact                    note the compaction in the conversation
//	gemini       SessionStart, BeforeAgent, AfterAgent, SessionEnd, PreCompress (the same)
//	codex        SessionStart, UserPromptSubmit, Stop, SessionEnd (the same, native hooks)
//	             agent-turn-complete (argv)    legacy notify: record the whole turn after the fact
//
// Codex's legacy notify program runs only when a turn is over, so such a
// turn begins at the workspace's last checkpoint (see
// [ckpt.Controller.RecordTurn]); `ckpt hook codex` tells the two payloads
// apart by their content.
//
// # Installing
//
// [Install] and [Uninstall] merge ckpt's entries into an agent's settings
// file (JSON for Claude Code, Gemini CLI and Codex's hooks.json; TOML for
// the trust Codex requires of each hook and its legacy notify) by editing
// only the spans they add or remove, so everything else in the file —
// other hooks, unknown keys, their order, formatting and comments — stays
// byte for byte as it was.
package hooks
