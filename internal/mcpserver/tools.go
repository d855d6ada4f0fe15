package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/snaptext"
)

// Tool arguments. Fields without omitempty are required.

// SnapshotCreateArgs are snapshot_create's arguments (as the sandbox snapshot tools take them, plus force
// and ttl).
type SnapshotCreateArgs struct {
	Name        string `json:"name" jsonschema:"the snapshot's name; must match ^[A-Za-z0-9_][A-Za-z0-9_.-]*$ (e.g. before-refactor)"`
	Description string `json:"description,omitempty" jsonschema:"what state this is (e.g. tests pass); stored as the snapshot's message"`
	Force       bool   `json:"force,omitempty" jsonschema:"replace an existing snapshot of the same name (otherwise reusing a name is an error)"`
	TTL         string `json:"ttl,omitempty" jsonschema:"lifetime such as 90m, 24h or 7d after which the snapshot expires; 0 means forever; default: the store's snapshot_ttl"`
}

// NameArgs name a snapshot.
type NameArgs struct {
	Name string `json:"name" jsonschema:"the snapshot's name, as snapshot_list shows it"`
}

// NoArgs is the input of tools without parameters.
type NoArgs struct{}

// CheckpointListArgs are checkpoint_list's arguments.
type CheckpointListArgs struct {
	Limit int    `json:"limit,omitempty" jsonschema:"show at most this many checkpoints (default 20; 0 or less: 20)"`
	Kind  string `json:"kind,omitempty" jsonschema:"only checkpoints of this kind: manual, turn, run, pre-restore, edit or restore"`
}

// CheckpointDiffArgs are checkpoint_diff's arguments.
type CheckpointDiffArgs struct {
	From  string   `json:"from,omitempty" jsonschema:"old side: a revision (checkpoint id or unique prefix, HEAD, HEAD~N, or a snapshot, tag or branch name); default HEAD"`
	To    string   `json:"to,omitempty" jsonschema:"new side: a revision; default the current files"`
	Paths []string `json:"paths,omitempty" jsonschema:"only these workspace-relative paths (files or directories)"`
}

// CheckpointRestoreArgs are checkpoint_restore's arguments.
type CheckpointRestoreArgs struct {
	Rev   string   `json:"rev" jsonschema:"the revision to restore: a checkpoint id or unique prefix, HEAD~N, or a snapshot, tag or branch name"`
	Paths []string `json:"paths,omitempty" jsonschema:"restore only these workspace-relative paths (default: the whole workspace)"`
}

// SessionArgs name a session.
type SessionArgs struct {
	Session string `json:"session,omitempty" jsonschema:"the session id or a unique prefix; default: the most recently active session"`
}

// SessionRewindArgs are session_rewind's arguments.
type SessionRewindArgs struct {
	Session       string `json:"session,omitempty" jsonschema:"the session id or a unique prefix; default: the most recently active session"`
	Turn          int    `json:"turn" jsonschema:"the turn to go back to the start of, numbered from 1 as session_turns lists them"`
	Scope         string `json:"scope,omitempty" jsonschema:"code (the files; default), conversation (the recorded messages) or both"`
	Exact         bool   `json:"exact,omitempty" jsonschema:"code: make the whole tree what it was when the turn began, edits made between turns included (default: undo only what the turns changed and keep those edits)"`
	KeepUserEdits *bool  `json:"keep_user_edits,omitempty" jsonschema:"the default, kept for older clients: true keeps edits made between turns, false is exact"`
	DryRun        bool   `json:"dry_run,omitempty" jsonschema:"only report what would change"`
}

const defaultListLimit = 20

// WriteTools are the tools that change the workspace or the store (every
// tool not annotated read-only); a read-only server removes them.
var WriteTools = []string{
	"snapshot_create", "snapshot_restore", "snapshot_delete",
	"checkpoint_restore", "undo", "redo", "session_rewind",
}

