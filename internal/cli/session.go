package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

func newSessionCmd(e *env) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "session list | show [ID] | new | delete ID",
		Short: "Sessions: conversations whose turns are anchored to checkpoints",
		Long: `A session is a conversation with an agent in the workspace: ordered turns,
each anchored to the whole-tree checkpoint taken when it began (so shell side
effects are covered) and the one taken when it ended, and its messages.
Sessions live in the store and survive restarts. Agent hooks (ckpt hook) open
them by themselves; 'ckpt turn begin/end' drives them by hand.

Commands act on the most recently active session unless --session ID (or a
unique prefix) names another.`,
		Example: `  ckpt session new -t "add login"
  ckpt session list
  ckpt session show
  ckpt session show 3fa2 --json
  ckpt session delete 3fa2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return listSessions(e, asJSON) },
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")

	list := &cobra.Command{
		Use:     "list",
		Short:   "List sessions, most recently active first",
		Example: "  ckpt session list\n  ckpt session list --json",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, args []string) error { return listSessions(e, asJSON) },
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")

	var all bool
	show := &cobra.Command{
		Use:   "show [ID]",
		Short: "Show a session's turns and conversation",
		Long: `Show prints the session's turns, numbered from 1 (the numbers rewind, fork and
summarize take), each with its time, the files it changed and its prompt, then
the conversation. --all also shows messages a rewind or summary hid.`,
		Example: "  ckpt session show\n  ckpt session show 3fa2 --all\n  ckpt session show --json",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := ""
			if len(args) == 1 {
				id = args[0]
			}
			return showSession(e, id, asJSON, all)
		},
	}
	show.Flags().BoolVar(&asJSON, "json", false, "print JSON: {session, messages}")
	show.Flags().BoolVar(&all, "all", false, "include messages hidden by rewinds and summaries")

	var title, id, agent string
	newc := &cobra.Command{
		Use:     "new [-t TITLE] [--id ID]",
		Short:   "Start a session (it becomes the current one)",
		Example: "  ckpt session new -t \"refactor the parser\"\n  ckpt session new --id my-run-7",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := e.open(asJSON)
			if err != nil {
				return err
			}
			s, err := r.NewSession(e.ctx, ckpt.SessionOptions{ID: id, Title: title, Agent: agent})
			if err != nil {
				return err
			}
			if asJSON {
				return e.printJSON(s)
			}
			e.printf("%s\n", s.ID)
			return nil
		},
	}
	newc.Flags().StringVarP(&title, "title", "t", "", "the session's title")
	newc.Flags().StringVar(&id, "id", "", "the session's id (default: random)")
	newc.Flags().StringVar(&agent, "agent", "", "the agent it records (claude-code, gemini, codex)")
	newc.Flags().BoolVar(&asJSON, "json", false, "print JSON")

	var delDry, delJSON bool
	del := &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a session (its checkpoints stay until gc drops them)",
		Long: `Delete removes a session's record: its turns and messages. The checkpoints its
