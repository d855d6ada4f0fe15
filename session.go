package ckpt

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// # Sessions
//
// A session is a conversation with an agent in the workspace: ordered
// turns, each anchored to the checkpoint taken when it began (the whole
// tree, so shell side effects are covered) and the one taken when it
// ended, and the conversation's messages. Sessions live in the store, so
// they survive restarts and crashes. Every frontend — CLI, picker, hooks,
// MCP, HTTP — drives them through one seam, the [Controller].

// Session is a conversation with an agent in the workspace.
type Session struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Agent names the agent whose hooks record it (claude-code, gemini,
	// codex), if any.
	Agent   string    `json:"agent,omitempty"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	// Parent and ForkTurn name the session and turn this one was forked
	// from; Branch is the history branch a fork works on.
	Parent   string  `json:"parent,omitempty"`
	ForkTurn int     `json:"fork_turn,omitempty"`
	Branch   string  `json:"branch,omitempty"`
	Turns    []*Turn `json:"turns"`
	// Rewound are turns a conversation rewind removed, kept for the record.
	Rewound []*Turn `json:"rewound,omitempty"`
}

// Turn is one user prompt and what followed it.
type Turn struct {
	// N numbers turns from 1, as `ckpt session show` lists them.
	N       int       `json:"n"`
	Prompt  string    `json:"prompt"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended,omitzero"`
	// Begin is the checkpoint taken when the turn began; End the one when
	// it ended (nil while it is in progress).
	Begin ID  `json:"begin"`
	End   *ID `json:"end,omitempty"`
	// Files are the paths the turn changed (Begin to End).
	Files []TurnFile `json:"files"`
	// Summary marks a turn that stands for summarized turns.
	Summary bool `json:"summary,omitempty"`
	// Parts are a summary turn's original turns (their checkpoints), so
	// that edits made between them stay the user's.
	Parts []TurnPart `json:"parts,omitempty"`
}

// TurnPart is the span of one original turn within a summary turn.
type TurnPart struct {
	Begin ID  `json:"begin"`
	End   *ID `json:"end,omitempty"`
}

// Open reports whether the turn is still in progress.
func (t *Turn) Open() bool { return t.End == nil }

// parts returns the spans the agent worked in: the turn itself, or the
// original turns of a summary turn.
func (t *Turn) parts() []TurnPart {
	if len(t.Parts) > 0 {
		return t.Parts
	}
	return []TurnPart{{Begin: t.Begin, End: t.End}}
}

// TurnFile is a path a turn changed.
type TurnFile struct {
	Path Path `json:"path"`
	// Status is "added", "modified", "deleted" or "type-changed".
	Status string `json:"status"`
}

// Message is one message of a session's conversation. Tool calls are
// messages with role "tool" and the tool's name.
type Message struct {
	Seq     int64     `json:"seq"`
	Turn    int       `json:"turn"`
	Role    string    `json:"role"`
	Content string    `json:"content"`
	Time    time.Time `json:"time"`
	Tool    string    `json:"tool,omitempty"`
	// Hidden messages were removed from the conversation by a rewind or a
	// summary; they are kept for the record.
	Hidden string `json:"hidden,omitempty"`
}

// Roles a message may have.
var messageRoles = map[string]bool{"user": true, "assistant": true, "tool": true, "system": true, "summary": true}

var sessionIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func (r *Repo) sessions() store.Sessions { return r.st.(store.Sessions) }

func newSessionID() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (r *Repo) loadSession(ctx context.Context, id string) (*Session, error) {
	row, err := r.sessions().Session(ctx, id)
	if err != nil {
		return nil, err
	}
	var s Session
	if err := json.Unmarshal(row.Data, &s); err != nil {
		return nil, &store.CorruptError{Kind: "session", Detail: fmt.Sprintf("session %s: %v", id, err)}
	}
	if s.Turns == nil {
		s.Turns = []*Turn{}
	}
	return &s, nil
}

func (r *Repo) putSession(ctx context.Context, s *Session) error {
	s.Updated = r.now().UTC()
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return r.sessions().PutSession(ctx, &store.SessionRow{ID: s.ID, Updated: s.Updated, Data: data})
}

// SessionOptions configure [Repo.NewSession].
type SessionOptions struct {
	// ID is the session's id (an agent's own session id); default random.
	ID    string
	Title string
	Agent string
}

// NewSession starts a session; it becomes the current one.
func (r *Repo) NewSession(ctx context.Context, opts SessionOptions) (*Session, error) {
	unlock, err := r.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return r.newSessionLocked(ctx, opts)
}