func (s *Server) addTools() {
	destructive, notDestructive := true, false
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true}

	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "snapshot_create",
		Title: "Create a named snapshot",
		Description: `Record the current state of the whole workspace (every file that is not ignored) under a name. ` +
			`Use it before a risky or large change — a refactor, a migration, a mass edit — so that snapshot_restore can roll back if tests get worse. ` +
			`The user's git HEAD, branches, index and stash are not touched. ` +
			`Responds "snapshot NAME created: <id>". Reusing an existing name is an error unless force is true.`,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &notDestructive, IdempotentHint: false},
	}, handler(s, snapshotCreate))

	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "snapshot_list",
		Title: "List snapshots",
		Description: `List the named snapshots, newest first: one tab-separated row per snapshot with its name, short id, time (UTC) and description, ` +
			`or "no snapshots". Use it to find the name to restore or compare.`,
		Annotations: readOnly,
	}, handler(s, snapshotList))

	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "snapshot_restore",
		Title: "Restore a named snapshot",
		Description: `Put the whole workspace back to a named snapshot: changed files are rewritten, files created since are deleted and emptied directories removed; ignored files are left alone. ` +
			`Use it when a change made things worse. The state before is saved first, so undo takes the restore back. ` +
			`Responds "restored snapshot NAME (N file(s) changed):" and the paths. An unknown name changes nothing.`,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &destructive, IdempotentHint: true},
	}, handler(s, snapshotRestore))

	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "snapshot_diff",
		Title: "Diff a snapshot against the current files",
		Description: `Show what changed since a named snapshot as a git-style unified diff: "-" lines are the snapshot, "+" lines the current files. ` +
			`Responds "no differences" when the workspace equals the snapshot. Use it to review your work before keeping or rolling back.`,
		Annotations: readOnly,
	}, handler(s, snapshotDiff))

	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        "snapshot_delete",
		Title:       "Delete a named snapshot",
		Description: `Delete a named snapshot you no longer need (the files in the workspace are not touched). Responds "snapshot NAME deleted".`,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &destructive, IdempotentHint: false},
	}, handler(s, snapshotDelete))

	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "checkpoint_list",
		Title: "List checkpoints",
		Description: `List the workspace's checkpoints, newest first: saves, snapshots, and the ones taken automatically before every restore. ` +
			`One tab-separated row each: short id, time (UTC), kind, +added ~modified -deleted, names (HEAD, a branch as main, tag: v1, snapshot: s1), message. ` +
			`Use it to find a state to diff against or restore when no snapshot was named.`,
		Annotations: readOnly,
	}, handler(s, checkpointList))

	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "checkpoint_diff",
		Title: "Diff checkpoints",
		Description: `Show a git-style unified diff between two checkpoints, or between a checkpoint (default HEAD, the last one) and the current files. ` +
			`Responds "no differences" when they are equal. Use it to see exactly what a turn or a command changed.`,
		Annotations: readOnly,
	}, handler(s, checkpointDiff))

	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "checkpoint_restore",
		Title: "Restore a checkpoint",
		Description: `Make the workspace (or only some paths) equal to any checkpoint: an id from checkpoint_list, HEAD~1, or a snapshot name. ` +
			`Unsaved work is saved first, so undo takes the restore back. Every written file is hash-verified.`,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &destructive, IdempotentHint: true},
	}, handler(s, checkpointRestore))

	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "undo",
		Title: "Undo the last save or restore",
		Description: `Step the timeline back: restore the state before the last save or restore (a snapshot restore included). ` +
			`Unsaved changes are saved first so that redo brings them back.`,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &destructive},
	}, handler(s, undo))

	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "session_turns",
		Title: "List a session's turns",
		Description: `List the turns of the current session (or the one named): number, time (UTC), files changed (+added ~modified -deleted) and prompt, one tab-separated row each, oldest first. ` +
			`Each turn is anchored to the whole-workspace checkpoint taken when it began (shell side effects included). Use it to find the turn to rewind to.`,
		Annotations: readOnly,
	}, handler(s, sessionTurns))

	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "session_rewind",
		Title: "Rewind a session to the start of a turn",
		Description: `Take the session back to the start of a turn: scope code puts the workspace's files back as they were when the turn began (everything the turns from it on changed, shell commands included, while edits made between turns are kept: three-way merged, conflicts keep the user's side; exact puts back the whole tree instead), ` +
			`conversation hides the recorded messages from that turn's prompt on and returns the prompt, both does both. ` +
			`The state before is saved, so undo takes a code rewind back. Use dry_run first to see what would change.`,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &destructive},
	}, handler(s, sessionRewind))

	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        "redo",
		Title:       "Redo what undo took back",
		Description: `Step the timeline forward again after undo.`,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &destructive},
	}, handler(s, redo))
}

