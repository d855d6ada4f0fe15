package cli

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

func newClearCmd(e *env) *cobra.Command {
	var yes bool
	c := &cobra.Command{
		Use:   "clear [--yes]",
		Short: "Remove this workspace's whole history (files are not touched)",
		Long: `Clear deletes every checkpoint, branch, tag, snapshot, operation and session
of this workspace from its store. The workspace's files are not touched and
the store's settings are kept. It asks for confirmation on a terminal;
otherwise --yes is required.`,
		Example: "  ckpt clear\n  ckpt clear --yes",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := e.open(false)
			if err != nil {
				return err
			}
			if !yes {
				in, ok := e.stdin.(*os.File)
				if !ok || !isTerminal(in) || !isTerminal(e.stderr) {
					return usagef("clear removes the whole history of %s; run it with --yes to confirm", r.Root())
				}
				st, _ := r.Stats(e.ctx)
				n := 0
				if st != nil {
					n = st.Total
				}
				fmt.Fprintf(e.stderr, "ckpt: remove all %d checkpoint(s) of %s? The files stay. [y/N] ", n, r.Root())
				line, _ := bufio.NewReader(e.stdin).ReadString('\n')
				if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
					fmt.Fprintln(e.stderr, "ckpt: nothing removed")
					return &exitStatusError{1}
				}
			}
			if err := r.Clear(e.ctx); err != nil {
				return err
			}
			e.sayf("cleared the history of %s\n", r.Root())
			return nil
		},
	}
	c.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return c
}
