package cli

import (
	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

func newSummarizeCmd(e *env) *cobra.Command {
	var session string
	var from, upto, asJSON bool
	c := &cobra.Command{
		Use:   "summarize TURN --from|--upto",
		Short: "Replace turns from (or up to) TURN with one summary message",
		Long: `Summarize replaces the turns from TURN on (--from) or up to and including it
(--upto) with one summary message, in one turn that keeps the first
summarized turn's checkpoint (rewinding to it still works). The replaced
messages are kept, hidden ('ckpt session show --all').

The summary comes from the store's summarizer setting — a command that reads
the transcript as JSON on stdin and prints the summary, e.g.
  ckpt config summarizer 'llm -s "Summarize this coding session"'
— or, by default, a built-in one that is deterministic and offline: per turn,
its prompt, the files it changed and how it ended.`,
		Example: "  ckpt summarize 5 --upto\n  ckpt summarize 3 --from",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if from == upto {
				return usagef("choose one of --from and --upto")
			}
			turn, err := parseTurn(args[0])
			if err != nil {
				return err
			}
			ctl, err := e.controller(asJSON, session)
			if err != nil {
				return err
			}
			dir := ckpt.SummarizeFrom
			if upto {
				dir = ckpt.SummarizeUpto
			}
			res, err := ctl.Summarize(e.ctx, turn, dir)
			if err != nil {
				return err
			}
			return e.result(asJSON, res, "", func() { printSummary(e, res) })
		},
	}
	c.Flags().StringVar(&session, "session", "", "the session `ID` (default: the current one)")
	c.Flags().BoolVar(&from, "from", false, "summarize TURN and every later turn")
	c.Flags().BoolVar(&upto, "upto", false, "summarize every turn up to and including TURN")
	jsonFlag(c, &asJSON, "")
	return c
}

func printSummary(e *env, res *ckpt.SummarizeResult) {
	e.sayf("summarized turns %d-%d into turn %d:\n%s\n", res.First, res.Last, res.Turn.N, res.Summary)
}