func (r *Repo) newSessionLocked(ctx context.Context, opts SessionOptions) (*Session, error) {
	id := opts.ID
	if id == "" {
		id = newSessionID()
	}
	if !sessionIDRE.MatchString(id) {
		return nil, fmt.Errorf("invalid session id %q: use up to 128 letters, digits, '.', '_' or '-'", id)
	}
	if _, err := r.sessions().Session(ctx, id); err == nil {
		return nil, fmt.Errorf("session %s: %w", id, ErrExists)
	}
	now := r.now().UTC()
	s := &Session{ID: id, Title: opts.Title, Agent: opts.Agent, Created: now, Turns: []*Turn{}}
	if s.Title == "" {
		s.Title = "session " + now.Local().Format("2006-01-02 15:04")
	}
	if err := r.putSession(ctx, s); err != nil {
		return nil, err
	}
	return s, nil
}

// OpenSession returns the session with this id, creating it if there is
// none (an agent resuming or starting its session).
func (r *Repo) OpenSession(ctx context.Context, opts SessionOptions) (*Session, error) {
	unlock, err := r.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if opts.ID != "" {
		if s, err := r.loadSession(ctx, opts.ID); err == nil {
			if err := r.putSession(ctx, s); err != nil { // now the current one
				return nil, err
			}
			return s, nil
		} else if !errors.Is(err, ErrNotFound) {
			return nil, err
		}
	}
	return r.newSessionLocked(ctx, opts)
}

// Sessions lists the sessions, most recently active first.
func (r *Repo) Sessions(ctx context.Context) ([]*Session, error) {
	rows, err := r.sessions().SessionList(ctx)
	if err != nil {
		return nil, err
	}
	out := []*Session{}
	for _, row := range rows {
		var s Session
		if err := json.Unmarshal(row.Data, &s); err != nil {
			return nil, &store.CorruptError{Kind: "session", Detail: fmt.Sprintf("session %s: %v", row.ID, err)}
		}
		if s.Turns == nil {
			s.Turns = []*Turn{}
		}
		out = append(out, &s)
	}
	return out, nil
}

// ResolveSession finds a session by id or unique id prefix; "" is the
// current session (the most recently active).
func (r *Repo) ResolveSession(ctx context.Context, id string) (*Session, error) {
	all, err := r.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	if id == "" {
		if len(all) == 0 {
			return nil, withHint(ErrNoSession, "`ckpt session new` starts one (agent hooks start them by themselves)")
		}
		return all[0], nil
	}
	var found []*Session
	for _, s := range all {
		if s.ID == id {
			return s, nil
		}
		if strings.HasPrefix(s.ID, id) {
			found = append(found, s)
		}
	}
	switch len(found) {
	case 0:
		return nil, withHint(fmt.Errorf("session %s: %w", id, ErrNotFound), "`ckpt session list` lists the sessions")
	case 1:
		return found[0], nil
	}
	var ids []string
	for _, s := range found {
		ids = append(ids, s.ID)
	}
	return nil, fmt.Errorf("session id prefix %q is ambiguous: %s", id, strings.Join(ids, ", "))
}

// DeleteSession removes a session and its messages. Its checkpoints stay
// until gc's retention drops them.
func (r *Repo) DeleteSession(ctx context.Context, id string) error {
	unlock, err := r.begin(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	s, err := r.ResolveSession(ctx, id)
	if err != nil {
		return err
	}
	return r.sessions().DeleteSession(ctx, s.ID)
}

// Controller is the one seam every frontend drives a session through: the
// CLI, the rewind picker, agent hooks, MCP and HTTP. Get one with
// [Repo.Controller].
type Controller struct {
	r  *Repo
	id string
}

// ControllerOptions say which session [Repo.Controller] drives.
type ControllerOptions struct {
	// ID is the session's id or a unique prefix of it; "" the current
	// session.
	ID string
	// Exact takes ID as the full id and reads only that session, without
	// listing the others, so the cost does not grow with their number (an
	// agent's hook, at every event). No such session is [ErrNotFound].
	Exact bool
	// Create, with Exact, creates the session when there is none (as
	// [Repo.OpenSession] does), with these options; its ID is ID.
	Create *SessionOptions
}

// Controller returns the controller of the session opts names, and the
// session as stored. It is the one way to get a controller.
func (r *Repo) Controller(ctx context.Context, opts ControllerOptions) (*Controller, *Session, error) {
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
		s, err = r.OpenSession(ctx, o)
	case opts.Exact:
		s, err = r.loadSession(ctx, opts.ID)
		if errors.Is(err, ErrNotFound) {
			err = fmt.Errorf("session %s: %w", opts.ID, ErrNotFound)
		}
	default:
		s, err = r.ResolveSession(ctx, opts.ID)
	}
	if err != nil {
		return nil, nil, err
	}
	return &Controller{r: r, id: s.ID}, s, nil
}

