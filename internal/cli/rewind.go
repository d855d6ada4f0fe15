package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/hooks"
	"github.com/spf13/cobra"
)

type rewindOptions struct {
	session                   string
	code, conversation, both  bool
	keep, exact, dryRun, json bool
}

func newRewindCmd(e *env) *cobra.Command {
	o := &rewindOptions{}
	c := &cobra.Command{
		Use:   "rewind [TURN] [--code|--conversation|--both] [--exact] [--dry-run]",
		Short: "Take the session back to the start of a turn: code, conversation or both",
		Long: `Rewind takes the current session (or --session ID) back to the start of turn
TURN (as 'ckpt session show' numbers them):

  --code            undo everything the turns from TURN on changed, shell
                    side effects included, through the verified restore
                    (default)
  --conversation    the messages from TURN's prompt on are removed (kept,
                    hidden) and the prompt is printed, to send again
  --both            both

A code rewind undoes only what the agent's turns changed: edits made
between turns (by you, or by another session) survive; where both touched a
file they are merged, and conflicting hunks keep your side (listed).
--exact instead makes the whole tree what it was when turn TURN began,
your edits between turns included. Nothing is lost either way: the state
before is checkpointed and
'ckpt undo' takes the rewind back. 'ckpt undo' steps the files only: after
--both the conversation stays rewound ('ckpt session show --all' still shows
its messages). --dry-run shows what would change. Ignored files (.env) an
agent's edit tools changed are put back too: the agent's hooks keep each
before the tool writes it.

Another session's work is never undone: a path that another session's
turn, running at the same time, changed too is kept unless the rewound
turn's own edit tools named it (reported as shared). A conversation rewind
also prints how to go on in the agent's own conversation from before the
turn: for Claude Code a command that resumes it as a fork, for Gemini CLI
one that imports a copy of its chat (written to agent-forks/ in ckpt's
state directory), for Codex one that resumes the fork Codex's app server
wrote (codex must be on PATH); the agent's own files are not touched.

Without TURN, on a terminal, rewind opens the picker: the session's turns,
newest first. Enter on a turn opens [code+conversation] [conversation]
[code] [fork from here] [summarize from here] [summarize up to here]
[cancel] and shows what the highlighted one would change (for a summary:
the turns it replaces and which summarizer writes it); Enter again does it
and prints what 'ckpt rewind TURN', 'ckpt fork TURN' or 'ckpt summarize
TURN --from|--upto' prints. Esc goes back, Esc Esc or q quits, u toggles
between keeping your edits and --exact (the flags set where the picker
starts).`,
		Example: `  ckpt rewind                       # the picker
  ckpt rewind 3                     # code back to the start of turn 3
  ckpt rewind 3 --both
  ckpt rewind 2 --dry-run            # what it would undo, and what it keeps
  ckpt rewind 2 --exact             # the whole tree as turn 2 began
  ckpt rewind 2 --conversation --session 3fa2`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runRewind(e, o, args) },
	}
	c.Flags().StringVar(&o.session, "session", "", "the session `ID` (default: the current one)")
	c.Flags().BoolVar(&o.code, "code", false, "rewind the workspace's files (default)")
	c.Flags().BoolVar(&o.conversation, "conversation", false, "rewind the conversation")
	c.Flags().BoolVar(&o.both, "both", false, "rewind code and conversation")
	c.Flags().BoolVar(&o.exact, "exact", false, "make the whole tree what it was when the turn began, edits between turns included")
	c.Flags().BoolVar(&o.keep, "keep-user-edits", false, "undo only the agent's changes, keep edits made between turns (the default)")
	c.Flags().BoolVarP(&o.dryRun, "dry-run", "n", false, "show what would change, change nothing")
	jsonFlag(c, &o.json, "print the result as JSON")
	return c
}

