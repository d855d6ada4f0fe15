package cli

import (
	"context"
	"fmt"
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
	jsonFlag(c, &asJSON, "")

	list := &cobra.Command{
		Use:     "list",
		Short:   "List sessions, most recently active first",
		Example: "  ckpt session list\n  ckpt session list --json",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, args []string) error { return listSessions(e, asJSON) },
	}
	jsonFlag(list, &asJSON, "")

	var all, stat bool
	show := &cobra.Command{
		Use:   "show [ID]",
		Short: "Show a session's turns and conversation",
		Long: `Show prints the session's turns, numbered from 1 (the numbers rewind, fork and
summarize take), each with its time, the files it changed and its prompt, then
the conversation. --all also shows messages a rewind or summary hid.

--stat says who changed what, exactly (every turn has a checkpoint at both
ends): under each turn, the lines the agent changed in it, and the lines
changed between it and the turn before (by you, or another session); then
the totals. Lines are counted as git diff --stat counts them; binary files
count as files only.`,
		Example: "  ckpt session show\n  ckpt session show 3fa2 --all\n  ckpt session show --stat\n  ckpt session show --json --stat",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := ""
			if len(args) == 1 {
				id = args[0]
			}
			return showSession(e, id, asJSON, all, stat)
		},
	}
	jsonFlag(show, &asJSON, "print JSON: {session, messages} (and stat, with --stat)")
	show.Flags().BoolVar(&all, "all", false, "include messages hidden by rewinds and summaries")
	show.Flags().BoolVar(&stat, "stat", false, "count the lines the agent changed in each turn, and those changed between turns")

	var title, id, agent string
	newc := &cobra.Command{
		Use:     "new [-t TITLE] [--id ID]",
		Short:   "Start a session (it becomes the current one)",
		Example: "  ckpt session new -t \"refactor the parser\"\n  ckpt session new --id my-run-7",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := withRepo(e, asJSON, func(r *ckpt.Repo, ctx context.Context) (*ckpt.Session, error) {
				return r.NewSession(ctx, ckpt.SessionOptions{ID: id, Title: title, Agent: agent})
			})
			if err != nil {
				return err
			}
			return e.result(asJSON, s, s.ID, func() { e.printf("%s\n", s.ID) })
		},
	}
	newc.Flags().StringVarP(&title, "title", "t", "", "the session's title")
	newc.Flags().StringVar(&id, "id", "", "the session's id (default: random)")
	newc.Flags().StringVar(&agent, "agent", "", "the agent it records (claude-code, gemini, codex)")
	jsonFlag(newc, &asJSON, "")

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
			v := struct {
				Deleted string `json:"deleted"`
				Title   string `json:"title"`
				Turns   int    `json:"turns"`
				DryRun  bool   `json:"dry_run,omitempty"`
			}{s.ID, s.Title, len(s.Turns), delDry}
			return e.result(delJSON, v, "", func() {
				verb := "deleted"
				if delDry {
					verb = "would delete"
				}
				e.printf("%s session %s (%q, %d turns); its checkpoints stay until gc drops them\n", verb, s.ID, s.Title, len(s.Turns))
			})
		},
	}
	del.Flags().BoolVarP(&delDry, "dry-run", "n", false, "say what would be deleted, delete nothing")
	jsonFlag(del, &delJSON, "print JSON: {deleted, title, turns, dry_run}")
	c.AddCommand(list, show, newc, del)
	return c
}

func listSessions(e *env, asJSON bool) error {
	ss, err := withRepo(e, asJSON, (*ckpt.Repo).Sessions)
	if err != nil {
		return err
	}
	return listing(e, asJSON, ss, "no sessions yet; `ckpt session new` starts one (agent hooks start them by themselves)",
		func(s *ckpt.Session) string { return s.ID },
		func(s *ckpt.Session) string {
			mark := " "
			if len(ss) > 0 && s == ss[0] {
				mark = "*" // the current session: the most recently active
			}
			extra := ""
			if s.Parent != "" {
				extra = fmt.Sprintf(" (fork of %s at turn %d)", s.Parent, s.ForkTurn)
			}
			return fmt.Sprintf("%s %-14s %s %3d turn(s)  %s%s", mark, s.ID, fmtTime(s.Updated), len(s.Turns), s.Title, extra)
		})
}

func showSession(e *env, id string, asJSON, all, withStat bool) error {
	ctl, err := e.controller(asJSON, id)
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
	var stat *ckpt.SessionStat
	if withStat {
		r, err := e.open(asJSON) // the repository the controller drives
		if err != nil {
			return err
		}
		if stat, err = r.SessionStat(e.ctx, s); err != nil {
			return err
		}
	}
	if asJSON {
		return e.printJSON(struct {
			Session  *ckpt.Session     `json:"session"`
			Messages []*ckpt.Message   `json:"messages"`
			Stat     *ckpt.SessionStat `json:"stat,omitempty"`
		}{s, msgs, stat})
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
	for i, t := range s.Turns {
		state := ckpt.FormatTurnFiles(t.Files)
		if t.Open() {
			state = "in progress"
		}
		e.printf("  %2d  %s  %-12s %s\n", t.N, fmtTime(t.Started), state, oneLine(t.Prompt))
		if stat != nil {
			ts := stat.Turns[i]
			if ts.Removed.Files > 0 {
				e.printf("        before it, turns a rewind removed from the conversation: %s\n", formatLines(ts.Removed))
			}
			if ts.UserBefore.Files > 0 {
				e.printf("        before it, between turns: %s\n", formatLines(ts.UserBefore))
			}
			e.printf("        the agent: %s\n", formatLines(ts.Agent))
		}
	}
	if stat != nil && len(s.Turns) > 0 {
		e.printf("who changed what:\n  the agent, in its turns (removed ones too): %s\n  between turns (you, another session, or a rewind): %s\n",
			formatLines(stat.Agent), formatLines(stat.User))
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

// formatLines is "+I -D lines in N file(s)" (and how many are binary).
func formatLines(c ckpt.LineCount) string {
	if c.Files == 0 {
		return "no changes"
	}
	out := fmt.Sprintf("+%d -%d lines in %d file(s)", c.Insertions, c.Deletions, c.Files)
	if c.Binary > 0 {
		out += fmt.Sprintf(", %d binary", c.Binary)
	}
	return out
}