// ID returns the session's id.
func (c *Controller) ID() string { return c.id }

// Repo returns the workspace the session belongs to.
func (c *Controller) Repo() *Repo { return c.r }

// Session returns the session as stored now.
func (c *Controller) Session(ctx context.Context) (*Session, error) {
	return c.r.loadSession(ctx, c.id)
}

// Subscribe registers fn for the workspace's events (see [Repo.Subscribe]);
// session events carry the session's id.
func (c *Controller) Subscribe(fn func(Event)) (cancel func()) { return c.r.Subscribe(fn) }

// lockSession takes the store's lock and loads the session; the caller
// calls unlock when done.
func (c *Controller) lockSession(ctx context.Context) (*Session, func(), error) {
	unlock, err := c.r.begin(ctx)
	if err != nil {
		return nil, nil, err
	}
	s, err := c.r.loadSession(ctx, c.id)
	if err != nil {
		unlock()
		return nil, nil, err
	}
	return s, unlock, nil
}

// endOpenTurnLocked ends the session's turn in progress, if there is one.
func (c *Controller) endOpenTurnLocked(ctx context.Context, s *Session) error {
	if n := len(s.Turns); n > 0 && s.Turns[n-1].Open() {
		return c.endTurnLocked(ctx, s, s.Turns[n-1])
	}
	return nil
}

