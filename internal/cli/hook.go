package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/hooks"
	"github.com/spf13/cobra"
)

type hookOptions struct {
	strict      bool
	lockTimeout time.Duration
	timeout     time.Duration
	noMessages  bool
	noWatch     bool
}

type hookInstallOptions struct {
	local, project, user bool
	command              string
	asyncStop            bool
	notify               bool
	json                 bool
}

var hookAgentLong = map[string]string{
	hooks.ClaudeCode: `'ckpt hook claude-code' is the hook program Claude Code runs: it reads the
hook's JSON on stdin and acts by hook_event_name:

  SessionStart       open (or resume) the session with Claude Code's session_id
  UserPromptSubmit   begin a turn: checkpoint the whole workspace, the prompt
                     as the turn's label
  Stop, StopFailure  end the turn: checkpoint again, record the files it
                     changed and, from the transcript, the assistant's replies
                     and tool calls
  SessionEnd         end a turn still in progress (an interrupted one)
  PreCompact         note the compaction in the conversation

'ckpt hook claude-code install' adds these hooks to .claude/settings.local.json
(this machine's settings for the workspace; --project for the shared
.claude/settings.json, --user for every project).`,
	hooks.Gemini: `'ckpt hook gemini' is the hook program Gemini CLI runs: it reads the hook's
JSON on stdin and acts by hook_event_name:

  SessionStart   open (or resume) the session with Gemini CLI's session_id
  BeforeAgent    begin a turn: checkpoint the whole workspace, the prompt as
                 the turn's label
  AfterAgent     end the turn: checkpoint again, record the files it changed,
                 the reply and, from the transcript, the tool calls
  SessionEnd     end a turn still in progress
  PreCompress    note the compaction in the conversation

'ckpt hook gemini install' adds these hooks to .gemini/settings.json.`,
	hooks.QwenCode: `'ckpt hook qwen-code' is the hook program Qwen Code runs: it reads the
hook's JSON on stdin and acts by hook_event_name:

  SessionStart       open (or resume) the session with Qwen Code's session_id
  UserPromptSubmit   begin a turn: checkpoint the whole workspace, the prompt
                     as the turn's label (Qwen Code runs it again, without a
                     prompt, each time it sends the model its tools' results:
                     those calls are ignored)
  Stop, StopFailure  end the turn: checkpoint again, record the files it
                     changed and, from the transcript, the replies and tool
                     calls
  SessionEnd         end a turn still in progress
  PreCompact         note the compaction in the conversation

'ckpt hook qwen-code install' adds these hooks to .qwen/settings.json.`,
	hooks.Droid: `'ckpt hook droid' is the hook program Factory's Droid runs: it reads the
hook's JSON on stdin and acts by hook_event_name:

  SessionStart       open (or resume) the session with Droid's session_id
  UserPromptSubmit   begin a turn: checkpoint the whole workspace, the prompt
                     as the turn's label
  Stop               end the turn: checkpoint again, record the files it
                     changed and, from the transcript, the replies and tool
                     calls
  SessionEnd         end a turn still in progress
  PreCompact         note the compaction in the conversation

Droid runs UserPromptSubmit in its interactive sessions and through its
JSON-RPC protocol ('droid exec --output-format stream-jsonrpc', the SDK),
not in a plain 'droid exec': such a turn is not recorded.

'ckpt hook droid install' adds these hooks to .factory/settings.json.`,
	hooks.Cursor: `'ckpt hook cursor' is the hook program Cursor's agent runs (its CLI,
cursor-agent, and its editor's agent): it reads the hook's JSON on stdin and
acts by hook_event_name:

  beforeSubmitPrompt  begin a turn: checkpoint the whole workspace, the
                      prompt as the turn's label
  stop                end the turn (completed, aborted or failed):
                      checkpoint again, record the files it changed and,
                      when Cursor names a transcript, the replies and tool
                      calls
  sessionStart        open the session (not installed: the prompt's hook
                      opens it)
  sessionEnd          end a turn still in progress (not installed)
  preCompact          note the compaction in the conversation

The session is Cursor's conversation (conversation_id); the workspace is
found from the first of workspace_roots. Cursor reads a hook's stdout as
JSON: it prints {"continue": true} for beforeSubmitPrompt and {} for the
rest, so the agent always goes on.

'ckpt hook cursor install' adds these hooks to .cursor/hooks.json.`,
	hooks.OpenCode: `OpenCode has no hook commands; it loads JS plugins. 'ckpt hook opencode
install' writes one, .opencode/plugins/ckpt.js, that runs 'ckpt hook opencode'
(ckpt's own protocol, as 'ckpt hook generic' reads it) and waits for it:

  chat.message         your message arrives, before the model sees it: begin
                       a turn (checkpoint the whole workspace, the message as
                       the turn's label)
  tool.execute.after   a tool call, kept for the turn's messages
  session.idle         OpenCode is done: end the turn (checkpoint again,
                       record the files it changed, the replies and tool calls)

The ckpt session's id is OpenCode's session id (ses_...).`,
	hooks.Copilot: `'ckpt hook copilot' is the hook program GitHub Copilot CLI runs: it reads the
hook's JSON on stdin and acts by hook_event_name:

  SessionStart       open (or resume) the session with Copilot's session id
  UserPromptSubmit   begin a turn: checkpoint the whole workspace, the prompt
                     as the turn's label
  Stop               end the turn: checkpoint again, record the files it
                     changed and, from Copilot's session events, the replies
                     and tool calls (Copilot waits for it)
  SessionEnd         end a turn still in progress
  PreCompact         note the compaction in the conversation

Those are the names Copilot gives its events when they are configured in
PascalCase; configured in camelCase (sessionStart, userPromptSubmitted,
agentStop, sessionEnd) Copilot sends no event name, and ckpt tells the event
from the payload's fields.

'ckpt hook copilot install' writes these hooks to ckpt.json in
~/.copilot/hooks/ (or, --project, in the repository's .github/hooks/, which
Copilot reads only in a folder you trust).`,
	hooks.Generic: `'ckpt hook generic' drives a session from any agent, script or in-house
harness, the way the agents' hooks do: one JSON object per call on stdin.

  {"event": "session_start", "session_id": "run-42", "agent": "my-harness"}
  {"event": "turn_begin", "session_id": "run-42", "prompt": "fix the tests"}
  {"event": "turn_end", "session_id": "run-42",
   "messages": [{"role": "assistant", "content": "Fixed."},
                {"role": "tool", "tool": "Edit", "content": "src/a.go"}]}
  {"event": "session_end", "session_id": "run-42"}

  session_start  open (or resume) the session
  turn_begin     begin a turn: checkpoint the whole workspace, the prompt as
                 the turn's label
  turn_end       end the turn: checkpoint again, record the files it changed
                 and the messages given (roles user, assistant, tool, system)
  turn           a whole turn after the fact (prompt and messages): it
                 begins at the workspace's last checkpoint
  session_end    end a turn still in progress
  compact        note a compaction in the conversation

cwd, if given, is where the workspace is looked for (default: the current
directory); agent labels a session the call creates; reason is kept with
session_end and compact. Like every hook it never fails the caller unless
--strict. See docs/hooks.md.`,
	hooks.Codex: `'ckpt hook codex' is the hook program Codex (0.169 and later) runs: it reads
the hook's JSON on stdin and acts by hook_event_name:

  SessionStart       open (or resume) the session with Codex's thread id
  UserPromptSubmit   begin a turn: checkpoint the whole workspace, the prompt
                     (this turn's only) as the turn's label
  Stop               end the turn: checkpoint again, record the files it
                     changed and the last reply (Codex waits for it)
  SessionEnd         end a turn still in progress

'ckpt hook codex install' adds these hooks to ~/.codex/hooks.json and records
in ~/.codex/config.toml that you trust them, as Codex's /hooks does (Codex
skips a hook it has no trust for). It replaces ckpt's legacy notify line.

It is also Codex's legacy notify program (install --notify, for a Codex
without hooks): the notification JSON as its argument (or on stdin), sent
only when a turn is over. Such a turn is recorded after the fact: it begins
at the workspace's last checkpoint and ends with a checkpoint taken now; its
prompt (the last of input-messages) and last reply are its messages. The
two payloads are told apart by their content.`,
}

func newHookCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "hook AGENT [install|uninstall] | hook status",
		Short: "Agent hooks: sessions and turn checkpoints from Claude Code, Gemini CLI, Codex, Qwen Code, OpenCode, Copilot CLI, Droid, Cursor",
		Long: `Hook is the program coding agents run at their hook events, so every turn of
the agent is a session turn in ckpt: a whole-tree checkpoint when it begins
(shell side effects are covered), another when it ends, the files it
changed, the prompt and the replies — for 'ckpt rewind', 'ckpt session show'
and the rest.

  ckpt hook claude-code install [--local|--project|--user]
                                     add the hooks to the settings
  ckpt hook gemini install [--project|--user]
  ckpt hook codex install            add the hooks to ~/.codex/hooks.json, trusted
  ckpt hook qwen-code install [--project|--user]
  ckpt hook opencode install [--project|--user]
                                     write ckpt's plugin for OpenCode
  ckpt hook droid install [--project|--user]
                                     Factory's Droid: .factory/settings.json
  ckpt hook cursor install [--project|--user]
                                     Cursor's agent: .cursor/hooks.json
  ckpt hook copilot install [--user|--project]
                                     write ckpt's hooks file for Copilot CLI
  ckpt hook AGENT uninstall [--local|--project|--user]
                                     remove exactly what install added
  ckpt hook status                   what is installed where

A hook never fails or blocks the agent: errors (a malformed payload, a
store it cannot open, a store another ckpt holds longer than --lock-timeout)
go to stderr and to the hook log, and it exits 0 — unless --strict, which
exits 1 (never 2, which would make the agent drop the prompt). It handles
the event in a child process of its own, so a crash of that process (out
of memory, a fatal runtime error) or one still running past --timeout is
reported the same way. It prints nothing on stdout (agents read a hook's
stdout), except for Cursor, which wants JSON there: the answer that lets
its agent go on. The log is $CKPT_HOOK_LOG, else hooks.log in $XDG_STATE_HOME/ckpt.
See docs/hooks.md.`,
		Example: `  ckpt hook claude-code install
  ckpt hook gemini install --user
  ckpt hook codex install
  ckpt hook status
  ckpt hook claude-code < payload.json    # what the agent runs`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	for _, agent := range hooks.Programs {
		c.AddCommand(newHookAgentCmd(e, agent))
	}
	c.AddCommand(newHookStatusCmd(e))
	return c
}

