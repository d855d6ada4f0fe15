package cli

import (
	"fmt"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/hooks"
	"github.com/spf13/cobra"
)

type statusOptions struct {
	json bool
}

func newStatusCmd(e *env) *cobra.Command {
	o := &statusOptions{}
	c := &cobra.Command{
		Use:   "status",
		Short: "Show the workspace, its store, HEAD and unsaved changes",
		Long: `Status shows the workspace, its store and backend, HEAD, the current session,
an interrupted operation awaiting recovery, and the changes since HEAD (A added,
M modified, D deleted) with the paths the scan skipped. With -q it prints only
the change lines, and nothing when the workspace equals HEAD.`,
		Example: `  ckpt status
  ckpt status -q
  ckpt status --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runStatus(e, o) },
	}
	jsonFlag(c, &o.json, "")
	return c
}

func runStatus(e *env, o *statusOptions) error {
	// A hook that could not checkpoint exits 0 for the agent's sake: this
	// is where the user sees it (also when this workspace cannot be
	// opened, which may be why).
	lf, _ := hooks.LastFailure("")
	r, err := e.open(o.json)
	if err != nil {
		printHookFailure(e.stderr, lf, "ckpt: ")
		return err
	}
	s, err := r.Status(e.ctx, true)
	e.doneProgress()
	if err != nil {
		return err
	}
	if ns := e.absent; ns != nil {
		// No store yet: say where the first save puts it.
		s.Store, s.Backend = ns.Store, ns.Backend
	}
	if o.json {
		return e.printJSON(struct {
			*ckpt.Status
			HookFailure *hooks.Failure `json:"hook_failure,omitempty"`
		}{s, lf})
	}
	if e.quiet {
		// Only the changes, one per line, as the full report lists them;
		// nothing for a workspace equal to HEAD.
		for _, c := range s.Changes {
			e.printf("%s %s\n", statusLetter(c.Status), displayPath(c.Path))
		}
		return nil
	}
	defer printHookFailure(e.stdout, lf, "")
	e.printf("workspace: %s\n", s.Workspace)
	if e.absent != nil {
		e.printf("store:     none yet (the first `ckpt save` creates %s)\n", s.Store)
	} else {
		e.printf("store:     %s (%s, %d checkpoint(s))\n", s.Store, ckpt.HumanSize(s.StoreSize), s.Checkpoints)
	}
	if g := s.Git; g != nil {
		e.printf("backend:   git: refs under %s in %s (%d snapshot(s), %d of at most %d timeline)\n",
			g.RefPrefix, g.Repository, g.Snapshots, g.Timeline, g.TimelineMax)
		if g.LastError != "" {
			e.printf("git:       the last ref update failed: %s\n", g.LastError)
		}
	} else {
		e.printf("backend:   %s\n", s.Backend)
	}
	if s.Head == nil {
		e.printf("HEAD:      none (run `ckpt save` to record the first checkpoint)\n")
	} else {
		line := s.Head.Short()
		if s.Branch != "" {
			line += " on " + s.Branch
		}
		line += ", " + fmtTime(s.Head.Time)
		if m := oneLine(s.Head.Message); m != "" {
			line += ": " + m
		}
		e.printf("HEAD:      %s\n", line)
	}
	if ss := s.Session; ss != nil {
		line := fmt.Sprintf("%s (%s), %d turn(s)", ss.ID, ss.Title, ss.Turns)
		if ss.Open > 0 {
			line += fmt.Sprintf(", turn %d in progress", ss.Open)
		}
		e.printf("session:   %s\n", line)
	}
	if s.Pending != "" {
		e.printf("pending:   an interrupted %s (the next command, or `ckpt recover`, finishes it)\n", s.Pending)
	}
	if len(s.Changes) == 0 {
		e.printf("changes:   none\n")
	} else {
		e.printf("changes:   %s since HEAD\n", ckpt.FormatChanges(s.Changes))
		for _, c := range s.Changes {
			e.printf("  %s %s\n", statusLetter(c.Status), displayPath(c.Path))
		}
	}
	for _, sk := range s.Skipped {
		e.printf("skipped:   %s (%s)\n", quotePath(sk.Path), sk.Reason)
	}
	return nil
}
