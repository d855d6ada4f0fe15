package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/hint"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// Controller is the one seam every frontend drives a session through: the
// CLI, the rewind picker, agent hooks, MCP and HTTP. Get one with
// [Control].
type Controller[R, S any] struct {
	e  Engine[R, S]
	id string
}

// ControllerOptions say which session [Control] drives.
type ControllerOptions struct {
	// ID is the session's id or a unique prefix of it; "" the current
	// session.
	ID string
	// Exact takes ID as the full id and reads only that session, without
	// listing the others, so the cost does not grow with their number (an
	// agent's hook, at every event). No such session is a not-found error.
	Exact bool
	// Create, with Exact, creates the session when there is none (as
	// [Open] does), with these options; its ID is ID.
	Create *Options
}

// Control returns the controller of the session opts names, and the
// session as stored. It is the one way to get a controller.
func Control[R, S any](ctx context.Context, e Engine[R, S], opts ControllerOptions) (*Controller[R, S], *Session, error) {
	var (
		s   *Session
		err error
	)
	switch {
	case opts.Exact && opts.Create != nil:
		if opts.ID == "" {
			return nil, nil, errors.New("open session: an id is required")
		}
		o := *opts.Create
		o.ID = opts.ID
		s, err = Open(ctx, e, o)
	case opts.Exact:
		s, err = load(ctx, e.Sessions(), opts.ID)
		if errors.Is(err, store.ErrNotFound) {
			err = fmt.Errorf("session %s: %w", opts.ID, store.ErrNotFound)
		}
	default:
		s, err = Resolve(ctx, e.Sessions(), opts.ID)
	}
	if err != nil {
		return nil, nil, err
	}
	return &Controller[R, S]{e: e, id: s.ID}, s, nil
}

// ID returns the session's id.
func (c *Controller[R, S]) ID() string { return c.id }

// Session returns the session as stored now.
func (c *Controller[R, S]) Session(ctx context.Context) (*Session, error) {
	return load(ctx, c.e.Sessions(), c.id)
}

// Summarizer returns the command [Controller.Summarize] runs, as the
// store's config names it; "" means the built-in summarizer.
func (c *Controller[R, S]) Summarizer() string { return c.e.Summarizer() }

// lock takes the store's lock and loads the session; the caller calls
// unlock when done.
func (c *Controller[R, S]) lock(ctx context.Context) (*Session, func(), error) {
	unlock, err := c.e.Lock(ctx)
	if err != nil {
		return nil, nil, err
	}
	s, err := c.Session(ctx)
	if err != nil {
		unlock()
		return nil, nil, err
	}
	return s, unlock, nil
}