func newHookAgentCmd(e *env, agent string) *cobra.Command {
	o := &hookOptions{}
	use, args, example := agent, cobra.NoArgs, fmt.Sprintf("  ckpt hook %[1]s install\n  ckpt hook %[1]s uninstall\n  ckpt hook %[1]s < payload.json", agent)
	short := "The " + agentName(agent) + " hook program (and install, uninstall)"
	switch agent {
	case hooks.Codex:
		use, args = agent+" [NOTIFICATION-JSON]", cobra.MaximumNArgs(1)
		example = "  ckpt hook codex install\n  ckpt hook codex uninstall\n  ckpt hook codex < payload.json    # what Codex runs\n  ckpt hook codex '{\"type\": \"agent-turn-complete\", ...}'    # the legacy notify"
	case hooks.Generic:
		short = "The hook program for any other agent, script or harness (ckpt's own protocol)"
		example = `  echo '{"event": "turn_begin", "session_id": "run-42", "prompt": "fix the tests"}' | ckpt hook generic
  echo '{"event": "turn_end", "session_id": "run-42", "messages": [{"role": "assistant", "content": "Fixed."}]}' | ckpt hook generic`
	}
	c := &cobra.Command{
		Use:     use,
		Short:   short,
		Long:    hookAgentLong[agent],
		Example: example,
		Args:    args,
		RunE:    func(cmd *cobra.Command, args []string) error { return runHook(e, o, agent, args) },
	}
	f := c.Flags()
	f.BoolVar(&o.strict, "strict", false, "exit 1 when the hook fails (default: report it and exit 0)")
	f.DurationVar(&o.lockTimeout, "lock-timeout", hooks.DefaultLockTimeout, "skip the event when another ckpt holds the store longer than `DUR`")
	f.DurationVar(&o.timeout, "timeout", hooks.DefaultTimeout, "give up on the event after `DUR`")
	f.BoolVar(&o.noMessages, "no-messages", false, "do not record the assistant's replies and tool calls")
	f.BoolVar(&o.noWatch, "no-watch", false, "do not start a watcher (ckpt watch) for the workspace")
	if agent != hooks.Generic {
		c.AddCommand(newHookInstallCmd(e, agent, true), newHookInstallCmd(e, agent, false))
	}
	return c
}

func agentName(agent string) string {
	switch agent {
	case hooks.ClaudeCode:
		return "Claude Code"
	case hooks.Gemini:
		return "Gemini CLI"
	case hooks.Codex:
		return "Codex"
	case hooks.QwenCode:
		return "Qwen Code"
	case hooks.OpenCode:
		return "OpenCode"
	case hooks.Droid:
		return "Droid"
	case hooks.Cursor:
		return "Cursor"
	case hooks.Copilot:
		return "Copilot CLI"
	}
	return agent
}

// maxPayload bounds what a hook reads from stdin.
const maxPayload = 16 << 20

