package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/hint"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

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
	// Transcript is the agent's own transcript file, as its hooks name it
	// (Claude Code's transcript_path): where a conversation rewind finds
	// the point to resume the agent's conversation from.
	Transcript string `json:"transcript,omitempty"`
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
	// Ignored are ignored files (.env, ...) the agent's edit tools
	// changed during the turn (see [Controller.TrackIgnored]): Begin and
	// End hold them too, so a rewind puts them back.
	Ignored []Path `json:"ignored,omitempty"`
	// Summary marks a turn that stands for summarized turns.
	Summary bool `json:"summary,omitempty"`
	// Parts are a summary turn's original turns (their checkpoints), so
	// that edits made between them stay the user's.
	Parts []TurnPart `json:"parts,omitempty"`
	// UndoneBy are the code rewinds (operation-log numbers) that took the
	// turn's changes back. While one of them is in effect a later rewind
	// does not take them back again: what equals the turn's end then is
	// someone else's doing (the user redoing it by hand), and stays. Once
	// 'ckpt undo' has taken those rewinds back, the turn counts again.
	UndoneBy []int64 `json:"undone_by,omitempty"`
}

// TurnPart is the span of one original turn within a summary turn.
type TurnPart struct {
	Begin ID  `json:"begin"`
	End   *ID `json:"end,omitempty"`
	// UndoneBy are the rewinds that took the original turn back (see
	// [Turn.UndoneBy]), kept when turns are summarized.
	UndoneBy []int64 `json:"undone_by,omitempty"`
}

// Open reports whether the turn is still in progress.
func (t *Turn) Open() bool { return t.End == nil }

// parts returns the spans the agent worked in: the turn itself, or the
// original turns of a summary turn.
func (t *Turn) parts() []TurnPart {
	if len(t.Parts) > 0 {
		if len(t.UndoneBy) == 0 {
			return t.Parts
		}
		out := make([]TurnPart, len(t.Parts))
		for i, p := range t.Parts {
			p.UndoneBy = append(slices.Clone(p.UndoneBy), t.UndoneBy...)
			out[i] = p
		}
		return out
	}
	return []TurnPart{{Begin: t.Begin, End: t.End, UndoneBy: t.UndoneBy}}
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

// ValidID reports whether id is a session id: 1 to 128 ASCII letters,
// digits, '.', '_' or '-', starting with a letter or digit. (A loop, not
// a regular expression: compiling {0,127} cost every ckpt process 0.4 ms
// at start.)
func ValidID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case (c == '.' || c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

func newSessionID() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// decode reads a session's stored document.
func decode(row *store.SessionRow) (*Session, error) {
	var s Session
	if err := json.Unmarshal(row.Data, &s); err != nil {
		return nil, &store.CorruptError{Kind: "session", Detail: fmt.Sprintf("session %s: %v", row.ID, err)}
	}
	if s.Turns == nil {
		s.Turns = []*Turn{}
	}
	return &s, nil
}

func load(ctx context.Context, tbl store.Sessions, id string) (*Session, error) {
	row, err := tbl.Session(ctx, id)
	if err != nil {
		return nil, err
	}
	return decode(row)
}

// put stores s; it becomes the current session (the most recently
// updated).
func put[R, S any](ctx context.Context, e Engine[R, S], s *Session) error {
	s.Updated = e.Now().UTC()
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return e.Sessions().PutSession(ctx, &store.SessionRow{ID: s.ID, Updated: s.Updated, Data: data})
}

// replace stores s with its conversation replaced by msgs, in one
// transaction.
func replace[R, S any](ctx context.Context, e Engine[R, S], s *Session, msgs [][]byte) error {
	s.Updated = e.Now().UTC()
	doc, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return e.Sessions().ReplaceMessages(ctx, s.ID, msgs, &store.SessionRow{ID: s.ID, Updated: s.Updated, Data: doc})
}

// Options configure [New] and [Open].
type Options struct {
	// ID is the session's id (an agent's own session id); default random.
	ID    string
	Title string
	Agent string
}

// New starts a session; it becomes the current one.
func New[R, S any](ctx context.Context, e Engine[R, S], opts Options) (*Session, error) {
	unlock, err := e.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return newLocked(ctx, e, opts)
}

func newLocked[R, S any](ctx context.Context, e Engine[R, S], opts Options) (*Session, error) {
	id := opts.ID
	if id == "" {
		id = newSessionID()
	}
	if !ValidID(id) {
		return nil, fmt.Errorf("invalid session id %q: use up to 128 letters, digits, '.', '_' or '-'", id)
	}
	if _, err := e.Sessions().Session(ctx, id); err == nil {
		return nil, fmt.Errorf("session %s: %w", id, store.ErrExists)
	}
	now := e.Now().UTC()
	s := &Session{ID: id, Title: opts.Title, Agent: opts.Agent, Created: now, Turns: []*Turn{}}
	if s.Title == "" {
		s.Title = "session " + now.Local().Format("2006-01-02 15:04")
	}
	if err := put(ctx, e, s); err != nil {
		return nil, err
	}
	return s, nil
}

// Open returns the session with this id, creating it if there is none
// (an agent resuming or starting its session); it becomes the current one.
func Open[R, S any](ctx context.Context, e Engine[R, S], opts Options) (*Session, error) {
	unlock, err := e.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if opts.ID != "" {
		if s, err := load(ctx, e.Sessions(), opts.ID); err == nil {
			if err := put(ctx, e, s); err != nil { // now the current one
				return nil, err
			}
			return s, nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
	}
	return newLocked(ctx, e, opts)
}

// List lists the sessions, most recently active first.
func List(ctx context.Context, tbl store.Sessions) ([]*Session, error) {
	rows, err := tbl.SessionList(ctx)
	if err != nil {
		return nil, err
	}
	out := []*Session{}
	for _, row := range rows {
		s, err := decode(row)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Resolve finds a session by id or unique id prefix; "" is the current
// session (the most recently active).
func Resolve(ctx context.Context, tbl store.Sessions, id string) (*Session, error) {
	all, err := List(ctx, tbl)
	if err != nil {
		return nil, err
	}
	if id == "" {
		if len(all) == 0 {
			return nil, hint.With(ErrNoSession, "`ckpt session new` starts one (agent hooks start them by themselves)")
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
		return nil, hint.With(fmt.Errorf("session %s: %w", id, store.ErrNotFound), "`ckpt session list` lists the sessions")
	case 1:
		return found[0], nil
	}
	var ids []string
	for _, s := range found {
		ids = append(ids, s.ID)
	}
	return nil, fmt.Errorf("session id prefix %q is ambiguous: %s", id, strings.Join(ids, ", "))
}

// Delete removes a session and its messages. Its checkpoints stay until
// gc's retention drops them.
func Delete[R, S any](ctx context.Context, e Engine[R, S], id string) error {
	unlock, err := e.Lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	s, err := Resolve(ctx, e.Sessions(), id)
	if err != nil {
		return err
	}
	return e.Sessions().DeleteSession(ctx, s.ID)
}

// Roots returns the checkpoints of every session's turns (but those of
// the sessions in skip): gc keeps them.
func Roots(ctx context.Context, tbl store.Sessions, skip map[string]bool) ([]ID, error) {
	all, err := List(ctx, tbl)
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

func firstLine(s string, max int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > max {
		s = s[:max-3] + "..."
	}
	return s
}