// lockForTurn takes the lock for a new turn: the session is loaded and
// its turn in progress, if any, ended.
func (c *Controller[R, S]) lockForTurn(ctx context.Context) (*Session, func(), error) {
	s, unlock, err := c.lock(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := c.endOpenTurnLocked(ctx, s); err != nil {
		unlock()
		return nil, nil, err
	}
	return s, unlock, nil
}

// addTurnLocked appends a new turn to the session, stores it, and records
// the turn's prompt as its first message.
func (c *Controller[R, S]) addTurnLocked(ctx context.Context, s *Session, t *Turn) error {
	s.Turns = append(s.Turns, t)
	if err := put(ctx, c.e, s); err != nil {
		return err
	}
	_, err := c.appendMessage(ctx, Message{Turn: t.N, Role: "user", Content: t.Prompt})
	return err
}

// endOpenTurnLocked ends the session's turn in progress, if there is one.
func (c *Controller[R, S]) endOpenTurnLocked(ctx context.Context, s *Session) error {
	if n := len(s.Turns); n > 0 && s.Turns[n-1].Open() {
		return c.endTurnLocked(ctx, s, s.Turns[n-1])
	}
	return nil
}

// SetTranscript records the agent's own transcript file on the session.
func (c *Controller[R, S]) SetTranscript(ctx context.Context, path string) error {
	s, unlock, err := c.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if s.Transcript == path {
		return nil
	}
	s.Transcript = path
	return put(ctx, c.e, s)
}

// BeginTurn starts a turn labelled with the prompt: it checkpoints the
// whole workspace (the state the turn starts from) and records the prompt
// as the turn's first message. A turn still in progress is ended first.
func (c *Controller[R, S]) BeginTurn(ctx context.Context, prompt string) (*Turn, error) {
	s, unlock, err := c.lockForTurn(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	n := len(s.Turns) + 1
	begin, err := c.e.Save(ctx, fmt.Sprintf("turn %d: %s", n, firstLine(prompt, 72)),
		map[string]string{"session": s.ID, "turn": fmt.Sprint(n), "at": "begin"})
	if err != nil {
		return nil, err
	}
	t := &Turn{N: n, Prompt: prompt, Started: c.e.Now().UTC(), Begin: begin, Files: []TurnFile{}}
	if err := c.addTurnLocked(ctx, s, t); err != nil {
		return nil, err
	}
	c.e.Emit(Event{Kind: EventTurnBegan, Checkpoint: t.Begin, Session: s.ID, Turn: n, Message: firstLine(prompt, 200)})
	return t, nil
}

// EndTurn ends the turn in progress: it checkpoints the workspace and
// records which files the turn changed.
func (c *Controller[R, S]) EndTurn(ctx context.Context) (*Turn, error) {
	s, unlock, err := c.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	n := len(s.Turns)
	if n == 0 || !s.Turns[n-1].Open() {
		return nil, hint.With(fmt.Errorf("session %s: no turn in progress", s.ID), "`ckpt turn begin -m PROMPT` starts one")
	}
	t := s.Turns[n-1]
	if err := c.endTurnLocked(ctx, s, t); err != nil {
		return nil, err
	}
	return t, nil
}

func (c *Controller[R, S]) endTurnLocked(ctx context.Context, s *Session, t *Turn) error {
	end, err := c.e.Save(ctx, fmt.Sprintf("turn %d ended: %s", t.N, firstLine(t.Prompt, 64)),
		map[string]string{"session": s.ID, "turn": fmt.Sprint(t.N), "at": "end"})
	if err != nil {
		return err
	}
	if len(t.Ignored) > 0 {
		// The ignored files the turn's edit tools changed, as it left
		// them (see TrackIgnored).
		if end, _, err = c.e.Amend(ctx, end, t.Ignored, fmt.Sprintf("turn %d ended, with the ignored files its edit tools changed", t.N)); err != nil {
			return err
		}
	}
	t.End, t.Ended = &end, c.e.Now().UTC()
	if t.Files, err = c.e.Changes(ctx, t.Begin, end); err != nil {
		return err
	}
	if err := put(ctx, c.e, s); err != nil {
		return err
	}
	c.e.Emit(Event{Kind: EventTurnEnded, Checkpoint: end, Session: s.ID, Turn: t.N, Paths: turnPaths(t.Files)})
	return nil
}

func turnPaths(fs []TurnFile) []Path {
	var out []Path
	for _, f := range fs {
		out = append(out, f.Path)
	}
	return out
}

// AddMessage adds a message to the conversation, in the turn in progress
// (or the last turn). Role is user, assistant, tool, system or summary.
func (c *Controller[R, S]) AddMessage(ctx context.Context, m Message) (*Message, error) {
	if !messageRoles[m.Role] {
		return nil, fmt.Errorf("message role %q: want user, assistant, tool, system or summary", m.Role)
	}
	s, unlock, err := c.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if m.Turn == 0 {
		m.Turn = len(s.Turns)
	}
	out, err := c.appendMessage(ctx, m)
	if err != nil {
		return nil, err
	}
	if err := put(ctx, c.e, s); err != nil { // the session is now the current one
		return nil, err
	}
	c.e.Emit(Event{Kind: EventMessage, Session: s.ID, Turn: m.Turn, Message: firstLine(m.Content, 200)})
	return out, nil
}

func (c *Controller[R, S]) appendMessage(ctx context.Context, m Message) (*Message, error) {
	if m.Time.IsZero() {
		m.Time = c.e.Now().UTC()
	}
	m.Seq = 0
	data, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	seq, err := c.e.Sessions().AppendMessage(ctx, c.id, data)
	if err != nil {
		return nil, err
	}
	m.Seq = seq
	return &m, nil
}

// Messages returns the conversation (hidden messages only with all).
func (c *Controller[R, S]) Messages(ctx context.Context, all bool) ([]*Message, error) {
	msgs, err := messagesOf(ctx, c.e, c.id)
	if err != nil || all {
		return msgs, err
	}
	out := []*Message{}
	for _, m := range msgs {
		if m.Hidden == "" {
			out = append(out, m)
		}
	}
	return out, nil
}

// messagesOf reads all of session id's messages, hidden ones too.
func messagesOf[R, S any](ctx context.Context, e Engine[R, S], id string) ([]*Message, error) {
	rows, err := e.Sessions().Messages(ctx, id)
	if err != nil {
		return nil, err
	}
	out := []*Message{}
	for _, row := range rows {
		var m Message
		if err := json.Unmarshal(row.Data, &m); err != nil {
			return nil, &store.CorruptError{Kind: "message", Detail: fmt.Sprintf("session %s message %d: %v", id, row.Seq, err)}
		}
		m.Seq = row.Seq
		out = append(out, &m)
	}
	return out, nil
}

// TurnInfo describes a turn for a picker.
type TurnInfo struct {
	N       int        `json:"n"`
	Time    time.Time  `json:"time"`
	Prompt  string     `json:"prompt"`
	Files   []TurnFile `json:"files"`
	Open    bool       `json:"open"`
	Summary bool       `json:"summary,omitempty"`
	Begin   ID         `json:"begin"`
}

// Checkpoints lists the session's turns, oldest first, with when each
// began, its prompt and the files it changed (so far, for a turn in
// progress).
func (c *Controller[R, S]) Checkpoints(ctx context.Context) ([]TurnInfo, error) {
	s, err := c.Session(ctx)
	if err != nil {
		return nil, err
	}
	out := []TurnInfo{}
	for _, t := range s.Turns {
		ti := TurnInfo{N: t.N, Time: t.Started, Prompt: t.Prompt, Files: t.Files, Open: t.Open(), Summary: t.Summary, Begin: t.Begin}
		if t.Open() {
			if ti.Files, err = c.e.Changes(ctx, t.Begin, object.ID{}); err != nil {
				return nil, err
			}
		}
		out = append(out, ti)
	}
	return out, nil
}

func (c *Controller[R, S]) turn(s *Session, n int) (*Turn, error) {
	if n < 1 || n > len(s.Turns) {
		if len(s.Turns) == 0 {
			return nil, fmt.Errorf("session %s has no turns yet", s.ID)
		}
		return nil, fmt.Errorf("session %s has turns 1 to %d, not %d", s.ID, len(s.Turns), n)
	}
	return s.Turns[n-1], nil
}