turns made stay in the history until gc's retention drops them, so the code of
every turn can still be restored by id. --dry-run names the session and what
would go, and deletes nothing.`,
		Example: "  ckpt session delete 3fa2 --dry-run\n  ckpt session delete 3fa2",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := e.open(delJSON)
			if err != nil {
				return err
			}
			s, err := r.ResolveSession(e.ctx, args[0])
			if err != nil {
				return err
			}
			if !delDry {
				if err := r.DeleteSession(e.ctx, s.ID); err != nil {
					return err
				}
			}
			if delJSON {
				return e.printJSON(struct {
					Deleted string `json:"deleted"`
					Title   string `json:"title"`
					Turns   int    `json:"turns"`
					DryRun  bool   `json:"dry_run,omitempty"`
				}{s.ID, s.Title, len(s.Turns), delDry})
			}
			if e.quiet {
				return nil
			}
			verb := "deleted"
			if delDry {
				verb = "would delete"
			}
			e.printf("%s session %s (%q, %d turns); its checkpoints stay until gc drops them\n", verb, s.ID, s.Title, len(s.Turns))
			return nil
		},
	}
	del.Flags().BoolVarP(&delDry, "dry-run", "n", false, "say what would be deleted, delete nothing")
	del.Flags().BoolVar(&delJSON, "json", false, "print JSON: {deleted, title, turns, dry_run}")
	c.AddCommand(list, show, newc, del)
	return c
}

func listSessions(e *env, asJSON bool) error {
	r, err := e.open(asJSON)
	if err != nil {
		return err
	}
	ss, err := r.Sessions(e.ctx)
	if err != nil {
		return err
	}
	if asJSON {
		return e.printJSON(ss)
	}
	if len(ss) == 0 && !e.quiet {
		fmt.Fprintln(e.stderr, "ckpt: no sessions yet; `ckpt session new` starts one (agent hooks start them by themselves)")
	}
	for i, s := range ss {
		if e.quiet {
			e.printf("%s\n", s.ID)
			continue
		}
		mark := " "
		if i == 0 {
			mark = "*"
		}
		extra := ""
		if s.Parent != "" {
			extra = fmt.Sprintf(" (fork of %s at turn %d)", s.Parent, s.ForkTurn)
		}
		e.printf("%s %-14s %s %3d turn(s)  %s%s\n", mark, s.ID, fmtTime(s.Updated), len(s.Turns), s.Title, extra)
	}
	return nil
}

func showSession(e *env, id string, asJSON, all bool) error {
	r, err := e.open(asJSON)
	if err != nil {
		return err
	}
	ctl, err := r.Controller(e.ctx, id)
	if err != nil {
		return err
	}
	s, err := ctl.Session(e.ctx)
	if err != nil {
		return err
	}
	msgs, err := ctl.Messages(e.ctx, all)
	if err != nil {
		return err
	}
	if asJSON {
		return e.printJSON(struct {
			Session  *ckpt.Session   `json:"session"`
			Messages []*ckpt.Message `json:"messages"`
		}{s, msgs})
	}
	e.printf("session %s: %s\n", s.ID, s.Title)
	if s.Agent != "" {
		e.printf("agent:   %s\n", s.Agent)
	}
	if s.Parent != "" {
		e.printf("fork of: %s at turn %d (branch %s)\n", s.Parent, s.ForkTurn, s.Branch)
	}
	e.printf("turns:\n")
	if len(s.Turns) == 0 {
		e.printf("  (none yet)\n")
	}
	for _, t := range s.Turns {
		state := ckpt.FormatTurnFiles(t.Files)
		if t.Open() {
			state = "in progress"
		}
		e.printf("  %2d  %s  %-12s %s\n", t.N, fmtTime(t.Started), state, oneLine(t.Prompt))
	}
	e.printf("conversation:\n")
	for _, m := range msgs {
		who := m.Role
		if m.Tool != "" {
			who += " " + m.Tool
		}
		if m.Hidden != "" {
			who += " (" + m.Hidden + ")"
		}
		text := strings.ReplaceAll(strings.TrimRight(m.Content, "\n"), "\n", "\n      ")
		e.printf("  [%d] %s: %s\n", m.Turn, who, text)
	}
	return nil
}

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
	ctl := func(jsonOut bool) (*ckpt.Controller, error) {
		r, err := e.open(jsonOut)
		if err != nil {
			return nil, err
		}
		return r.Controller(e.ctx, session)
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
			c, err := ctl(asJSON)
			if err != nil {
				return err
			}
			t, err := c.BeginTurn(e.ctx, prompt)
			e.doneProgress()
			if err != nil {
				return err
			}
			if asJSON {
				return e.printJSON(t)
			}
			if !e.quiet {
				e.printf("turn %d of session %s began at %s\n", t.N, c.ID(), t.Begin.Short())
			}
			return nil
		},
	}
	begin.Flags().StringVarP(&prompt, "message", "m", "", "the turn's prompt")
	end := &cobra.Command{
		Use:     "end",
		Short:   "End the turn in progress: checkpoint, record what changed",
		Example: "  ckpt turn end",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := ctl(asJSON)
			if err != nil {
				return err
			}
			t, err := c.EndTurn(e.ctx)
			e.doneProgress()
			if err != nil {
				return err
			}
			if asJSON {
				return e.printJSON(t)
			}
			if !e.quiet {
				e.printf("turn %d ended at %s: %s\n", t.N, t.End.Short(), ckpt.FormatTurnFiles(t.Files))
				for _, f := range t.Files {
					e.printf("  %s %s\n", strings.ToUpper(f.Status[:1]), displayPath(f.Path))
				}
			}
			return nil
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
			c, err := ctl(asJSON)
			if err != nil {
				return err
			}
			m, err := c.AddMessage(e.ctx, ckpt.Message{Role: role, Content: prompt, Tool: tool})
			if err != nil {
				return usageIf(err)
			}
			if asJSON {
				return e.printJSON(m)
			}
			return nil
		},
	}
	msg.Flags().StringVarP(&prompt, "message", "m", "", "the message's text")
	msg.Flags().StringVar(&role, "role", "assistant", "user, assistant, tool, system")
	msg.Flags().StringVar(&tool, "tool", "", "the tool's name (role tool)")
	for _, sub := range []*cobra.Command{begin, end, msg} {
		sub.Flags().StringVar(&session, "session", "", "the session `ID` (default: the current one)")
		sub.Flags().BoolVar(&asJSON, "json", false, "print JSON")
		c.AddCommand(sub)
	}
	return c
}

// usageIf makes an invalid-argument error from the engine a usage error.
func usageIf(err error) error {
	if strings.Contains(err.Error(), "message role") {
		return &usageError{err}
	}
	return err
}

type rewindOptions struct {
	session                  string
	code, conversation, both bool
	keep, dryRun, json       bool
}

func newRewindCmd(e *env) *cobra.Command {
	o := &rewindOptions{}
	c := &cobra.Command{
		Use:   "rewind [TURN] [--code|--conversation|--both] [--keep-user-edits] [--dry-run]",
		Short: "Take the session back to the start of a turn: code, conversation or both",
		Long: `Rewind takes the current session (or --session ID) back to the start of turn
