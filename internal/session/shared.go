package session

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/tree"
)

// Sessions side by side: two agents' turns running at the same time in
// one workspace each end with a checkpoint of the whole tree, so each
// turn's span (its start to its end) holds what the other one changed
// meanwhile too. A rewind of one session must not undo the other's work.
// A path a turn's span changed is "shared" when a turn of another session
// that overlapped it in time changed that path too (or a path above or
// below it); a shared path is the turn's only when the turn's own edit
// tools name it and nothing the other turns did could have written it
// (their edit tools do not name it, and they ran no tool whose effects
// are unknown, such as a shell command). Other shared paths stay as they
// are and are reported.

// editTools are the agents' file-writing tools whose recorded message
// content is the path they write.
var editTools = map[string]bool{
	"Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true, // Claude Code
	"write_file": true, "replace": true, // Gemini CLI
}

// readTools change nothing in the workspace.
var readTools = map[string]bool{
	"Read": true, "Glob": true, "Grep": true, "LS": true, "WebFetch": true, "WebSearch": true, "TodoWrite": true,
	"read_file": true, "read_many_files": true, "list_directory": true, "glob": true, "search_file_content": true,
	"google_web_search": true, "web_fetch": true,
}

// recordsTools are the agents whose recorded turns hold their tool calls
// ("" and generic: the caller sends them). Codex's hooks give a turn's
// last reply only.
var recordsTools = map[string]bool{"": true, "claude-code": true, "gemini": true, "generic": true}

// sideCache holds what one rewind plan reads of the sessions for every
// turn it takes back: the other sessions, and each session's messages.
type sideCache struct {
	others []*Session
	msgs   map[string][]*Message
}

// turnTools is what a turn's recorded tool calls say it wrote.
type turnTools struct {
	named   map[string]bool // workspace paths its edit tools name
	unknown bool            // it may have written anything (a shell command, unrecorded tools)
}

// sharedPaths returns, for turn t of session s, the paths its span
// changed that it cannot be shown to have written alone (nil when no
// other session's turn overlapped it).
func (c *Controller[R, S]) sharedPaths(ctx context.Context, ws *Workspace, s *Session, t *Turn, live bool, now time.Time, sc *sideCache) (map[string]bool, error) {
	if sc.others == nil {
		rows, err := c.e.Sessions().SessionList(ctx)
		if err != nil {
			return nil, err
		}
		sc.others = []*Session{}
		for _, row := range rows {
			if row.ID == s.ID {
				continue
			}
			o, err := decode(row)
			if err != nil {
				return nil, err
			}
			sc.others = append(sc.others, o)
		}
	}
	tEnd := t.Ended
	if t.Open() {
		tEnd = now
	}
	others := map[string]bool{} // paths the overlapping turns changed
	theirs := turnTools{named: map[string]bool{}}
	overlap := false
	for _, o := range sc.others {
		for _, ot := range append(append([]*Turn{}, o.Turns...), o.Rewound...) {
			oEnd := ot.Ended
			if ot.Open() && oEnd.IsZero() {
				oEnd = now // in progress (a removed one has its Ended)
			}
			if !ot.Started.Before(tEnd) || !t.Started.Before(oEnd) {
				continue
			}
			if ot.Begin == t.Begin && ot.Started.Equal(t.Started) {
				continue // the same turn, copied by a fork
			}
			overlap = true
			if err := c.spanPaths(ctx, ws, ot, others); err != nil {
				return nil, err
			}
			tt, err := c.toolsOf(ctx, ws, o, ot.N, true, sc)
			if err != nil {
				return nil, err
			}
			theirs.unknown = theirs.unknown || tt.unknown
			for p := range tt.named {
				theirs.named[p] = true
			}
		}
	}
	if !overlap {
		return nil, nil
	}
	mine := turnTools{unknown: true}
	if live {
		var err error
		if mine, err = c.toolsOf(ctx, ws, s, t.N, false, sc); err != nil {
			return nil, err
		}
	}
	shared := map[string]bool{}
	for p := range others {
		if mine.named[p] && !theirs.named[p] && !theirs.unknown {
			continue // the turn's own write
		}
		shared[p] = true
	}
	return shared, nil
}