func runHook(e *env, o *hookOptions, agent string, args []string) error {
	called := time.Now()
	child := os.Getenv(hookChildEnv) != ""
	if child {
		// The guard's child: the call began when the guard started.
		if t, err := time.Parse(time.RFC3339Nano, os.Getenv(hookCalledEnv)); err == nil {
			called = t
		}
	}
	var payload []byte
	if len(args) == 1 {
		payload = []byte(args[0])
	} else {
		if f, ok := e.stdin.(*os.File); ok && isTerminal(f) {
			return usagef("ckpt hook %s reads the agent's hook JSON on stdin: it is what %s runs, not a command to type (see 'ckpt hook %s install')", agent, agentName(agent), agent)
		}
		payload = readPayload(e.stdin, o.timeout)
	}
	if agent == hooks.Cursor && !child {
		// Cursor reads the answer on stdout, whatever happens below.
		defer e.stdout.Write(hooks.CursorResponse(payload))
	}
	if !child && e.guardHook() {
		if ran, err := runHookGuarded(e, o, agent, payload, called); ran {
			return err
		}
	}
	// The store, exactly as every other command resolves it.
	so, err := e.storeOptions()
	if err == nil && e.workspace != "" {
		e.workspace, err = e.findWorkspace("")
	}
	if err != nil {
		hooks.ReportFailure(agent, payload, err, time.Since(called), hooks.RunOptions{Stderr: e.stderr})
		if o.strict {
			return &exitStatusError{code: ExitError}
		}
		return nil
	}
	ctx := e.ctx
	if child {
		// --timeout counts from the agent's call, which the guard took.
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, called.Add(o.timeout))
		defer cancel()
	}
	opts := hooks.RunOptions{
		Options: hooks.Options{Store: so.Store, Backend: so.Backend, GitRefPrefix: so.GitRefPrefix, MaxFileSize: so.MaxFileSize,
			Workspace: e.workspace, Dir: e.dir, LockTimeout: o.lockTimeout, NoMessages: o.noMessages,
			ProjectDir: os.Getenv(hooks.ProjectDirEnv[agent]), Watch: ensureWatcher(o.noWatch), Called: called},
		Timeout: o.timeout,
		Stderr:  e.stderr,
	}
	if v := os.Getenv("CKPT_NOW"); v != "" {
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			opts.Now = func() time.Time { return t }
			opts.Called = t
		}
	}
	if _, err := hooks.Run(ctx, agent, payload, opts); err != nil && o.strict {
		return &exitStatusError{code: ExitError} // already reported
	}
	return nil
}

// readPayload reads the hook's JSON from stdin: at most maxPayload bytes,
// and no longer than timeout — one JSON value is enough, so an agent
// that keeps stdin open does not hold the hook. What it cannot read is
// nil (the hook then reports an empty payload).
func readPayload(r io.Reader, timeout time.Duration) []byte {
	if r == nil {
		return nil
	}
	done := make(chan []byte, 1)
	go func() {
		var buf bytes.Buffer
		dec := json.NewDecoder(io.TeeReader(io.LimitReader(r, maxPayload), &buf))
		var v json.RawMessage
		if err := dec.Decode(&v); err == nil {
			done <- v
			return
		}
		// Not JSON: the rest as it is, for the log.
		io.Copy(&buf, io.LimitReader(r, maxPayload-int64(buf.Len())))
		done <- buf.Bytes()
	}()
	select {
	case p := <-done:
		return p
	case <-time.After(timeout):
		return nil
	}
}

