package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"time"
)

// SessionRow is a stored session: its document (header and turns, JSON
// defined by the root package) and when it last changed.
type SessionRow struct {
	ID      string
	Updated time.Time
	Data    []byte
}

// MessageRow is one stored message of a session, in order.
type MessageRow struct {
	Seq  int64
	Data []byte
}

// Sessions keeps conversations next to the checkpoints their turns anchor.
// Both backends implement it.
type Sessions interface {
	// Session returns a session, or ErrNotFound.
	Session(ctx context.Context, id string) (*SessionRow, error)
	// SessionList returns every session, most recently updated first.
	SessionList(ctx context.Context) ([]*SessionRow, error)
	// PutSession creates or replaces a session document.
	PutSession(ctx context.Context, row *SessionRow) error
	// DeleteSession removes a session and its messages.
	DeleteSession(ctx context.Context, id string) error
	// AppendMessage adds a message at the end and returns its seq.
	AppendMessage(ctx context.Context, id string, data []byte) (int64, error)
	// AppendMessages adds messages at the end in one transaction and
	// returns the first one's seq.
	AppendMessages(ctx context.Context, id string, data [][]byte) (int64, error)
	// Messages returns a session's messages in order.
	Messages(ctx context.Context, id string) ([]MessageRow, error)
	// ReplaceMessages rewrites all of a session's messages (and its
	// document, if row is not nil) in one transaction.
	ReplaceMessages(ctx context.Context, id string, data [][]byte, row *SessionRow) error
}

var (
	_ Sessions = (*SQLite)(nil)
	_ Sessions = (*Memory)(nil)
)

// SessionTables are emptied by Clear.
var SessionTables = []string{"sessions", "messages"}

const sessionMigrations = `
CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, updated INTEGER NOT NULL, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS messages (session TEXT NOT NULL, seq INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (session, seq));
`

// Session returns a session.
func (s *SQLite) Session(ctx context.Context, id string) (*SessionRow, error) {
	row := &SessionRow{ID: id}
	var t int64
	err := s.db.QueryRowContext(ctx, `SELECT updated, data FROM sessions WHERE id=?`, id).Scan(&t, &row.Data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("session %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, s.wrap("read session "+id, err)
	}
	row.Updated = time.Unix(0, t)
	return row, nil
}

// SessionList returns every session, most recently updated first.
func (s *SQLite) SessionList(ctx context.Context) ([]*SessionRow, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, updated, data FROM sessions ORDER BY updated DESC, id`)
	if err != nil {
		return nil, s.wrap("list sessions", err)
	}
	defer rows.Close()
	var out []*SessionRow
	for rows.Next() {
		r := &SessionRow{}
		var t int64
		if err := rows.Scan(&r.ID, &t, &r.Data); err != nil {
			return nil, s.wrap("list sessions", err)
		}
		r.Updated = time.Unix(0, t)
		out = append(out, r)
	}
	return out, s.wrap("list sessions", rows.Err())
}

// PutSession creates or replaces a session document.
func (s *SQLite) PutSession(ctx context.Context, row *SessionRow) error {
	if err := s.Writable(); err != nil {
		return err
	}
	_, err := s.db.ExecContext(ctx, `INSERT OR REPLACE INTO sessions(id, updated, data) VALUES(?, ?, ?)`, row.ID, row.Updated.UnixNano(), row.Data)
	return s.wrap("write session "+row.ID, err)
}

// DeleteSession removes a session and its messages.
func (s *SQLite) DeleteSession(ctx context.Context, id string) error {
	return s.update(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE session=?`, id); err != nil {
			return s.wrap("delete session "+id, err)
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id=?`, id)
		return s.wrap("delete session "+id, err)
	})
}

// AppendMessage adds a message at the end.
func (s *SQLite) AppendMessage(ctx context.Context, id string, data []byte) (int64, error) {
	var seq int64
	err := s.update(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) + 1 FROM messages WHERE session=?`, id).Scan(&seq); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO messages(session, seq, data) VALUES(?, ?, ?)`, id, seq, data)
		return err
	})
	return seq, s.wrap("add message to session "+id, err)
}

// AppendMessages adds messages at the end in one transaction.
func (s *SQLite) AppendMessages(ctx context.Context, id string, data [][]byte) (int64, error) {
	var first int64
	err := s.update(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) + 1 FROM messages WHERE session=?`, id).Scan(&first); err != nil {
			return err
		}
		for i, d := range data {
			if _, err := tx.ExecContext(ctx, `INSERT INTO messages(session, seq, data) VALUES(?, ?, ?)`, id, first+int64(i), d); err != nil {
				return err
			}
		}
		return nil
	})
	return first, s.wrap("add messages to session "+id, err)
}

