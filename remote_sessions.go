package ckpt

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/redact"
	"github.com/seed1cedbf7c/ckpt/internal/remote"
	"github.com/seed1cedbf7c/ckpt/internal/session"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// remoteSession is a session as a remote with sessions keeps it: its
// document and messages, redacted, with checkpoint ids in the remote's
// terms.
type remoteSession struct {
	ID       string            `json:"id"`
	Updated  time.Time         `json:"updated"`
	Session  json.RawMessage   `json:"session"`
	Messages []json.RawMessage `json:"messages"`
}

// redactMessage removes secrets from a checkpoint message.
func redactMessage(s string) string {
	out, _ := redact.String(s)
	return out
}

// redactJSON redacts a JSON document's strings (and keys), keeping it
// valid JSON. A document that does not decode is redacted as text and
// stored as a JSON string.
func redactJSON(raw []byte) []byte {
	out, _, err := redact.JSON(raw)
	if err != nil {
		text, _ := redact.Bytes(raw)
		out, _ = json.Marshal(string(text))
	}
	return out
}

var hexID = regexp.MustCompile(`[0-9a-f]{64}`)

// mapIDs replaces the checkpoint ids in a JSON document by what m maps
// them to (ids m lacks stay).
func mapIDs(doc []byte, m map[ID]ID) []byte {
	return hexID.ReplaceAllFunc(doc, func(b []byte) []byte {
		id, err := ParseID(string(b))
		if err != nil {
			return b
		}
		if to, ok := m[id]; ok {
			return []byte(to.String())
		}
		return b
	})
}

// sessionRoots returns the checkpoints the store's sessions anchor.
func (r *Repo) sessionRoots(ctx context.Context) ([]ID, error) {
	return session.Roots(ctx, r.sessions(), nil)
}

// pushSessions uploads the store's sessions, redacted, those changed
// since the last push. It runs after the checkpoints they anchor are up.
func (r *Repo) pushSessions(ctx context.Context, rm *remote.Remote, view *pushView) (int, error) {
	tbl := r.sessions()
	rows, err := tbl.SessionList(ctx)
	if err != nil {
		return 0, err
	}
	sent := map[string]string{}
	cache := ""
	if d := r.remoteCacheDir(view.remoteName); d != "" {
		cache = filepath.Join(d, "sessions.json")
		if data, err := os.ReadFile(cache); err == nil {
			json.Unmarshal(data, &sent)
		}
	}
	n := 0
	for _, row := range rows {
		msgs, err := tbl.Messages(ctx, row.ID)
		if err != nil {
			return n, err
		}
		rs := remoteSession{ID: row.ID, Updated: row.Updated, Session: redactJSON(mapIDs(row.Data, view.toRemote))}
		for _, m := range msgs {
			rs.Messages = append(rs.Messages, redactJSON(m.Data))
		}
		doc, err := json.Marshal(rs)
		if err != nil {
			return n, err
		}
		sum := sha256.Sum256(doc)
		if sent[row.ID] == hex.EncodeToString(sum[:]) {
			continue
		}
		if err := rm.PutSession(ctx, row.ID, doc); err != nil {
			return n, err
		}
		sent[row.ID] = hex.EncodeToString(sum[:])
		n++
	}
	if cache != "" && n > 0 {
		data, _ := json.Marshal(sent)
		if err := os.MkdirAll(filepath.Dir(cache), 0o700); err == nil {
			os.WriteFile(cache, data, 0o600)
		}
	}
	return n, nil
}

// remoteSessions reads a remote's sessions and the checkpoints (remote
// ids) they anchor.
func remoteSessions(ctx context.Context, rm *remote.Remote) ([]remoteSession, []ID, error) {
	docs, err := rm.Sessions(ctx)
	if err != nil {
		return nil, nil, err
	}
	var out []remoteSession
	mem := store.NewMemory("")
	for _, d := range docs {
		var rs remoteSession
		if err := json.Unmarshal(d, &rs); err != nil || rs.ID == "" {
			return nil, nil, &remote.CorruptError{Remote: rm.Backend().String(), Key: "sessions/", Detail: "a session document does not decode"}
		}
		if err := mem.PutSession(ctx, &store.SessionRow{ID: rs.ID, Updated: rs.Updated, Data: rs.Session}); err != nil {
			return nil, nil, err
		}
		out = append(out, rs)
	}
	roots, err := session.Roots(ctx, mem, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("a session on the remote does not decode: %w", err)
	}
	return out, roots, nil
}

// pullSessions stores the remote's sessions this store does not have,
// with checkpoint ids in the store's terms. It runs after their
// checkpoints are in.
func (r *Repo) pullSessions(ctx context.Context, sessions []remoteSession, view *pushView) (int, error) {
	tbl := r.sessions()
	n := 0
	for _, rs := range sessions {
		if _, err := tbl.Session(ctx, rs.ID); err == nil {
			continue // ours, or pulled before: kept as it is here
		} else if !errors.Is(err, store.ErrNotFound) {
			return n, err
		}
		msgs := make([][]byte, len(rs.Messages))
		for i, m := range rs.Messages {
			msgs[i] = m
		}
		row := &store.SessionRow{ID: rs.ID, Updated: rs.Updated, Data: mapIDs(rs.Session, view.fromRemote)}
		if err := tbl.ReplaceMessages(ctx, rs.ID, msgs, row); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