// BeginTurn starts a turn labelled with the prompt: it checkpoints the
// whole workspace (the state the turn starts from) and records the prompt
// as the turn's first message. A turn still in progress is ended first.
func (c *Controller) BeginTurn(ctx context.Context, prompt string) (*Turn, error) {
	s, unlock, err := c.lockSession(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := c.endOpenTurnLocked(ctx, s); err != nil {
		return nil, err
	}
	n := len(s.Turns) + 1
	res, err := c.r.saveLocked(ctx, SaveOptions{Kind: KindTurn, Message: fmt.Sprintf("turn %d: %s", n, firstLine(prompt, 72)),
		Meta: map[string]string{"session": s.ID, "turn": fmt.Sprint(n), "at": "begin"}}, nil)
	if err != nil {
		return nil, err
	}
	t := &Turn{N: n, Prompt: prompt, Started: c.r.now().UTC(), Begin: res.Checkpoint.ID, Files: []TurnFile{}}
	s.Turns = append(s.Turns, t)
	if err := c.r.putSession(ctx, s); err != nil {
		return nil, err
	}
	if _, err := c.appendMessage(ctx, Message{Turn: n, Role: "user", Content: prompt}); err != nil {
		return nil, err
	}
	c.r.emit(Event{Kind: EventTurnBegan, Checkpoint: t.Begin, Session: s.ID, Turn: n, Message: firstLine(prompt, 200)})
	return t, nil
}

// EndTurn ends the turn in progress: it checkpoints the workspace and
// records which files the turn changed.
func (c *Controller) EndTurn(ctx context.Context) (*Turn, error) {
	s, unlock, err := c.lockSession(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	n := len(s.Turns)
	if n == 0 || !s.Turns[n-1].Open() {
		return nil, withHint(fmt.Errorf("session %s: no turn in progress", s.ID), "`ckpt turn begin -m PROMPT` starts one")
	}
	t := s.Turns[n-1]
	if err := c.endTurnLocked(ctx, s, t); err != nil {
		return nil, err
	}
	return t, nil
}

func (c *Controller) endTurnLocked(ctx context.Context, s *Session, t *Turn) error {
	res, err := c.r.saveLocked(ctx, SaveOptions{Kind: KindTurn, Message: fmt.Sprintf("turn %d ended: %s", t.N, firstLine(t.Prompt, 64)),
		Meta: map[string]string{"session": s.ID, "turn": fmt.Sprint(t.N), "at": "end"}}, nil)
	if err != nil {
		return err
	}
	end := res.Checkpoint.ID
	t.End, t.Ended = &end, c.r.now().UTC()
	if t.Files, err = c.r.turnFiles(ctx, t.Begin, end); err != nil {
		return err
	}
	if err := c.r.putSession(ctx, s); err != nil {
		return err
	}
	c.r.emit(Event{Kind: EventTurnEnded, Checkpoint: end, Session: s.ID, Turn: t.N, Paths: turnPaths(t.Files)})
	return nil
}

func turnPaths(fs []TurnFile) []Path {
	var out []Path
	for _, f := range fs {
		out = append(out, f.Path)
	}
	return out
}

// turnFiles lists what changed between two checkpoints.
func (r *Repo) turnFiles(ctx context.Context, from, to ID) ([]TurnFile, error) {
	d, err := r.Diff(ctx, DiffOptions{From: from.String(), To: to.String()})
	if err != nil {
		return nil, err
	}
	out := []TurnFile{}
	for _, f := range d.Files {
		out = append(out, TurnFile{Path: f.Path, Status: f.Status})
	}
	return out, nil
}

// AddMessage adds a message to the conversation, in the turn in progress
// (or the last turn). Role is user, assistant, tool, system or summary.
func (c *Controller) AddMessage(ctx context.Context, m Message) (*Message, error) {
	if !messageRoles[m.Role] {
		return nil, fmt.Errorf("message role %q: want user, assistant, tool, system or summary", m.Role)
	}
	s, unlock, err := c.lockSession(ctx)
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
	if err := c.r.putSession(ctx, s); err != nil { // the session is now the current one
		return nil, err
	}
	c.r.emit(Event{Kind: EventMessage, Session: s.ID, Turn: m.Turn, Message: firstLine(m.Content, 200)})
	return out, nil
}

func (c *Controller) appendMessage(ctx context.Context, m Message) (*Message, error) {
	if m.Time.IsZero() {
		m.Time = c.r.now().UTC()
	}
	m.Seq = 0
	data, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	seq, err := c.r.sessions().AppendMessage(ctx, c.id, data)
	if err != nil {
		return nil, err
	}
	m.Seq = seq
	return &m, nil
}

// Messages returns the conversation (hidden messages only with all).
func (c *Controller) Messages(ctx context.Context, all bool) ([]*Message, error) {
	rows, err := c.r.sessions().Messages(ctx, c.id)
	if err != nil {
		return nil, err
	}
	out := []*Message{}
	for _, row := range rows {
		var m Message
		if err := json.Unmarshal(row.Data, &m); err != nil {
			return nil, &store.CorruptError{Kind: "message", Detail: fmt.Sprintf("session %s message %d: %v", c.id, row.Seq, err)}
		}
		m.Seq = row.Seq
		if m.Hidden != "" && !all {
			continue
		}
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
func (c *Controller) Checkpoints(ctx context.Context) ([]TurnInfo, error) {
	s, err := c.r.loadSession(ctx, c.id)
	if err != nil {
		return nil, err
	}
	out := []TurnInfo{}
	for _, t := range s.Turns {
		ti := TurnInfo{N: t.N, Time: t.Started, Prompt: t.Prompt, Files: t.Files, Open: t.Open(), Summary: t.Summary, Begin: t.Begin}
		if t.Open() {
			d, err := c.r.Diff(ctx, DiffOptions{From: t.Begin.String()})
			if err != nil {
				return nil, err
			}
			ti.Files = []TurnFile{}
			for _, f := range d.Files {
				ti.Files = append(ti.Files, TurnFile{Path: f.Path, Status: f.Status})
			}
		}
		out = append(out, ti)
	}
	return out, nil
}

func firstLine(s string, max int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > max {
		s = s[:max-3] + "..."
	}
	return s
}

func (c *Controller) turn(s *Session, n int) (*Turn, error) {
	if n < 1 || n > len(s.Turns) {
		if len(s.Turns) == 0 {
			return nil, fmt.Errorf("session %s has no turns yet", s.ID)
		}
		return nil, fmt.Errorf("session %s has turns 1 to %d, not %d", s.ID, len(s.Turns), n)
	}
	return s.Turns[n-1], nil
}

// transcript renders turns (and their messages) as the JSON a summarizer
// reads.
type transcript struct {
	Session struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	} `json:"session"`
	Turns []transcriptTurn `json:"turns"`
}

type transcriptTurn struct {
	N        int        `json:"n"`
	Prompt   string     `json:"prompt"`
	Time     time.Time  `json:"time"`
	Files    []TurnFile `json:"files"`
	Messages []*Message `json:"messages"`
	Summary  bool       `json:"summary,omitempty"`
}

func marshalIndent(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.Encode(v)
	return b.Bytes()
}

// sessionRoots returns the checkpoints of every session's turns (but
// those of the sessions in skip): gc keeps them.
func (r *Repo) sessionRoots(ctx context.Context, skip map[string]bool) ([]ID, error) {
	all, err := r.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	var out []ID
	for _, s := range all {
		if skip[s.ID] {
			continue
		}
		for _, ts := range [][]*Turn{s.Turns, s.Rewound} {
			for _, t := range ts {
				out = append(out, t.Begin)
				if t.End != nil {
					out = append(out, *t.End)
				}
			}
		}
	}
	return out, nil
}