func runRewind(e *env, o *rewindOptions, args []string) error {
	scope := ckpt.ScopeCode
	n := 0
	for _, f := range []struct {
		on bool
		s  ckpt.Scope
	}{{o.code, ckpt.ScopeCode}, {o.conversation, ckpt.ScopeConversation}, {o.both, ckpt.ScopeBoth}} {
		if f.on {
			scope = f.s
			n++
		}
	}
	if n > 1 {
		return usagef("choose one of --code, --conversation and --both")
	}
	if o.keep && o.exact {
		return usagef("choose one of --exact and --keep-user-edits (the default)")
	}
	for flag, on := range map[string]bool{"--keep-user-edits": o.keep, "--exact": o.exact} {
		if on && scope == ckpt.ScopeConversation {
			return usagef("%s applies to code; use it with --code or --both", flag)
		}
	}
	ctl, err := e.controller(o.json, o.session)
	if err != nil {
		return err
	}
	if len(args) == 0 {
		in, ok := e.stdin.(*os.File)
		if !ok || !isTerminal(in) || !isTerminal(e.stdout) || o.json {
			return usagef("rewind needs a TURN when not on a terminal: ckpt rewind TURN [--code|--conversation|--both] [--exact] (ckpt session show numbers the turns)")
		}
		if o.dryRun {
			return usagef("--dry-run needs a TURN: the picker shows what a rewind would change before it changes anything")
		}
		return runPicker(e, ctl, o)
	}
	turn, err := parseTurn(args[0])
	if err != nil {
		return err
	}
	res, err := ctl.Rewind(e.ctx, turn, scope, ckpt.RewindOptions{Exact: o.exact, DryRun: o.dryRun})
	e.doneProgress()
	if err != nil {
		return err
	}
	out := &rewindOutput{RewindResult: res}
	if res.Scope != ckpt.ScopeCode {
		out.AgentResume, out.agentNote = agentResume(e, ctl, res)
	}
	// With -q only the prompt, to send again.
	return e.result(o.json, out, res.Prompt, func() { printRewindText(e, out) })
}

// rewindOutput is a rewind's result, and how to resume the agent's own
// conversation before the turn.
type rewindOutput struct {
	*ckpt.RewindResult
	AgentResume *hooks.AgentResume `json:"agent_resume,omitempty"`
	agentNote   string
}

// agentResume says how the agent's own conversation goes on from before
// the rewound turn: a command for Claude Code, a note for an agent whose
// conversation ckpt cannot fork.
func agentResume(e *env, ctl *ckpt.Controller, res *ckpt.RewindResult) (*hooks.AgentResume, string) {
	s, err := ctl.Session(e.ctx)
	if err != nil || s.Agent == "" {
		return nil, ""
	}
	// The rewound turn: still the session's in a dry run, else the
	// first of those the rewind removed.
	var t *ckpt.Turn
	switch k := len(s.Rewound) - res.Turns; {
	case res.DryRun && res.Turn <= len(s.Turns):
		t = s.Turns[res.Turn-1]
	case !res.DryRun && res.Turns > 0 && k >= 0:
		t = s.Rewound[k]
	default:
		return nil, ""
	}
	ar, err := hooks.ResumeBefore(s, t, hooks.ResumeOptions{DryRun: res.DryRun, Context: e.ctx})
	if err != nil {
		return nil, fmt.Sprintf("%s's own conversation still holds the rewound turns: %v", agentName(s.Agent), err)
	}
	return ar, ""
}

func parseTurn(s string) (int, error) {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil || n < 1 || fmt.Sprint(n) != s {
		return 0, usagef("turn %q: want a turn number (1, 2, ...) as ckpt session show lists them", s)
	}
	return n, nil
}

