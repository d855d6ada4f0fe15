package ckpt

import (
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/diff"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/scan"
	"github.com/seed1cedbf7c/ckpt/internal/session"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// Stats are the counts recorded with a checkpoint: files added, modified and
// deleted against its parent, and the number and total size of its files.
type Stats = store.Stats

// Skipped is a path a scan saw but did not capture (a FIFO, socket or
// device, or a file over the size limit). Restores never touch it.
type Skipped = scan.Skipped

// Checkpoint describes one stored checkpoint.
type Checkpoint struct {
	ID      ID                `json:"id"`
	Time    time.Time         `json:"time"`
	Kind    string            `json:"kind"`
	Message string            `json:"message"`
	Branch  string            `json:"branch,omitempty"`
	Author  string            `json:"author,omitempty"`
	Parents []ID              `json:"parents"`
	Tree    ID                `json:"tree"`
	Paths   []Path            `json:"paths,omitempty"`
	Meta    map[string]string `json:"meta,omitempty"`
	// Names are the refs pointing at it: "HEAD", snapshot, tag and branch
	// names as "snapshots/x", "tags/x", "branches/x".
	Names []string `json:"names"`
	Stats Stats    `json:"stats"`
}

// Short returns the 12-hex short id.
func (c *Checkpoint) Short() string { return c.ID.Short() }

// Labels names the refs pointing at c the way a person types them, in the
// order listings show them: "HEAD" first, then each name as RefLabel
// gives it. The CLI and the MCP server name refs this way; Names keeps
// the qualified form for programs.
func (c *Checkpoint) Labels() []string {
	var head, rest []string
	for _, n := range c.Names {
		if n == "HEAD" {
			head = append(head, n)
		} else if l := RefLabel(n); l != "" {
			rest = append(rest, l)
		}
	}
	return append(head, rest...)
}

// RefLabel names a qualified ref the way a person types it: a branch as
// "main", "tag: v1", "snapshot: before-refactor", a remote's branch as
// "origin/main". It returns "" for a name it does not know and for a
// remote's other refs, which listings leave out as git does.
func RefLabel(name string) string {
	switch {
	case name == "HEAD":
		return name
	case strings.HasPrefix(name, branchPrefix):
		return strings.TrimPrefix(name, branchPrefix)
	case strings.HasPrefix(name, tagPrefix):
		return "tag: " + strings.TrimPrefix(name, tagPrefix)
	case strings.HasPrefix(name, snapshotPrefix):
		return "snapshot: " + strings.TrimPrefix(name, snapshotPrefix)
	case strings.HasPrefix(name, "remotes/"):
		remote, ref, ok := strings.Cut(strings.TrimPrefix(name, "remotes/"), "/")
		if !ok || remote == "" {
			return ""
		}
		if strings.HasPrefix(ref, branchPrefix) {
			return remote + "/" + strings.TrimPrefix(ref, branchPrefix)
		}
	}
	return ""
}

// Partial reports whether the checkpoint covers only some paths.
func (c *Checkpoint) Partial() bool { return len(c.Paths) > 0 }

// Path is a workspace-relative, slash-separated path, written in JSON as
// itself or, when it is not valid UTF-8 or begins with a double quote, in
// git's C-quoted form (see [EncodePath]), so every name round-trips.
type Path = object.Path

// EncodePath returns the text form of a path used in JSON (see [Path]).
func EncodePath(p string) string { return object.EncodePath(p) }

// ReservedName reports whether name (one component of a path) is one of
// the directories ckpt never checkpoints: .git, .ckpt and .decree, in any
// letter case.
func ReservedName(name string) bool { return object.Reserved(name) }

// DecodePath inverts [EncodePath].
func DecodePath(s string) (string, error) { return diff.UnquotePath(s) }

func toPaths(ps []string) []Path {
	out := make([]Path, len(ps))
	for i, p := range ps {
		out[i] = Path(p)
	}
	return out
}

// EventKind names an [Event].
type EventKind string

// Event kinds.
const (
	EventCheckpoint      EventKind = "checkpoint"            // a checkpoint was created
	EventRestored        EventKind = "restored"              // the workspace was restored
	EventUndone          EventKind = "undone"                // undo moved the timeline back
	EventRedone          EventKind = "redone"                // redo moved it forward
	EventRecovered       EventKind = "recovered"             // an interrupted operation was finished
	EventSwitched        EventKind = "switched"              // HEAD moved to another branch
	EventBranch          EventKind = "branch"                // a branch was created or deleted
	EventTag             EventKind = "tag"                   // a tag was created, moved or deleted
	EventGC              EventKind = "gc"                    // gc removed checkpoints and objects
	EventCleared         EventKind = "cleared"               // the workspace's history was removed
	EventSnapshotCreated EventKind = "snapshot-created"      // a named snapshot was created (or replaced)
	EventSnapshotDeleted EventKind = "snapshot-deleted"      // a named snapshot was deleted, or expired
	EventTurnBegan       EventKind = session.EventTurnBegan  // a session's turn began (checkpoint taken)
	EventTurnEnded       EventKind = session.EventTurnEnded  // a session's turn ended
	EventMessage         EventKind = session.EventMessage    // a message was added to a session
	EventRewound         EventKind = session.EventRewound    // a session was rewound (code, conversation or both)
	EventForked          EventKind = session.EventForked     // a session was forked from a turn
	EventSummarized      EventKind = session.EventSummarized // a session's turns were summarized
)

// Event is something that happened to a workspace, delivered to
// subscribers (see [Repo.Subscribe]).
type Event struct {
	Kind EventKind `json:"kind"`
	Time time.Time `json:"time"`
	// Checkpoint is absent from JSON for events without one (gc, cleared).
	Checkpoint ID `json:"checkpoint,omitzero"`
	// Kind of checkpoint for EventCheckpoint.
	CheckpointKind string `json:"checkpoint_kind,omitempty"`
	// Paths written or deleted (restores), or changed (checkpoints).
	Paths   []Path `json:"paths,omitempty"`
	Message string `json:"message,omitempty"`
	// Name is the snapshot's name for snapshot events.
	Name string `json:"name,omitempty"`
	// Session and Turn identify the session and turn of session events.
	Session string `json:"session,omitempty"`
	Turn    int    `json:"turn,omitempty"`
}

// Subscribe registers fn to receive events, in order, from this Repo's
// operations. It returns a function that removes the subscription. fn runs
// on the goroutine of the operation and must not block.
func (r *Repo) Subscribe(fn func(Event)) (cancel func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := r.next
	r.next++
	r.subs[id] = fn
	return func() {
		r.mu.Lock()
		delete(r.subs, id)
		r.mu.Unlock()
	}
}

func (r *Repo) emit(e Event) {
	if e.Time.IsZero() {
		e.Time = r.now()
	}
	r.mu.Lock()
	fns := make([]func(Event), 0, len(r.subs))
	for _, fn := range r.subs {
		fns = append(fns, fn)
	}
	r.mu.Unlock()
	for _, fn := range fns {
		fn(e)
	}
}

func (r *Repo) progress(p Progress) {
	if r.opts.Progress != nil {
		r.opts.Progress(p)
	}
}

// QuotePath returns p as git shows paths in diffs: unchanged when it is
// printable ASCII without quotes or backslashes, otherwise C-quoted.
func QuotePath(p string) string { return diff.QuotePath(p) }

// Sum returns the SHA-256 id of data (a blob's id is the hash of its content).
func Sum(data []byte) ID { return object.Sum(data) }

// refLabelOr is RefLabel, or name itself when RefLabel does not know it.
func refLabelOr(name string) string {
	if l := RefLabel(name); l != "" {
		return l
	}
	return name
}
