package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/snaptext"
	"github.com/spf13/cobra"
)

// The snapshot commands print the sandbox snapshot tools' responses byte for byte; the text
// comes from the engine's Format functions, which the MCP tools use too.

func newSnapshotCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "snapshot",
		Short: "Named snapshots of the workspace (create, list, restore, diff, delete)",
		Long: `A snapshot is a named checkpoint of the whole workspace: record one before a
risky change, and restore it if the change goes wrong. Snapshots live in the
store, never in your git repository, so they do not touch HEAD, branches, the
index or the stash.

Names match ` + ckpt.SnapshotNameRule + ` (no empty names, dotfiles,
slashes, whitespace or leading hyphens; no "..", trailing "." or ".lock"
either, so a name is always a valid git ref), and must not read as a
revision: not HEAD, not 4 to 64 hex digits (cafe, 2024: a checkpoint id).
A snapshot name is also a revision: 'ckpt diff NAME', 'ckpt restore NAME
-- PATH' and 'ckpt show NAME' work.

A snapshot may have a lifetime (--ttl, or the store's default, 'ckpt config
snapshot_ttl 7d'). An expired snapshot is hidden from 'snapshot list' (the
--json list shows it, with "expired": true) and deleted by the next 'ckpt gc';
until then it can still be restored.`,
		Example: `  ckpt snapshot create before-refactor --description "tests green"
  ckpt snapshot list
  ckpt snapshot diff before-refactor
  ckpt snapshot restore before-refactor
  ckpt snapshot delete before-refactor`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdUsageError(cmd, errors.New("snapshot needs a subcommand: create, list, restore, diff or delete"), "")
		},
	}
	c.AddCommand(newSnapshotCreateCmd(e), newSnapshotListCmd(e), newSnapshotRestoreCmd(e),
		newSnapshotDiffCmd(e), newSnapshotDeleteCmd(e))
	for _, sub := range c.Commands() {
		if sub.Name() != "list" {
			sub.SetFlagErrorFunc(nameFlagError)
		}
	}
	return c
}

// nameFlagError explains an unknown flag that may be a name: "-x" is read
// as a flag, and no snapshot name may begin with "-" anyway.
func nameFlagError(c *cobra.Command, err error) error {
	return cmdUsageError(c, err, `snapshot names cannot begin with "-" (they match `+ckpt.SnapshotNameRule+`)`)
}

// hintError attaches a hint (printed as "ckpt: hint: ...") to an error.
type hintError struct {
	err  error
	hint string
}

func (h *hintError) Error() string { return h.err.Error() }
func (h *hintError) Unwrap() error { return h.err }
func (h *hintError) Hint() string  { return h.hint }

// snapshotErr makes an invalid name a usage error (exit status 2).
func snapshotErr(err error) error {
	if errors.Is(err, ckpt.ErrInvalidSnapshotName) {
		return &usageError{err: err}
	}
	return err
}

// println writes a response, ending it with a newline if it has none.
func (e *env) println(s string) {
	if strings.HasSuffix(s, "\n") {
		fmt.Fprint(e.stdout, s)
		return
	}
	fmt.Fprintln(e.stdout, s)
}

type snapshotCreateOptions struct {
	description string
	force       bool
	ttl         string
	json        bool
}

