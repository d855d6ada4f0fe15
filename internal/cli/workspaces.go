package cli

import (
	"fmt"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

func newWorkspacesCmd(e *env) *cobra.Command {
	var asJSON, prune, dryRun bool
	c := &cobra.Command{
		Use:   "workspaces [--prune]",
		Short: "List every workspace with a store, its size, and whether it still exists",
		Long: `Workspaces lists the stores under the state directory ($XDG_STATE_HOME/ckpt,
or ~/.local/state/ckpt): each workspace, its store's size, and whether the
workspace directory still exists ("exists"), is provably gone ("gone"), or
cannot be checked ("unknown", with the reason on stderr). --prune removes
the stores of workspaces that are provably gone: the directory does not
exist, and its parent exists, can be read and is on the file system the
workspace was on. The store of a workspace ckpt cannot stat (permission
denied) or that may be on a disk that is not mounted is kept, and --prune
says why.`,
		Example: "  ckpt workspaces\n  ckpt workspaces --prune --dry-run\n  ckpt workspaces --prune\n  ckpt workspaces --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dryRun && !prune {
				return usagef("--dry-run goes with --prune")
			}
			if prune {
				gone, kept, err := ckpt.PruneWorkspaces(e.ctx, ckpt.PruneOptions{DryRun: dryRun})
				verb := "removed"
				if dryRun {
					verb = "would remove"
				}
				if !asJSON {
					for _, w := range gone {
						e.sayf("%s store of %s (%s)\n", verb, w.Workspace, ckpt.HumanSize(w.Size))
					}
					for _, w := range kept {
						e.warnf("kept the store of %s: %s", w.Workspace, w.Reason)
					}
				}
				if err != nil {
					return err
				}
				if asJSON {
					return e.printJSON(struct {
						Removed []*ckpt.WorkspaceInfo `json:"removed"`
						Kept    []*ckpt.WorkspaceInfo `json:"kept"`
						DryRun  bool                  `json:"dry_run,omitempty"`
					}{nonNil(gone), nonNil(kept), dryRun})
				}
				if len(gone) == 0 && len(kept) == 0 {
					e.infof("every workspace with a store still exists; nothing to prune")
				}
				return nil
			}
			ws, err := ckpt.Workspaces()
			if err != nil {
				return err
			}
			return listing(e, asJSON, ws, "no stores yet",
				func(w *ckpt.WorkspaceInfo) string { return w.Workspace },
				func(w *ckpt.WorkspaceInfo) string {
					state := "exists"
					switch {
					case w.Gone:
						state = "gone"
					case !w.Exists:
						state = "unknown"
						e.warnf("%s", w.Reason)
					}
					return fmt.Sprintf("%-8s %6s  %s", state, ckpt.HumanSize(w.Size), w.Workspace)
				})
		},
	}
	jsonFlag(c, &asJSON, "")
	c.Flags().BoolVar(&prune, "prune", false, "remove the stores of workspaces that are provably gone")
	c.Flags().BoolVarP(&dryRun, "dry-run", "n", false, "with --prune: say which stores would be removed, remove nothing")
	return c
}