func newHookInstallCmd(e *env, agent string, install bool) *cobra.Command {
	o := &hookInstallOptions{}
	verb := "uninstall"
	short := "Remove ckpt's hooks from " + agentName(agent) + "'s settings"
	if install {
		verb = "install"
		short = "Add ckpt's hooks to " + agentName(agent) + "'s settings"
	}
	file := map[string]string{
		hooks.ClaudeCode: "the workspace's .claude/settings.local.json\n(--local, the default: this machine's settings, not committed — the entries\nname this machine's ckpt), its shared .claude/settings.json (--project),\nor ~/.claude/settings.json (--user; $CLAUDE_CONFIG_DIR/settings.json if set)",
		hooks.Gemini:     "the workspace's .gemini/settings.json\n(--project, the default) or ~/.gemini/settings.json (--user)",
		hooks.Codex:      "~/.codex/hooks.json\n($CODEX_HOME/hooks.json if set)",
		hooks.OpenCode:   "the plugin file ckpt.js in the workspace's\n.opencode/plugins/ (--project, the default) or in ~/.config/opencode/plugins/\n(--user; $XDG_CONFIG_HOME/opencode if set)",
		hooks.QwenCode:   "the workspace's .qwen/settings.json\n(--project, the default) or ~/.qwen/settings.json (--user; $QWEN_HOME/settings.json\nif set)",
		hooks.Droid:      "the workspace's .factory/settings.json\n(--project, the default) or ~/.factory/settings.json (--user)",
		hooks.Cursor:     "the workspace's .cursor/hooks.json\n(--project, the default) or ~/.cursor/hooks.json (--user)",
		hooks.Copilot:    "the hooks file ckpt.json in ~/.copilot/hooks/\n(--user, the default; $COPILOT_HOME/hooks/ if set) or in the workspace's\n.github/hooks/ (--project)",
	}[agent]
	var long string
	if install {
		long = fmt.Sprintf(`Install adds ckpt's hook entries to %s.

It merges: other hooks, unknown keys, their order, formatting and comments
stay byte for byte as they were; installing again adds nothing; a copy of
the previous file is kept in $XDG_STATE_HOME/ckpt/hook-backups and the file
is replaced atomically, keeping its owner and mode (through a symlink, the
file it leads to — but a project install never writes through a link that
leads out of the project). Only entries exactly as install writes them are
ckpt's: a command of yours that runs 'ckpt hook' among other things is left
as it is. A file with a key twice in one object is refused.

The entries run this ckpt by its absolute path (through the PATH entry that
leads to it, if any), so the agent finds it whatever its PATH; --command
sets another (e.g. --command ckpt to rely on PATH).`, file)
		if agent == hooks.ClaudeCode {
			long += `

--async-stop marks the Stop hook "async": true, so Claude Code does not wait
for the end-of-turn checkpoint (on a large tree, a few hundred ms). The
checkpoint is still taken when the turn ends; a Stop that runs after the next
prompt's hook never ends that next turn. Needs a Claude Code with async hooks.`
		}
		if agent == hooks.Codex {
			long += `

Codex runs a hook from hooks.json only if config.toml beside it records that
you trust it: a [hooks.state."<hooks.json>:<event>:<group>:<handler>"] table
whose trusted_hash is the hash of the hook as declared — what Codex's /hooks
writes when you trust a hook there. Install appends those tables for ckpt's
entries only (nothing else in config.toml changes) and removes ckpt's legacy
notify line, which would record every turn a second time. A notify of yours
that runs 'ckpt hook codex' keeps install from adding the hooks.

--notify installs the legacy notify program in config.toml instead, for a
Codex without hooks (before 0.169): turns are then recorded only when they
are over. Codex runs one notify program: if config.toml already sets another,
install refuses and says so rather than replace it.`
		}
		if agent == hooks.OpenCode {
			long = fmt.Sprintf(`Install writes %s.

OpenCode loads every .js file in those plugins directories when it starts:
ckpt's plugin runs 'ckpt hook opencode' when your message arrives and when
the session goes idle, with the turn's tool calls and replies (see 'ckpt
hook opencode --help'). It runs this ckpt by its absolute path (through the PATH entry
that leads to it, if any); --command sets another. Installing again rewrites
the file only if the command changed; a file of that name that is not
ckpt's is refused, not replaced. A copy of a file it replaces is kept in
$XDG_STATE_HOME/ckpt/hook-backups.`, file)
		}
		if agent == hooks.Copilot {
			long = fmt.Sprintf(`Install writes %s.

Copilot CLI runs the hooks of every .json file in those hooks directories,
waiting for each: ckpt's file runs 'ckpt hook copilot' at SessionStart,
UserPromptSubmit, Stop and SessionEnd (see 'ckpt hook copilot --help'). The
hooks in a repository's .github/hooks/ run only once you trust the folder
(Copilot asks when it starts there; 'copilot -p' needs --trust-folder or a
trust saved before); the user's run everywhere, which is why they are the
default. The file runs this ckpt by its absolute path (through the PATH entry
that leads to it, if any); --command sets another. Installing again rewrites
the file only if the command changed; a file of that name holding any other
hook is refused, not replaced. A copy of a file it replaces is kept in
$XDG_STATE_HOME/ckpt/hook-backups.`, file)
		}
	} else {
		long = fmt.Sprintf(`Uninstall removes ckpt's hook entries from %s,
and the lists and objects they leave empty; nothing else changes. An entry
is ckpt's only if its command is exactly what install writes: a command of
yours that runs 'ckpt hook' among other things is left as it is.`, file)
		if agent == hooks.OpenCode {
			long = fmt.Sprintf(`Uninstall removes %s,
if it is ckpt's (it starts with ckpt's comment line); a file of that name
that is not ckpt's is left alone. A copy is kept in
$XDG_STATE_HOME/ckpt/hook-backups.`, file)
		}
		if agent == hooks.Copilot {
			long = fmt.Sprintf(`Uninstall removes %s,
if it is ckpt's (each hook in it runs 'ckpt hook copilot' exactly as install
writes it); a file of that name with any other hook is left alone. A copy is
kept in $XDG_STATE_HOME/ckpt/hook-backups.`, file)
		}
		if agent == hooks.Codex {
			long = fmt.Sprintf(`Uninstall removes ckpt's hook entries from %s, their
trust from config.toml beside it and ckpt's legacy notify line; nothing
else changes (another notify program, the trust of other hooks, is left
alone).`, file)
		}
	}
	c := &cobra.Command{
		Use:     verb + " [--project|--user]",
		Short:   short,
		Long:    long,
		Example: fmt.Sprintf("  ckpt hook %[1]s %[2]s\n  ckpt hook %[1]s %[2]s --user --json", agent, verb),
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, args []string) error { return runHookInstall(e, o, agent, install) },
	}
	if agent == hooks.Codex {
		c.Use = verb
		c.Example = fmt.Sprintf("  ckpt hook codex %[1]s\n  ckpt hook codex %[1]s --json", verb)
		if install {
			c.Example = "  ckpt hook codex install\n  ckpt hook codex install --json\n  ckpt hook codex install --notify    # a Codex without hooks: the legacy notify"
		}
	} else {
		if agent == hooks.ClaudeCode {
			c.Use = verb + " [--local|--project|--user]"
			c.Flags().BoolVar(&o.local, "local", false, "the workspace's settings on this machine: .claude/settings.local.json (default)")
			c.Flags().BoolVar(&o.project, "project", false, "the workspace's shared settings: .claude/settings.json")
		} else if agent == hooks.Copilot {
			c.Use = verb + " [--user|--project]"
			c.Example = fmt.Sprintf("  ckpt hook copilot %[1]s\n  ckpt hook copilot %[1]s --project --json", verb)
			c.Flags().BoolVar(&o.project, "project", false, "the workspace's .github/hooks/ (Copilot runs them in a trusted folder only)")
		} else {
			c.Flags().BoolVar(&o.project, "project", false, "the workspace's settings (default)")
		}
		userHelp := "the user's settings, for every project"
		if agent == hooks.Copilot {
			userHelp = "the user's ~/.copilot/hooks/, for every project (default)"
		}
		c.Flags().BoolVar(&o.user, "user", false, userHelp)
	}
	if install {
		c.Flags().StringVar(&o.command, "command", "", "run ckpt as `CMD` (default: this ckpt's absolute path)")
	}
	if install && agent == hooks.ClaudeCode {
		c.Flags().BoolVar(&o.asyncStop, "async-stop", false, "run the Stop hook in the background: the end-of-turn checkpoint off the agent's path")
	}
	if install && agent == hooks.Codex {
		c.Flags().BoolVar(&o.notify, "notify", false, "set the legacy notify program in config.toml instead (a Codex without hooks)")
	}
	jsonFlag(c, &o.json, "")
	return c
}