func newSnapshotCreateCmd(e *env) *cobra.Command {
	o := &snapshotCreateOptions{}
	c := &cobra.Command{
		Use:   "create NAME",
		Short: "Record the whole workspace as a named snapshot",
		Long: `Create records the whole workspace (ignored files excepted) as a new
checkpoint named NAME and prints

  snapshot NAME created: <checkpoint id>

(on the git backend the id is the git commit's, 40 hex digits, as the sandbox snapshot tools
printed it: git show takes it; ckpt commands take the NAME).

The description is stored as the checkpoint's message. Reusing the name of an
existing snapshot is an error unless --force, which moves the name to the new
checkpoint (the old one stays in the store until gc).

--ttl gives the snapshot a lifetime (90m, 24h, 30d, 2w); without it the
store's default applies ('ckpt config snapshot_ttl'), and --ttl 0 means
forever whatever the default. To pass a name that begins with "-" (which
is rejected), put it after "--".`,
		Example: `  ckpt snapshot create s1
  ckpt snapshot create before-refactor --description "all tests pass"
  ckpt snapshot create nightly --force --ttl 7d
  ckpt snapshot create s1 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSnapshotCreate(e, o, args[0], cmd.Flags().Changed("ttl"))
		},
	}
	c.Flags().StringVarP(&o.description, "description", "d", "", "what the snapshot is for (stored as its message)")
	c.Flags().BoolVar(&o.force, "force", false, "replace an existing snapshot of the same name")
	c.Flags().StringVar(&o.ttl, "ttl", "", "lifetime `DURATION` (90m, 24h, 30d; 0: forever; default: the store's snapshot_ttl)")
	jsonFlag(c, &o.json, "print the snapshot as JSON")
	return c
}

func runSnapshotCreate(e *env, o *snapshotCreateOptions, name string, ttlSet bool) error {
	opts := ckpt.SnapshotOptions{Description: o.description, Force: o.force}
	if ttlSet {
		d, err := ckpt.ParseDuration(o.ttl)
		if err != nil {
			return usagef("--ttl: %v", err)
		}
		opts.TTL = d
		if d == 0 {
			opts.TTL = ckpt.NoExpiry
		}
	}
	if err := ckpt.ValidSnapshotName(name); err != nil {
		return snapshotErr(fmt.Errorf("snapshot create: %w", err))
	}
	s, err := withRepo(e, o.json, func(r *ckpt.Repo, ctx context.Context) (*ckpt.Snapshot, error) {
		return r.SnapshotCreate(ctx, name, opts)
	})
	if err != nil {
		return snapshotErr(err)
	}
	return e.result(o.json, s, s.Checkpoint.String(), func() {
		e.println(snaptext.Created(s))
		if !s.Expires.IsZero() {
			e.warnf("snapshot %s expires at %s (then ckpt gc deletes it)", name, s.Expires.Format(ckpt.SnapshotTimeLayout))
		}
	})
}

type snapshotListOptions struct{ json bool }

func newSnapshotListCmd(e *env) *cobra.Command {
	o := &snapshotListOptions{}
	c := &cobra.Command{
		Use:   "list",
		Short: "List snapshots, newest first",
		Long: `List prints one tab-separated row per snapshot, newest first:

  name  12-hex checkpoint id  time (UTC, 2026-04-23T12:30:00+00:00)  description

or "no snapshots". Expired snapshots are not listed (a note on stderr counts
them); --json lists every snapshot with its "expires" time (absent: never)
and "expired".`,
		Example: `  ckpt snapshot list
  ckpt snapshot list --json
  ckpt snapshot list | cut -f1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runSnapshotList(e, o) },
	}
	jsonFlag(c, &o.json, "print JSON (fields: name, checkpoint, time, description, expires, expired)")
	return c
}

func runSnapshotList(e *env, o *snapshotListOptions) error {
	snaps, err := withRepo(e, o.json, (*ckpt.Repo).Snapshots)
	if err != nil {
		return err
	}
	if o.json {
		return e.printJSON(snaps)
	}
	if e.quiet {
		for _, s := range snaps {
			if !s.Expired {
				e.printf("%s\n", s.Name)
			}
		}
		return nil
	}
	e.println(snaptext.List(snaps))
	expired := 0
	for _, s := range snaps {
		if s.Expired {
			expired++
		}
	}
	if expired > 0 {
		e.warnf("%d expired snapshot(s) not shown (snapshot list --json shows them; ckpt gc deletes them)", expired)
	}
	return nil
}

type snapshotNameOptions struct{ json bool }

func newSnapshotRestoreCmd(e *env) *cobra.Command {
	o := &snapshotNameOptions{}
	c := &cobra.Command{
		Use:   "restore NAME",
		Short: "Make the workspace equal to a snapshot (verified, undoable)",
		Long: `Restore makes the workspace equal to snapshot NAME and prints

  restored snapshot NAME (N file(s) changed):

and then each path it wrote or deleted. Files the snapshot does not have are
deleted and the directories they leave empty removed; ignored files are never
touched. Unsaved work is checkpointed first, so 'ckpt undo' brings it back.
Every written path is hash-verified (exit status 3 if one does not match).
An unknown NAME is an error that changes nothing.`,
		Example: `  ckpt snapshot restore before-refactor
  ckpt snapshot restore s1 && ckpt undo   # try it, then take it back`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runSnapshotRestore(e, o, args[0]) },
	}
	jsonFlag(c, &o.json, "print the result as JSON")
	return c
}