// spanPaths adds the paths turn t changed, from its start to its end (a
// turn in progress: to the workspace now).
func (c *Controller[R, S]) spanPaths(ctx context.Context, ws *Workspace, t *Turn, into map[string]bool) error {
	for _, part := range t.parts() {
		begin, err := c.e.Tree(ctx, part.Begin)
		if err != nil {
			return err
		}
		end := ws.Tree
		if part.End != nil {
			if end, err = c.e.Tree(ctx, *part.End); err != nil {
				return err
			}
		}
		if err := tree.Diff(ctx, ws.ReadTree, begin, end, nil, func(ch tree.Change) error {
			into[ch.Path] = true
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// toolsOf reads what session s's turn n ran: all its messages with that
// turn number (anyHidden: removed ones too, as for another session's
// turns, where more named paths only keep more), or only the visible
// ones.
func (c *Controller[R, S]) toolsOf(ctx context.Context, ws *Workspace, s *Session, n int, anyHidden bool, sc *sideCache) (turnTools, error) {
	out := turnTools{named: map[string]bool{}}
	msgs, ok := sc.msgs[s.ID]
	if !ok {
		var err error
		if msgs, err = messagesOf(ctx, c.e, s.ID); err != nil {
			return out, err
		}
		if sc.msgs == nil {
			sc.msgs = map[string][]*Message{}
		}
		sc.msgs[s.ID] = msgs
	}
	seen := false
	for _, m := range msgs {
		if m.Turn != n || (!anyHidden && m.Hidden != "") {
			continue
		}
		if m.Role == "assistant" || m.Role == "tool" {
			seen = true
		}
		if m.Role == "system" && strings.HasPrefix(m.Content, "ckpt: ") {
			// ckpt's note of an incomplete record: cut short (the hooks
			// keep at most 200 messages a turn), or a transcript that had
			// not caught up or could not be read.
			out.unknown = true
		}
		if m.Role != "tool" {
			continue
		}
		switch {
		case editTools[m.Tool]:
			// Another session's turn names every path it may have
			// written; this turn's own writes only a path named one way.
			switch ps := toolPaths(ws.Root, m.Content); {
			case len(ps) == 0:
				out.unknown = true
			case anyHidden || len(ps) == 1:
				for _, p := range ps {
					out.named[p] = true
				}
			}
		case readTools[m.Tool]:
		default:
			out.unknown = true
		}
	}
	// A turn with nothing recorded (messages off), or of an agent whose
	// hooks give its last reply but not its tool calls, may have written
	// anything.
	if !seen || !recordsTools[s.Agent] {
		out.unknown = true
	}
	return out, nil
}

// toolPaths turns a path a tool named (absolute, or relative to the
// workspace) into the workspace paths it may name: as written, and with
// the symlinks on the way resolved as they are now (a tool that names a
// file through a symlinked directory, or a symlink to a file, writes the
// file it points to). None: the path is not in the workspace.
func toolPaths(root, p string) []string {
	if p == "" || strings.ContainsRune(p, '\n') {
		return nil
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(root, abs)
	}
	abs = filepath.Clean(abs)
	var out []string
	add := func(base, q string) {
		rel, err := filepath.Rel(base, q)
		if err != nil {
			return
		}
		rel = filepath.ToSlash(rel)
		if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || strings.HasPrefix(rel, "/") {
			return
		}
		if !slices.Contains(out, rel) {
			out = append(out, rel)
		}
	}
	add(root, abs)
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		realRoot = root
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		q := filepath.Join(dir, filepath.Base(abs))
		if fi, err := os.Lstat(q); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			if t, err := filepath.EvalSymlinks(q); err == nil {
				q = t
			}
		}
		add(realRoot, q)
	}
	return out
}

// sharedHit reports whether p, a path above it or one below it is in set
// (above: the directories above set's paths, see [dirsAbove]).
func sharedHit(set, above map[string]bool, p string) bool {
	if len(set) == 0 {
		return false
	}
	if set[p] || above[p] {
		return true
	}
	for q := path.Dir(p); q != "."; q = path.Dir(q) {
		if set[q] {
			return true
		}
	}
	return false
}

// dirsAbove returns the directories above the paths of set, so that
// finding a shared path below another takes one look-up, not a pass over
// the set for every path a rewind changes.
func dirsAbove(set map[string]bool) map[string]bool {
	above := map[string]bool{}
	for p := range set {
		for q := path.Dir(p); q != "." && !above[q]; q = path.Dir(q) {
			above[q] = true
		}
	}
	return above
}