func runHookInstall(e *env, o *hookInstallOptions, agent string, install bool) error {
	scope, n := hooks.DefaultScope(agent), 0
	for _, f := range []struct {
		on    bool
		scope hooks.Scope
	}{{o.local, hooks.ScopeLocal}, {o.project, hooks.ScopeProject}, {o.user, hooks.ScopeUser}} {
		if f.on {
			scope, n = f.scope, n+1
		}
	}
	if n > 1 {
		if agent == hooks.ClaudeCode {
			return usagef("choose one of --local, --project and --user")
		}
		return usagef("choose one of --project and --user")
	}
	ws, wsErr := e.workspaceDir()
	if scope.InWorkspace() && wsErr != nil {
		return wsErr
	}
	file, err := hooks.SettingsFile(agent, scope, ws)
	if err != nil {
		return usagef("%v", err)
	}
	opts := hooks.InstallOptions{Command: o.command, AsyncStop: o.asyncStop, Notify: o.notify, Project: ws}
	var ch *hooks.Change
	if install {
		ch, err = hooks.Install(agent, scope, file, opts)
	} else {
		ch, err = hooks.Uninstall(agent, scope, file, opts)
	}
	if err != nil {
		return err
	}
	// Hooks in another settings file too: the agent runs both.
	var also []*hooks.Installed
	for _, sc := range hooks.Scopes(agent) {
		if sc == scope || sc.InWorkspace() && wsErr != nil {
			continue
		}
		if f, err := hooks.SettingsFile(agent, sc, ws); err == nil {
			if in := hooks.Status(agent, sc, f); len(in.Events) > 0 {
				also = append(also, in)
			}
		}
	}
	return e.result(o.json, ch, "", func() {
		printHookChange(e, agent, install, ch)
		for _, in := range also {
			if install {
				e.warnf("ckpt's hooks are also in %s: %s runs both, so every event would run ckpt twice; keep one (ckpt hook %s uninstall --%s)",
					in.File, agentName(agent), agent, in.Scope)
			} else if !ch.Changed {
				e.printf("  ckpt's hooks are in %s: ckpt hook %s uninstall --%s removes them\n", in.File, agent, in.Scope)
			}
		}
	})
}