func runSnapshotRestore(e *env, o *snapshotNameOptions, name string) error {
	if err := ckpt.MatchSnapshotName(name); err != nil {
		return snapshotErr(fmt.Errorf("snapshot restore: %w", err))
	}
	res, err := withRepo(e, o.json, func(r *ckpt.Repo, ctx context.Context) (*ckpt.RestoreResult, error) {
		return r.SnapshotRestore(ctx, name)
	})
	if err != nil {
		return snapshotErr(err)
	}
	v := struct {
		Snapshot string `json:"snapshot"`
		*ckpt.RestoreResult
	}{name, res}
	return e.result(o.json, v, "", func() {
		e.println(snaptext.Restored(name, res))
		for _, a := range res.Actions {
			if a.Op == "keep" {
				e.warnf("kept %s (%s)", displayPath(a.Path), a.Reason)
			}
		}
		if res.PreRestore != nil {
			e.warnf("unsaved changes were checkpointed first as %s (ckpt undo brings them back)", res.PreRestore.Short())
		}
	})
}

func newSnapshotDiffCmd(e *env) *cobra.Command {
	o := &snapshotNameOptions{}
	c := &cobra.Command{
		Use:   "diff NAME",
		Short: "Show how the working tree differs from a snapshot",
		Long: `Diff prints a git-style unified diff from snapshot NAME to the working tree:
"-" lines are the snapshot, "+" lines the current files. With no
differences it prints "no differences". The patch is the one 'ckpt diff NAME'
prints, as 'git diff --binary' writes it: it applies with git apply (-R to
reverse), binary files included, and with patch -p1 when it has none.`,
		Example: `  ckpt snapshot diff before-refactor
  ckpt snapshot diff s1 | git apply -R    # drop the changes since s1
  ckpt snapshot diff s1 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runSnapshotDiff(e, o, args[0]) },
	}
	jsonFlag(c, &o.json, "print the changed files as JSON")
	return c
}

func runSnapshotDiff(e *env, o *snapshotNameOptions, name string) error {
	if err := ckpt.MatchSnapshotName(name); err != nil {
		return snapshotErr(fmt.Errorf("snapshot diff: %w", err))
	}
	d, err := withRepo(e, o.json, func(r *ckpt.Repo, ctx context.Context) (*ckpt.DiffResult, error) {
		return r.SnapshotDiff(ctx, name)
	})
	if err != nil {
		return snapshotErr(err)
	}
	if o.json {
		return e.printJSON(struct {
			Snapshot string            `json:"snapshot"`
			From     *ckpt.Checkpoint  `json:"from"`
			Changes  []ckpt.FileChange `json:"changes"`
		}{name, d.From, d.Changes()})
	}
	text, err := snaptext.Diff(e.ctx, d)
	if err != nil {
		return err
	}
	e.println(text)
	return nil
}

func newSnapshotDeleteCmd(e *env) *cobra.Command {
	o := &snapshotNameOptions{}
	c := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a snapshot",
		Long: `Delete removes snapshot NAME and prints "snapshot NAME deleted". Its checkpoint
stays in the store (and in 'ckpt list') until gc finds nothing else using it,
so 'ckpt restore ID' still works until then. An unknown NAME is an error.`,
		Example: `  ckpt snapshot delete s1
  ckpt snapshot delete s1 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runSnapshotDelete(e, o, args[0]) },
	}
	jsonFlag(c, &o.json, "print the deleted snapshot as JSON")
	return c
}

func runSnapshotDelete(e *env, o *snapshotNameOptions, name string) error {
	if err := ckpt.MatchSnapshotName(name); err != nil {
		return snapshotErr(fmt.Errorf("snapshot delete: %w", err))
	}
	s, err := withRepo(e, o.json, func(r *ckpt.Repo, ctx context.Context) (*ckpt.Snapshot, error) {
		return r.SnapshotDelete(ctx, name)
	})
	if err != nil {
		return snapshotErr(err)
	}
	return e.result(o.json, s, "", func() { e.println(snaptext.Deleted(name)) })
}
