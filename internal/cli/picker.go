package cli

import (
	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/tui"
)

// runPicker runs the rewind picker (internal/tui) on the terminal, then
// prints what it did as `ckpt rewind TURN`, `ckpt fork TURN` and
// `ckpt summarize TURN` do.
func runPicker(e *env, ctl *ckpt.Controller, o *rewindOptions) error {
	opts := tui.Options{Exact: o.exact}
	switch {
	case o.code:
		opts.Item = tui.ItemCode
	case o.conversation:
		opts.Item = tui.ItemConversation
	}
	// A progress bar on stderr would draw over the picker; it shows what
	// it is doing itself.
	e.doneProgress()
	res, err := tui.Run(e.ctx, ctl, e.stdin, e.stdout, opts)
	if err != nil {
		return err
	}
	switch {
	case res.Err != nil:
		return res.Err
	case res.NoTurns:
		e.warnf("session %s has no turns yet: nothing to rewind", ctl.ID())
	case res.Rewind != nil:
		out := &rewindOutput{RewindResult: res.Rewind}
		if res.Rewind.Scope != ckpt.ScopeCode {
			out.AgentResume, out.agentNote = agentResume(e, ctl, res.Rewind)
		}
		// With -q only the prompt, to send again.
		return e.result(false, out, res.Rewind.Prompt, func() { printRewindText(e, out) })
	case res.Fork != nil:
		printFork(e, ctl.ID(), res.Turn, res.Fork)
	case res.Summary != nil:
		printSummary(e, res.Summary)
	}
	return nil
}