// printHookChange says what hook install or uninstall changed in file.
func printHookChange(e *env, agent string, install bool, ch *hooks.Change) {
	file := ch.File
	notify := slices.Contains(ch.Removed, "notify")
	switch {
	case agent == hooks.Codex && install && slices.Contains(ch.Added, "notify"):
		e.printf("codex: set notify in %s\n", file)
		e.printf("  command: %s\n", ch.Command)
		if len(ch.Removed) > 0 {
			e.printf("  removed ckpt's hooks for %s from %s\n", strings.Join(ch.Removed, ", "), hooksJSON(ch))
		}
	case agent == hooks.Codex && !install && ch.Changed:
		if evs := slices.DeleteFunc(slices.Clone(ch.Removed), func(s string) bool { return s == "notify" }); len(evs) > 0 {
			e.printf("codex: removed ckpt's hooks for %s from %s\n", strings.Join(evs, ", "), file)
		}
		if len(ch.Untrusted) > 0 {
			e.printf("  and their trust from %s\n", ch.Config)
		}
		if notify {
			e.printf("codex: removed the notify line from %s\n", codexConfig(ch))
		}
	case agent == hooks.Codex && install && !ch.Changed && len(ch.Kept) > 0:
		e.printf("codex: nothing installed: your notify program already runs ckpt's hook (the hooks would record every turn twice)\n")
	case install && !ch.Changed:
		e.printf("%s: ckpt's hooks are already in %s\n", agent, file)
	case install:
		if len(ch.Added) > 0 {
			e.printf("%s: added hooks for %s to %s\n", agent, strings.Join(ch.Added, ", "), file)
		}
		if len(ch.Updated) > 0 {
			e.printf("%s: updated ckpt's hooks for %s in %s\n", agent, strings.Join(ch.Updated, ", "), file)
		}
		e.printf("  command: %s\n", ch.Command)
		if len(ch.Trusted) > 0 {
			e.printf("  trusted %s in %s (as Codex's /hooks does)\n", strings.Join(ch.Trusted, ", "), ch.Config)
		}
		if agent == hooks.Codex && notify {
			e.printf("  removed ckpt's legacy notify line from %s\n", ch.Config)
		}
	case !ch.Changed:
		e.printf("%s: no ckpt hooks in %s\n", agent, file)
	default:
		e.printf("%s: removed ckpt's hooks for %s from %s\n", agent, strings.Join(ch.Removed, ", "), file)
	}
	for _, k := range ch.Kept {
		e.printf("  left as it is, your own command that runs ckpt's hook: %s\n", k)
	}
	if ch.Backup != "" {
		e.printf("  previous file kept in %s\n", ch.Backup)
	}
	if ch.ConfigBackup != "" {
		e.printf("  previous %s kept in %s\n", filepath.Base(ch.Config), ch.ConfigBackup)
	}
	if install && ch.Changed {
		e.printf("  restart %s for the hooks to take effect\n", agentName(agent))
	}
}

// hooksJSON and codexConfig name Codex's two files, whichever ch.File is.
func hooksJSON(ch *hooks.Change) string {
	return filepath.Join(filepath.Dir(ch.File), "hooks.json")
}

func codexConfig(ch *hooks.Change) string {
	return filepath.Join(filepath.Dir(ch.File), "config.toml")
}

// workspaceDir finds the workspace (-C DIR or the current directory) the
// way every command does, without opening its store.
func (e *env) workspaceDir() (string, error) {
	opts, err := e.storeOptions()
	if err != nil {
		return "", err
	}
	return e.findWorkspace(opts.Store)
}

func newHookStatusCmd(e *env) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "status",
		Short: "Show which agents' settings have ckpt's hooks, and where the hook log is",
		Long: `Status reads each agent's settings (Claude Code's local, project and user
ones) and shows which have ckpt's hooks, for which events, with which
command; each agent's command found on PATH and its version (from
--version); the last call of each hook event in the hook log, when, whether
it succeeded and how long it took; where the hook log is; and the last hook
call that failed — when, which agent and event, the error and what to do —
until a later hook call succeeds.`,
		Example: "  ckpt hook status\n  ckpt hook status --json",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, args []string) error { return runHookStatus(e, asJSON) },
	}
	jsonFlag(c, &asJSON, "print JSON: {installed, log, last_failure, agents}")
	return c
}

// agentStatus is an agent as hook status shows it.
type agentStatus struct {
	*hooks.Agent
	LastRuns []hooks.LastRun `json:"last_runs"`
}

