package cli

import (
	"fmt"
	"strings"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

func newStatsCmd(e *env) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "stats",
		Short: "Show the history's size: checkpoints by kind, bytes stored vs on disk",
		Long: `Stats reports the workspace's history: checkpoints by kind, branches, tags and
snapshots, the oldest and newest checkpoint, HEAD's files, what the
checkpoints would take as full copies (logical), the distinct content
(unique), what the store holds after compression and deltas (stored), the
store's size on disk, the resulting ratio, and HEAD's largest files. With -q it
prints nothing; its exit status says whether the store could be read.`,
		Example: "  ckpt stats\n  ckpt stats --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := withRepo(e, asJSON, (*ckpt.Repo).Stats)
			if err != nil {
				return err
			}
			// With -q: the store was read, nothing to print (the status
			// says it could). The JSON has the ratio.
			return e.result(asJSON, s, "", func() { printStats(e, s) })
		},
	}
	jsonFlag(c, &asJSON, "")
	return c
}

func printStats(e *env, s *ckpt.StoreStats) {
	var kinds []string
	for _, k := range []string{"manual", "turn", "run", "edit", "pre-restore", "restore"} {
		if n := s.Checkpoints[k]; n > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
		}
	}
	e.printf("workspace:   %s\nstore:       %s (%s)\n", s.Workspace, s.Store, s.Backend)
	e.printf("checkpoints: %d", s.Total)
	if len(kinds) > 0 {
		e.printf(" (%s)", strings.Join(kinds, ", "))
	}
	e.printf("\nrefs:        %d branch(es), %d tag(s), %d snapshot(s)\n", s.Branches, s.Tags, s.Snapshots)
	if s.Total > 0 {
		e.printf("oldest:      %s\nnewest:      %s\n", fmtTime(s.Oldest), fmtTime(s.Newest))
	}
	e.printf("HEAD:        %d file(s), %s\n", s.Files, ckpt.HumanSize(s.FileBytes))
	e.printf("logical:     %s (every checkpoint as a full copy)\n", ckpt.HumanSize(s.Logical))
	e.printf("unique:      %s (distinct file contents)\n", ckpt.HumanSize(s.Unique))
	e.printf("stored:      %s (%d blobs, %d trees, %d chunks; compressed, deltas)\n", ckpt.HumanSize(s.Stored), s.Blobs, s.Trees, s.Chunks)
	e.printf("on disk:     %s", ckpt.HumanSize(s.Disk))
	if r := s.Ratio(); r >= 1.05 {
		e.printf(" (%.1fx smaller than full copies)", r)
	} else if s.Logical > 0 {
		e.printf(" (a small store is mostly fixed overhead)")
	}
	e.printf("\n")
	if len(s.Largest) > 0 {
		e.printf("largest files in HEAD:\n")
		for _, f := range s.Largest {
			e.printf("  %10s  %s\n", ckpt.HumanSize(f.Size), displayPath(f.Path))
		}
	}
}
