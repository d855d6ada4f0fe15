package cli

import (
	"errors"
	"fmt"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

type fsckOptions struct {
	json   bool
	remote string
	sample int
	repair bool
}

func newFsckCmd(e *env) *cobra.Command {
	o := &fsckOptions{}
	c := &cobra.Command{
		Use:   "fsck",
		Short: "Verify every object and reference in the store",
		Long: `Fsck re-hashes every object in the store (blobs, chunks, trees, checkpoints)
and checks every tree entry, parent, ref and operation-log entry points to an
object that exists. It prints each problem and exits with status 3 if any.
A stat cache that does not belong to the database (left from a newer copy
of it) is reported as a warning and removed; it is only a cache.

With --remote NAME it checks a remote instead: every index, ref, checkpoint
and tree is downloaded and verified against its hash, every file content they
name must be listed, and --sample PERCENT of those contents (default all) are
downloaded and verified too.`,
		Example: `  ckpt fsck
  ckpt fsck --json
  ckpt fsck --remote origin
  ckpt fsck --remote origin --sample 5
  ckpt fsck --remote origin --repair && ckpt push --full origin`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.remote != "" || cmd.Flags().Changed("sample") || o.repair {
				return fsckRemote(e, o)
			}
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
	c.Flags().StringVar(&o.remote, "remote", "", "check the remote `NAME` instead of the store")
	c.Flags().IntVar(&o.sample, "sample", 100, "with --remote: verify this `PERCENT` of file contents (1-100)")
	c.Flags().BoolVar(&o.repair, "repair", false, "with --remote: remove the packs that hold damaged objects (then ckpt push --full uploads them again)")
	jsonFlag(c, &o.json, "print JSON: {checked, problems, warnings}")
	return c
}

func fsckRemote(e *env, o *fsckOptions) error {
	if o.remote == "" {
		return usagef("--sample and --repair go with --remote NAME")
	}
	if o.sample < 1 || o.sample > 100 {
		return usagef("--sample %d: want a percentage from 1 to 100", o.sample)
	}
	r, err := e.open(o.json)
	if err != nil {
		return err
	}
	res, err := r.FsckRemote(e.ctx, o.remote, ckpt.RemoteFsckOptions{Sample: o.sample, Repair: o.repair})
	var rce *ckpt.RemoteCorruptError
	if err != nil && !errors.As(err, &rce) {
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
	for _, d := range res.Dropped {
		e.printf("removed damaged pack %s\n", d)
	}
	if res.Unindexed > 0 {
		e.warnf("note: %d pack(s) no index lists (a push cut short; the next push does not need them)", res.Unindexed)
	}
	if err != nil {
		return err
	}
	e.sayf("remote %s: %d ref(s), %d checkpoint(s), %d tree(s), %d file content(s) (%d%% verified), %d pack(s): ok\n",
		res.Remote, res.Refs, res.Checkpoints, res.Trees, res.Blobs, res.Sample, res.Packs)
	return nil
}