func runHookStatus(e *env, asJSON bool) error {
	ws, wsErr := e.workspaceDir()
	out := struct {
		Installed []*hooks.Installed `json:"installed"`
		Log       string             `json:"log"`
		// LastFailure is the last hook call that failed, until a later
		// one succeeds (null: none).
		LastFailure *hooks.Failure `json:"last_failure"`
		// Agents are the agents' commands found on PATH, with their
		// versions and the last call of each hook event in the log.
		Agents []agentStatus `json:"agents"`
	}{Installed: []*hooks.Installed{}, Log: hooks.LogPath(), Agents: []agentStatus{}}
	lf, lfErr := hooks.LastFailure("")
	out.LastFailure = lf
	for _, agent := range hooks.Agents {
		for _, scope := range hooks.Scopes(agent) {
			if scope.InWorkspace() && wsErr != nil {
				continue
			}
			file, err := hooks.SettingsFile(agent, scope, ws)
			if err != nil {
				continue // codex has no project scope
			}
			out.Installed = append(out.Installed, hooks.Status(agent, scope, file))
		}
	}
	runs, runsErr := hooks.LastRuns(out.Log)
	for _, agent := range hooks.Agents {
		a := agentStatus{Agent: hooks.FindAgent(e.ctx, agent, 3*time.Second), LastRuns: runs[agent]}
		if a.LastRuns == nil {
			a.LastRuns = []hooks.LastRun{}
		}
		out.Agents = append(out.Agents, a)
	}
	if asJSON {
		return e.printJSON(out)
	}
	for _, in := range out.Installed {
		state := "not installed"
		switch {
		case in.Error != "":
			state = "unreadable: " + in.Error
		case len(in.Events) > 0:
			state = "installed: " + strings.Join(in.Events, ", ")
			if len(in.Missing) > 0 {
				flag := ""
				if len(hooks.Scopes(in.Agent)) > 1 {
					flag = " --" + string(in.Scope)
				}
				state += " (missing: " + strings.Join(in.Missing, ", ") + "; `ckpt hook " + in.Agent + " install" + flag + "` adds them)"
			}
			state += "; runs " + strings.Join(in.Commands, " | ")
			if len(in.Background) > 0 {
				state += "; in the background: " + strings.Join(in.Background, ", ")
			}
			if len(in.Trusted) > 0 {
				state += "; trusted in " + in.Config + ": " + strings.Join(in.Trusted, ", ")
			}
			if len(in.Untrusted) > 0 {
				state += "; NOT trusted (Codex skips them): " + strings.Join(in.Untrusted, ", ") + " (ckpt hook codex install, or Codex's /hooks, trusts them)"
			}
		case in.Other != "":
			state = "not installed; notify runs " + in.Other
		case !in.Exists:
			state = "not installed (no file)"
		}
		e.printf("%-12s %-8s %s\n    %s\n", in.Agent, in.Scope, in.File, state)
	}
	for _, a := range out.Agents {
		found := "not found on PATH"
		if a.Path != "" {
			found = a.Path
			if a.Version != "" {
				found += ", " + a.Version
			}
			if a.Error != "" {
				found += " (" + a.Error + ")"
			}
		}
		e.printf("%-12s %s\n", a.Agent.Agent, found)
		if len(a.LastRuns) == 0 {
			e.printf("    no hook call in the log\n")
		}
		for _, r := range a.LastRuns {
			state := "ok"
			if !r.OK {
				state = "failed"
			}
			e.printf("    last %-18s %s  %s, %d ms\n", r.Event, fmtTime(r.Time), state, r.Millis)
		}
	}
	e.printf("log: %s\n", out.Log)
	if runsErr != nil {
		e.warnf("hook log: %v", runsErr)
	}
	printHookFailure(e.stdout, lf, "")
	if lfErr != nil {
		e.warnf("hook failure record: %v", lfErr)
	}
	if wsErr != nil {
		return fmt.Errorf("project settings not shown: %w", wsErr)
	}
	return nil
}

// printHookFailure shows the last hook failure, if any, each line
// starting with indent.
func printHookFailure(w io.Writer, f *hooks.Failure, indent string) {
	if f == nil {
		return
	}
	what := f.Agent
	if f.Event != "" {
		what += " " + f.Event
	}
	if f.Workspace != "" {
		what += " in " + f.Workspace
	}
	fmt.Fprintf(w, "%slast hook failure: %s, %s (turns are not checkpointed until a hook call succeeds)\n", indent, fmtTime(f.Time), what)
	fmt.Fprintf(w, "%s    error: %s\n", indent, f.Error)
	fmt.Fprintf(w, "%s    next:  %s\n", indent, f.Next)
}

// ensureWatcher returns the hooks' Watch option: start the workspace's
// watcher in the background unless one runs (nil with noWatch, or where
// watch mode does not exist). CKPT_NO_WATCH=1 turns it off too.
func ensureWatcher(noWatch bool) func(*ckpt.Repo) error {
	if noWatch || !ckpt.WatchSupported || os.Getenv("CKPT_NO_WATCH") != "" {
		return nil
	}
	return func(r *ckpt.Repo) error {
		if r.StoreDir() == "" {
			return nil
		}
		if _, err := r.WatchStatus(context.Background()); err == nil {
			return nil
		}
		return startWatcher(context.Background(), r, 2*time.Hour)
	}
}