// Messages returns a session's messages in order.
func (s *SQLite) Messages(ctx context.Context, id string) ([]MessageRow, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT seq, data FROM messages WHERE session=? ORDER BY seq`, id)
	if err != nil {
		return nil, s.wrap("read messages of "+id, err)
	}
	defer rows.Close()
	var out []MessageRow
	for rows.Next() {
		var m MessageRow
		if err := rows.Scan(&m.Seq, &m.Data); err != nil {
			return nil, s.wrap("read messages of "+id, err)
		}
		out = append(out, m)
	}
	return out, s.wrap("read messages of "+id, rows.Err())
}

// ReplaceMessages rewrites a session's messages (and document).
func (s *SQLite) ReplaceMessages(ctx context.Context, id string, data [][]byte, row *SessionRow) error {
	err := s.update(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE session=?`, id); err != nil {
			return err
		}
		for i, d := range data {
			if _, err := tx.ExecContext(ctx, `INSERT INTO messages(session, seq, data) VALUES(?, ?, ?)`, id, i+1, d); err != nil {
				return err
			}
		}
		if row != nil {
			_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO sessions(id, updated, data) VALUES(?, ?, ?)`, row.ID, row.Updated.UnixNano(), row.Data)
			return err
		}
		return nil
	})
	return s.wrap("rewrite messages of "+id, err)
}

type memSessions struct {
	rows map[string]*SessionRow
	msgs map[string][]MessageRow
}

func (m *Memory) sessions() *memSessions {
	if m.sess == nil {
		m.sess = &memSessions{rows: map[string]*SessionRow{}, msgs: map[string][]MessageRow{}}
	}
	return m.sess
}

// Session returns a session.
func (m *Memory) Session(ctx context.Context, id string) (*SessionRow, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.sessions().rows[id]
	if !ok {
		return nil, fmt.Errorf("session %s: %w", id, ErrNotFound)
	}
	c := *r
	return &c, nil
}

// SessionList returns every session, most recently updated first.
func (m *Memory) SessionList(ctx context.Context) ([]*SessionRow, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*SessionRow
	for _, r := range m.sessions().rows {
		c := *r
		out = append(out, &c)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Updated.Equal(out[j].Updated) {
			return out[i].Updated.After(out[j].Updated)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// PutSession creates or replaces a session document.
func (m *Memory) PutSession(ctx context.Context, row *SessionRow) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := *row
	m.sessions().rows[row.ID] = &c
	return nil
}

// DeleteSession removes a session and its messages.
func (m *Memory) DeleteSession(ctx context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sessions().rows, id)
	delete(m.sessions().msgs, id)
	return nil
}

// AppendMessage adds a message at the end.
func (m *Memory) AppendMessage(ctx context.Context, id string, data []byte) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms := m.sessions().msgs[id]
	seq := int64(len(ms)) + 1
	if len(ms) > 0 {
		seq = ms[len(ms)-1].Seq + 1
	}
	m.sessions().msgs[id] = append(ms, MessageRow{Seq: seq, Data: append([]byte(nil), data...)})
	return seq, nil
}

// AppendMessages adds messages at the end.
func (m *Memory) AppendMessages(ctx context.Context, id string, data [][]byte) (int64, error) {
	var first int64
	for i, d := range data {
		seq, err := m.AppendMessage(ctx, id, d)
		if err != nil {
			return 0, err
		}
		if i == 0 {
			first = seq
		}
	}
	return first, nil
}

// Messages returns a session's messages in order.
func (m *Memory) Messages(ctx context.Context, id string) ([]MessageRow, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]MessageRow(nil), m.sessions().msgs[id]...), nil
}

// ReplaceMessages rewrites a session's messages (and document).
func (m *Memory) ReplaceMessages(ctx context.Context, id string, data [][]byte, row *SessionRow) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ms []MessageRow
	for i, d := range data {
		ms = append(ms, MessageRow{Seq: int64(i + 1), Data: append([]byte(nil), d...)})
	}
	m.sessions().msgs[id] = ms
	if row != nil {
		c := *row
		m.sessions().rows[id] = &c
	}
	return nil
}