TURN (as 'ckpt session show' numbers them):

  --code            the workspace as it was when the turn began: everything
                    the turns from TURN on changed, shell side effects
                    included, through the verified restore (default)
  --conversation    the messages from TURN's prompt on are removed (kept,
                    hidden) and the prompt is printed, to send again
  --both            both

--keep-user-edits undoes only what the agent's turns changed: edits made
between turns (by you, or by another session) survive; where both touched a
file they are merged, and conflicting hunks keep your side (listed).
Nothing is lost either way: the state before is checkpointed and
'ckpt undo' takes the rewind back. 'ckpt undo' steps the files only: after
--both the conversation stays rewound ('ckpt session show --all' still shows
its messages). --dry-run shows what would change.

Without TURN, on a terminal, rewind opens the picker: the session's turns,
newest first. Enter on a turn opens [code+conversation] [conversation]
[code] [fork from here] [summarize from here] [summarize up to here]
[cancel] and shows what the highlighted one would change (for a summary:
the turns it replaces and which summarizer writes it); Enter again does it
and prints what 'ckpt rewind TURN', 'ckpt fork TURN' or 'ckpt summarize
TURN --from|--upto' prints. Esc goes back, Esc Esc or q quits, u toggles
--keep-user-edits (the flags set where the picker starts).`,
		Example: `  ckpt rewind                       # the picker
  ckpt rewind 3                     # code back to the start of turn 3
  ckpt rewind 3 --both
  ckpt rewind 2 --keep-user-edits --dry-run
  ckpt rewind 2 --conversation --session 3fa2`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runRewind(e, o, args) },
	}
	c.Flags().StringVar(&o.session, "session", "", "the session `ID` (default: the current one)")
	c.Flags().BoolVar(&o.code, "code", false, "rewind the workspace's files (default)")
	c.Flags().BoolVar(&o.conversation, "conversation", false, "rewind the conversation")
	c.Flags().BoolVar(&o.both, "both", false, "rewind code and conversation")
	c.Flags().BoolVar(&o.keep, "keep-user-edits", false, "undo only the agent's changes; keep edits made between turns")
	c.Flags().BoolVarP(&o.dryRun, "dry-run", "n", false, "show what would change, change nothing")
	c.Flags().BoolVar(&o.json, "json", false, "print the result as JSON")
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
	if o.keep && scope == ckpt.ScopeConversation {
		return usagef("--keep-user-edits applies to code; use it with --code or --both")
	}
	r, err := e.open(o.json)
	if err != nil {
		return err
	}
	ctl, err := r.Controller(e.ctx, o.session)
	if err != nil {
		return err
	}
	if len(args) == 0 {
		in, ok := e.stdin.(*os.File)
		if !ok || !isTerminal(in) || !isTerminal(e.stdout) || o.json {
			return usagef("rewind needs a TURN when not on a terminal: ckpt rewind TURN [--code|--conversation|--both] [--keep-user-edits] (ckpt session show numbers the turns)")
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
	res, err := ctl.Rewind(e.ctx, turn, scope, ckpt.RewindOptions{KeepUserEdits: o.keep, DryRun: o.dryRun})
	e.doneProgress()
	if err != nil {
		return err
	}
	return printRewind(e, o.json, res)
}

func parseTurn(s string) (int, error) {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil || n < 1 || fmt.Sprint(n) != s {
		return 0, usagef("turn %q: want a turn number (1, 2, ...) as ckpt session show lists them", s)
	}
	return n, nil
}

func printRewind(e *env, asJSON bool, res *ckpt.RewindResult) error {
	if asJSON {
		return e.printJSON(res)
	}
	if e.quiet {
		if res.Prompt != "" {
			e.printf("%s\n", res.Prompt)
		}
		return nil
	}
	would := ""
	if res.DryRun {
		would = "would "
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
			e.warnf("%skept edits made between turns in: %s", would, strings.Join(ps, ", "))
		}
		if len(res.Conflicts) > 0 {
			var ps []string
			for _, p := range res.Conflicts {
				ps = append(ps, displayPath(p))
			}
			e.warnf("conflicts: your side %sbeen kept in: %s", map[bool]string{true: "would have ", false: "has "}[res.DryRun], strings.Join(ps, ", "))
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
	}
	return nil
}

func newForkCmd(e *env) *cobra.Command {
	var session string
	var asJSON bool
	c := &cobra.Command{
		Use:   "fork TURN",
		Short: "Start a new session from a turn, on a new branch",
		Long: `Fork starts a new session with the conversation before turn TURN and a new
