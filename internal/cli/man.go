package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

func newManCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "man DIR",
		Short: "Write ckpt's man pages (section 1) into DIR",
		Long: `Man writes a man page for ckpt and for each of its commands (ckpt.1,
ckpt-save.1, ...) into DIR, creating it, from the same text as --help: for
packagers. $SOURCE_DATE_EPOCH, when set, dates them (reproducible builds).`,
		Example: "  ckpt man /usr/local/share/man/man1\n  man -l man1/ckpt-restore.1",
		Args:    cobra.ExactArgs(1),
		Hidden:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			var noStamp func(*cobra.Command)
			noStamp = func(c *cobra.Command) {
				c.DisableAutoGenTag = true
				for _, sub := range c.Commands() {
					noStamp(sub)
				}
			}
			noStamp(root)
			header := &doc.GenManHeader{
				Title:   "CKPT",
				Section: "1",
				Source:  "ckpt " + buildVersion().Version,
				Manual:  "ckpt manual",
			}
			if err := os.MkdirAll(args[0], 0o755); err != nil {
				return err
			}
			if err := doc.GenManTree(root, header, args[0]); err != nil {
				return fmt.Errorf("man pages into %s: %w", args[0], err)
			}
			e.sayf("wrote the man pages into %s\n", args[0])
			return nil
		},
	}
}
