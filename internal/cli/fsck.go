package cli

import (
	"errors"
	"fmt"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

type fsckOptions struct{ json bool }

func newFsckCmd(e *env) *cobra.Command {
	o := &fsckOptions{}
	c := &cobra.Command{
		Use:   "fsck",
		Short: "Verify every object and reference in the store",
		Long: `Fsck re-hashes every object in the store (blobs, chunks, trees, checkpoints)
and checks every tree entry, parent, ref and operation-log entry points to an
object that exists. It prints each problem and exits with status 3 if any.
A stat cache that does not belong to the database (left from a newer copy
of it) is reported as a warning and removed; it is only a cache.`,
		Example: `  ckpt fsck
  ckpt fsck --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := withRepo(e, o.json, (*ckpt.Repo).Fsck)
			var fe *ckpt.FsckError
			if err != nil && !errors.As(err, &fe) {
				return err
			}
			if o.json {
				if perr := e.printJSON(res); perr != nil {
					return perr
				}
				return err
			}
			for _, p := range res.Problems {
				e.printf("%s\n", p)
			}
			for _, w := range res.Warnings {
				e.warnf("warning: %s", w)
			}
			if err != nil {
				return fmt.Errorf("%w: %d problem(s) in %d objects (listed above)", ckpt.ErrCorrupt, len(fe.Problems), res.Checked)
			}
			e.sayf("checked %d objects: ok\n", res.Checked)
			return nil
		},
	}
	jsonFlag(c, &o.json, "print JSON: {checked, problems, warnings}")
	return c
}