history branch (fork/<id>) starting at that turn's checkpoint. The workspace
moves to the fork — the state at the start of TURN — after the current state
is checkpointed on the current branch; the new session becomes the current
one. The original session and its branch are untouched ('ckpt switch' goes
back).`,
		Example: "  ckpt fork 3\n  ckpt fork 2 --session 3fa2",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			turn, err := parseTurn(args[0])
			if err != nil {
				return err
			}
			r, err := e.open(asJSON)
			if err != nil {
				return err
			}
			ctl, err := r.Controller(e.ctx, session)
			if err != nil {
				return err
			}
			res, err := ctl.Fork(e.ctx, turn)
			e.doneProgress()
			if err != nil {
				return err
			}
			if asJSON {
				return e.printJSON(res)
			}
			printFork(e, ctl.ID(), turn, res)
			return nil
		},
	}
	c.Flags().StringVar(&session, "session", "", "the session `ID` (default: the current one)")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func printFork(e *env, from string, turn int, res *ckpt.ForkResult) {
	if !e.quiet {
		e.printf("forked session %s from turn %d of %s, on branch %s (%d file(s) changed)\n",
			res.Session.ID, turn, from, res.Session.Branch, len(res.Switch.Changed()))
	}
}

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
			r, err := e.open(asJSON)
			if err != nil {
				return err
			}
			ctl, err := r.Controller(e.ctx, session)
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
			if asJSON {
				return e.printJSON(res)
			}
			printSummary(e, res)
			return nil
		},
	}
	c.Flags().StringVar(&session, "session", "", "the session `ID` (default: the current one)")
	c.Flags().BoolVar(&from, "from", false, "summarize TURN and every later turn")
	c.Flags().BoolVar(&upto, "upto", false, "summarize every turn up to and including TURN")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func printSummary(e *env, res *ckpt.SummarizeResult) {
	if !e.quiet {
		e.printf("summarized turns %d-%d into turn %d:\n%s\n", res.First, res.Last, res.Turn.N, res.Summary)
	}
}
