package ckpt

import (
	"context"

	"github.com/seed1cedbf7c/ckpt/internal/session"
)

// # Sessions
//
// A session is a conversation with an agent in the workspace: ordered
// turns, each anchored to the checkpoint taken when it began (the whole
// tree, so shell side effects are covered) and the one taken when it
// ended, and the conversation's messages. Sessions live in the store, so
// they survive restarts and crashes. Every frontend — CLI, picker, hooks,
// MCP, HTTP — drives them through one seam, the [Controller]. The
// feature lives in internal/session; this file names its types here and
// hands it the engine (session_engine.go).

// The session types.
type (
	// Session is a conversation with an agent in the workspace.
	Session = session.Session
	// Turn is one user prompt and what followed it.
	Turn = session.Turn
	// TurnPart is the span of one original turn within a summary turn.
	TurnPart = session.TurnPart
	// TurnFile is a path a turn changed.
	TurnFile = session.TurnFile
	// TurnInfo describes a turn for a picker.
	TurnInfo = session.TurnInfo
	// Message is one message of a session's conversation.
	Message = session.Message
	// SessionOptions configure [Repo.NewSession] and [Repo.OpenSession].
	SessionOptions = session.Options
	// Controller is the one seam every frontend drives a session
	// through: turns, messages, [Controller.Rewind], [Controller.Fork],
	// [Controller.Summarize]. Get one with [Repo.Controller].
	Controller = session.Controller[RestoreResult, SwitchResult]
	// ControllerOptions say which session [Repo.Controller] drives.
	ControllerOptions = session.ControllerOptions
	// Scope says what a rewind takes back.
	Scope = session.Scope
	// RewindOptions configure [Controller.Rewind].
	RewindOptions = session.RewindOptions
	// RewindResult reports a rewind.
	RewindResult = session.RewindResult[RestoreResult]
	// ForkResult reports a fork.
	ForkResult = session.ForkResult[SwitchResult]
	// Direction says which turns [Controller.Summarize] replaces.
	Direction = session.Direction
	// SummarizeResult reports a summary.
	SummarizeResult = session.SummarizeResult
)

// Rewind scopes.
const (
	ScopeCode         = session.ScopeCode         // the workspace's files
	ScopeConversation = session.ScopeConversation // the session's messages
	ScopeBoth         = session.ScopeBoth
)

// Summarize directions.
const (
	SummarizeFrom = session.SummarizeFrom // the turn and every later one
	SummarizeUpto = session.SummarizeUpto // every turn up to and including it
)

// Controller returns the controller of the session opts names, and the
// session as stored. It is the one way to get a controller.
func (r *Repo) Controller(ctx context.Context, opts ControllerOptions) (*Controller, *Session, error) {
	return session.Control(ctx, r.sessionEngine(), opts)
}

// NewSession starts a session; it becomes the current one.
func (r *Repo) NewSession(ctx context.Context, opts SessionOptions) (*Session, error) {
	return session.New(ctx, r.sessionEngine(), opts)
}

// OpenSession returns the session with this id, creating it if there is
// none (an agent resuming or starting its session).
func (r *Repo) OpenSession(ctx context.Context, opts SessionOptions) (*Session, error) {
	return session.Open(ctx, r.sessionEngine(), opts)
}

// Sessions lists the sessions, most recently active first.
func (r *Repo) Sessions(ctx context.Context) ([]*Session, error) {
	return session.List(ctx, r.sessions())
}

// ResolveSession finds a session by id or unique id prefix; "" is the
// current session (the most recently active).
func (r *Repo) ResolveSession(ctx context.Context, id string) (*Session, error) {
	return session.Resolve(ctx, r.sessions(), id)
}

// DeleteSession removes a session and its messages. Its checkpoints stay
// until gc's retention drops them.
func (r *Repo) DeleteSession(ctx context.Context, id string) error {
	return session.Delete(ctx, r.sessionEngine(), id)
}

// ValidSessionID reports whether id can name a session as it is: 1 to 128
// ASCII letters, digits, '.', '_' or '-', starting with a letter or digit.
func ValidSessionID(id string) bool { return session.ValidID(id) }
