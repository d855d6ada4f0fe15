package cli

import (
	"strings"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

func newTurnCmd(e *env) *cobra.Command {
	var session, prompt, role, tool string
	var asJSON bool
	c := &cobra.Command{
		Use:   "turn begin -m PROMPT | end | message --role ROLE -m TEXT",
		Short: "Begin or end a turn of the current session, or add a message",
		Long: `Turn drives a session by hand (agent hooks do the same by themselves):

  ckpt turn begin -m PROMPT    checkpoint the whole workspace and start a turn
                               labelled with the prompt (ends one in progress)
  ckpt turn end                checkpoint again and record the files the turn
                               changed (shell side effects included)
  ckpt turn message --role assistant -m TEXT
                               add a message (user, assistant, tool, system)`,
		Example: `  ckpt turn begin -m "add a --verbose flag"
  ckpt turn message --role assistant -m "Added the flag and a test."
  ckpt turn end`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	begin := &cobra.Command{
		Use:     "begin -m PROMPT",
		Short:   "Start a turn: checkpoint the workspace, record the prompt",
		Example: `  ckpt turn begin -m "fix the flaky test"`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if prompt == "" {
				return usagef("turn begin needs the prompt: -m PROMPT")
			}
			c, err := e.controller(asJSON, session)
			if err != nil {
				return err
			}
			t, err := c.BeginTurn(e.ctx, prompt)
			e.doneProgress()
			if err != nil {
				return err
			}
			return e.result(asJSON, t, "", func() {
				e.printf("turn %d of session %s began at %s\n", t.N, c.ID(), t.Begin.Short())
			})
		},
	}
	begin.Flags().StringVarP(&prompt, "message", "m", "", "the turn's prompt")
	end := &cobra.Command{
		Use:     "end",
		Short:   "End the turn in progress: checkpoint, record what changed",
		Example: "  ckpt turn end",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := e.controller(asJSON, session)
			if err != nil {
				return err
			}
			t, err := c.EndTurn(e.ctx)
			e.doneProgress()
			if err != nil {
				return err
			}
			return e.result(asJSON, t, "", func() {
				e.printf("turn %d ended at %s: %s\n", t.N, t.End.Short(), ckpt.FormatTurnFiles(t.Files))
				for _, f := range t.Files {
					e.printf("  %s %s\n", strings.ToUpper(f.Status[:1]), displayPath(f.Path))
				}
			})
		},
	}
	msg := &cobra.Command{
		Use:     "message --role ROLE -m TEXT",
		Short:   "Add a message to the conversation",
		Example: "  ckpt turn message --role assistant -m \"done\"\n  ckpt turn message --role tool --tool Bash -m \"go test ./...\"",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("message") {
				return usagef("turn message needs the text: -m TEXT")
			}
			c, err := e.controller(asJSON, session)
			if err != nil {
				return err
			}
			m, err := c.AddMessage(e.ctx, ckpt.Message{Role: role, Content: prompt, Tool: tool})
			if err != nil {
				return usageIf(err)
			}
			return e.result(asJSON, m, "", nil)
		},
	}
	msg.Flags().StringVarP(&prompt, "message", "m", "", "the message's text")
	msg.Flags().StringVar(&role, "role", "assistant", "user, assistant, tool, system")
	msg.Flags().StringVar(&tool, "tool", "", "the tool's name (role tool)")
	for _, sub := range []*cobra.Command{begin, end, msg} {
		sub.Flags().StringVar(&session, "session", "", "the session `ID` (default: the current one)")
		jsonFlag(sub, &asJSON, "")
		c.AddCommand(sub)
	}
	return c
}

// usageIf makes an invalid-argument error from the engine a usage error.
func usageIf(err error) error {
	if strings.Contains(err.Error(), "message role") {
		return &usageError{err: err}
	}
	return err
}