func snapshotCreate(ctx context.Context, r *ckpt.Repo, in SnapshotCreateArgs) (string, error) {
	opts := ckpt.SnapshotOptions{Description: in.Description, Force: in.Force}
	if in.TTL != "" {
		d, err := ckpt.ParseDuration(in.TTL)
		if err != nil {
			return "", fmt.Errorf("ttl: %w", err)
		}
		opts.TTL = d
		if d == 0 {
			opts.TTL = ckpt.NoExpiry
		}
	}
	snap, err := r.SnapshotCreate(ctx, in.Name, opts)
	if err != nil {
		return "", err
	}
	return snaptext.Created(snap), nil
}

func snapshotList(ctx context.Context, r *ckpt.Repo, _ NoArgs) (string, error) {
	snaps, err := r.Snapshots(ctx)
	if err != nil {
		return "", err
	}
	return snaptext.List(snaps), nil
}

func snapshotRestore(ctx context.Context, r *ckpt.Repo, in NameArgs) (string, error) {
	res, err := r.SnapshotRestore(ctx, in.Name)
	if err != nil {
		return "", err
	}
	return snaptext.Restored(in.Name, res), nil
}

func snapshotDiff(ctx context.Context, r *ckpt.Repo, in NameArgs) (string, error) {
	d, err := r.SnapshotDiff(ctx, in.Name)
	if err != nil {
		return "", err
	}
	return snaptext.Diff(ctx, d)
}

func snapshotDelete(ctx context.Context, r *ckpt.Repo, in NameArgs) (string, error) {
	if _, err := r.SnapshotDelete(ctx, in.Name); err != nil {
		return "", err
	}
	return snaptext.Deleted(in.Name), nil
}

func checkpointList(ctx context.Context, r *ckpt.Repo, in CheckpointListArgs) (string, error) {
	limit := in.Limit
	if limit <= 0 {
		limit = defaultListLimit
	}
	cps, err := r.List(ctx, ckpt.ListOptions{Limit: limit, Kind: in.Kind})
	if err != nil {
		return "", err
	}
	if len(cps) == 0 {
		return "no checkpoints", nil
	}
	var b strings.Builder
	for i, c := range cps {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\t%s", c.Short(), shortTime(c.Time), c.Kind,
			ckpt.FormatCounts(c.Stats.Added, c.Stats.Modified, c.Stats.Deleted), strings.Join(c.Labels(), ", "), oneLine(c.Message))
	}
	return b.String(), nil
}

func checkpointDiff(ctx context.Context, r *ckpt.Repo, in CheckpointDiffArgs) (string, error) {
	d, err := r.Diff(ctx, ckpt.DiffOptions{From: in.From, To: in.To, Paths: in.Paths})
	if err != nil {
		return "", err
	}
	if len(d.Files) == 0 {
		return "no differences", nil
	}
	var b strings.Builder
	if err := d.WritePatch(ctx, &b); err != nil {
		return "", err
	}
	return b.String(), nil
}

func checkpointRestore(ctx context.Context, r *ckpt.Repo, in CheckpointRestoreArgs) (string, error) {
	res, err := r.Restore(ctx, in.Rev, ckpt.RestoreOptions{Paths: in.Paths})
	if err != nil {
		return "", err
	}
	return restoreText(fmt.Sprintf("restored %s", res.Target.Short()), res), nil
}