func printRewindText(e *env, out *rewindOutput) {
	res := out.RewindResult
	kept := "kept"
	if res.DryRun {
		kept = "would keep"
	}
	if rr := res.Restore; rr != nil {
		verb := "rewound"
		if res.DryRun {
			verb = "would rewind"
		}
		changed := "changed"
		if res.DryRun {
			changed = "to change"
		}
		e.printf("%s code to the start of turn %d (%d file(s) %s)\n", verb, res.Turn, len(rr.Changed()), changed)
		for _, a := range rr.Actions {
			if a.Op == "keep" {
				e.printf("keep   %s (%s)\n", displayPath(a.Path), a.Reason)
				continue
			}
			e.printf("%-6s %s\n", a.Op, displayPath(a.Path))
		}
		if len(res.Kept) > 0 {
			var ps []string
			for _, p := range res.Kept {
				ps = append(ps, displayPath(p))
			}
			e.warnf("%s edits made between turns in: %s", kept, strings.Join(ps, ", "))
		}
		if len(res.Conflicts) > 0 {
			var ps []string
			for _, p := range res.Conflicts {
				ps = append(ps, displayPath(p))
			}
			e.warnf("conflicts: your side %sbeen kept in: %s", map[bool]string{true: "would have ", false: "has "}[res.DryRun], strings.Join(ps, ", "))
		}
		if len(res.Shared) > 0 {
			var ps []string
			for _, p := range res.Shared {
				ps = append(ps, displayPath(p))
			}
			e.warnf("%s what another session's turn, running at the same time, changed too: %s", kept, strings.Join(ps, ", "))
		}
		for _, n := range res.InProgress {
			e.warnf("turn %d had not ended: everything changed since it began %scounted as the agent's, edits made by hand since then too", n, map[bool]string{true: "would have ", false: ""}[res.DryRun])
		}
		back := "ckpt undo takes the rewind back"
		if res.Scope == ckpt.ScopeBoth {
			// Undo steps the workspace's timeline; the conversation's
			// messages stay hidden.
			back = "ckpt undo takes the code rewind back; the conversation stays rewound"
		}
		switch {
		case res.DryRun:
		case rr.PreRestore != nil:
			e.warnf("the state before was checkpointed as %s (%s)", rr.PreRestore.Short(), back)
		default:
			e.warnf("%s", back)
		}
	}
	if res.Scope != ckpt.ScopeCode {
		verb := "rewound"
		if res.DryRun {
			verb = "would rewind"
		}
		e.printf("%s the conversation to before turn %d (%d message(s), %d turn(s) removed); its prompt, to send again:\n%s\n",
			verb, res.Turn, res.Messages, res.Turns, res.Prompt)
		switch ar := out.AgentResume; {
		case ar != nil && ar.At == "":
			e.warnf("%s's own conversation is unchanged; turn %d was its first, so a new conversation (%s) starts before it", agentName(ar.Agent), res.Turn, ar)
		case ar != nil && len(ar.Command) == 0:
			e.warnf("%s's own conversation is unchanged; the rewind would have %s fork it before turn %d (a new %s session; the original stays) and print the command that goes on from the fork", agentName(ar.Agent), agentName(ar.Agent), res.Turn, agentName(ar.Agent))
		case ar != nil && ar.Agent == hooks.Codex && ar.Written:
			e.warnf("%s's own conversation is unchanged; %s forked it before turn %d (%s); to go on from the fork (a new %s session; the original stays):\n  %s", agentName(ar.Agent), agentName(ar.Agent), res.Turn, ar.File, agentName(ar.Agent), ar)
		case ar != nil && ar.File != "" && !ar.Written:
			e.warnf("%s's own conversation is unchanged; the rewind would write a copy of it ending before turn %d (%s) and go on from it with:\n  %s", agentName(ar.Agent), res.Turn, ar.File, ar)
		case ar != nil && ar.File != "":
			e.warnf("%s's own conversation is unchanged; a copy of it ending before turn %d is in %s; to go on from it (a new %s session; the original stays):\n  %s", agentName(ar.Agent), res.Turn, ar.File, agentName(ar.Agent), ar)
		case ar != nil:
			e.warnf("%s's own conversation is unchanged; to go on from before turn %d (a fork; the original stays):\n  %s", agentName(ar.Agent), res.Turn, ar)
		case out.agentNote != "":
			e.warnf("%s", out.agentNote)
		}
	}
}