func undo(ctx context.Context, r *ckpt.Repo, _ NoArgs) (string, error) {
	res, err := r.Undo(ctx)
	if err != nil {
		return "", err
	}
	return restoreText("undo: now at "+res.Head.Short(), res), nil
}

func redo(ctx context.Context, r *ckpt.Repo, _ NoArgs) (string, error) {
	res, err := r.Redo(ctx)
	if err != nil {
		return "", err
	}
	return restoreText("redo: now at "+res.Head.Short(), res), nil
}

// restoreText is "HEADLINE (N file(s) changed):", the changed paths, the
// paths left alone with why, and a note when unsaved work was saved first.
func restoreText(headline string, res *ckpt.RestoreResult) string {
	changed := res.Changed()
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%d file(s) changed):", headline, len(changed))
	for _, p := range changed {
		b.WriteString("\n" + ckpt.QuotePath(string(p)))
	}
	for _, a := range res.Actions {
		if a.Op == "keep" {
			fmt.Fprintf(&b, "\nkept %s (%s)", ckpt.QuotePath(string(a.Path)), a.Reason)
		}
	}
	if res.PreRestore != nil {
		fmt.Fprintf(&b, "\nunsaved changes were saved first as %s; undo brings them back", res.PreRestore.Short())
	}
	return b.String()
}

func sessionTurns(ctx context.Context, r *ckpt.Repo, in SessionArgs) (string, error) {
	c, _, err := r.Controller(ctx, ckpt.ControllerOptions{ID: in.Session})
	if err != nil {
		return "", err
	}
	turns, err := c.Checkpoints(ctx)
	if err != nil {
		return "", err
	}
	if len(turns) == 0 {
		return "session " + c.ID() + " has no turns yet", nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "session %s", c.ID())
	for _, t := range turns {
		state := ckpt.FormatTurnFiles(t.Files)
		if t.Open {
			state += " (in progress)"
		}
		fmt.Fprintf(&b, "\n%d\t%s\t%s\t%s", t.N, shortTime(t.Time), state, oneLine(t.Prompt))
	}
	return b.String(), nil
}

func sessionRewind(ctx context.Context, r *ckpt.Repo, in SessionRewindArgs) (string, error) {
	c, _, err := r.Controller(ctx, ckpt.ControllerOptions{ID: in.Session})
	if err != nil {
		return "", err
	}
	scope := ckpt.Scope(in.Scope)
	if scope == "" {
		scope = ckpt.ScopeCode
	}
	exact := in.Exact
	if in.KeepUserEdits != nil {
		if *in.KeepUserEdits && exact {
			return "", fmt.Errorf("session_rewind: exact and keep_user_edits contradict each other; pass one")
		}
		exact = exact || !*in.KeepUserEdits
	}
	res, err := c.Rewind(ctx, in.Turn, scope, ckpt.RewindOptions{Exact: exact, DryRun: in.DryRun})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	verb := "rewound"
	if res.DryRun {
		verb = "would rewind"
	}
	if res.Restore != nil {
		b.WriteString(restoreText(fmt.Sprintf("%s code to the start of turn %d", verb, res.Turn), res.Restore))
		if len(res.Conflicts) > 0 {
			var ps []string
			for _, p := range res.Conflicts {
				ps = append(ps, ckpt.QuotePath(string(p)))
			}
			fmt.Fprintf(&b, "\nconflicts (the user's side kept): %s", strings.Join(ps, ", "))
		}
		if len(res.Shared) > 0 {
			var ps []string
			for _, p := range res.Shared {
				ps = append(ps, ckpt.QuotePath(string(p)))
			}
			fmt.Fprintf(&b, "\nkept (another session's turn, running at the same time, changed them too): %s", strings.Join(ps, ", "))
		}
	}
	if res.Scope != ckpt.ScopeCode {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s the conversation to before turn %d (%d message(s), %d turn(s) removed); its prompt:\n%s", verb, res.Turn, res.Messages, res.Turns, res.Prompt)
	}
	return b.String(), nil
}
