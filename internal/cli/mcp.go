package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/mcpserver"
	"github.com/spf13/cobra"
)

type mcpOptions struct {
	workspace string
	sandbox   bool
}

func newMCPCmd(e *env) *cobra.Command {
	o := &mcpOptions{}
	c := &cobra.Command{
		Use:   "mcp [--workspace DIR] [--sandbox]",
		Short: "Serve snapshots and undo to an agent over MCP (stdio)",
		Long: `Mcp serves ckpt as a Model Context Protocol server on stdin/stdout, for an
agent (Claude Code, Codex, Gemini CLI, Cursor, ...) to call. Tools:

  snapshot_create {name, description?, force?, ttl?}   snapshot_list {}
  snapshot_restore {name}   snapshot_diff {name}   snapshot_delete {name}
  checkpoint_list {limit?, kind?}   checkpoint_diff {from?, to?, paths?}
  checkpoint_restore {rev, paths?}   undo {}   redo {}
  session_turns {session?}
  session_rewind {turn, session?, scope?, exact?, dry_run?}

The four snapshot tools answer exactly what the sandbox snapshot tools answer
(and 'ckpt snapshot' prints); errors come back as tool errors with the text ckpt prints on stderr.

The workspace is --workspace DIR if given; otherwise the workspace found
from the client's first file:// root, or from the current directory (or -C
DIR), as for every other command (so 'ckpt snapshot list' run there shows
the agent's snapshots). Every global flag (--store, --backend,
--git-ref-prefix, --max-file-size, ...) and CKPT_STORE apply. On the git
backend a tool whose change is safe in the store but whose git ref update
failed is a tool error, as the command exits 1.

Messages are JSON-RPC, one per line, each at most 16 MiB (not counting
the line ending). Bad input never ends the server: a line that is not
UTF-8 JSON is answered with a parse error (-32700), JSON that is not a
request (a number, {}, a batch) or a longer line with an invalid-request
error (-32600), and the server reads on.

--sandbox answers as the sandbox snapshot tools do, for agents written
against them: the git backend with refs under refs/sandbox (each snapshot
a detached commit at refs/sandbox/snapshots/NAME, its id the commit's 40
hex digits), a repository initialised with 'git init -b main' on first use
if the workspace is not one, and the user's HEAD, branch, index and stash
untouched. It is --backend git --git-ref-prefix refs/sandbox.

Register it with an agent, e.g.:
  claude mcp add ckpt -- ckpt mcp`,
		Example: `  ckpt mcp
  ckpt mcp --workspace ~/src/project
  ckpt mcp --sandbox
  claude mcp add ckpt -- ckpt mcp`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runMCP(e, o) },
	}
	c.Flags().StringVar(&o.workspace, "workspace", "", "serve this workspace `DIR` (default: the client's root, else the current directory)")
	c.Flags().BoolVar(&o.sandbox, "sandbox", false, "answer as the sandbox snapshot tools: git backend, refs under refs/sandbox")
	return c
}

// sandboxPrefix is where the sandbox snapshot tools keep their refs.
const sandboxPrefix = "refs/sandbox"

func runMCP(e *env, o *mcpOptions) error {
	if o.workspace == "" {
		o.workspace = e.workspace // ckpt --workspace DIR mcp
	}
	if o.sandbox {
		if e.backend != "" && e.backend != ckpt.BackendGit {
			return usagef("--sandbox uses the git backend, not --backend %s", e.backend)
		}
		if e.gitPrefix != "" && e.gitPrefix != sandboxPrefix {
			return usagef("--sandbox keeps refs under %s, not --git-ref-prefix %s", sandboxPrefix, e.gitPrefix)
		}
		e.backend, e.gitPrefix = ckpt.BackendGit, sandboxPrefix
	}
	ws := o.workspace
	if ws != "" {
		if !filepath.IsAbs(ws) && e.dir != "" {
			ws = filepath.Join(e.dir, ws)
		}
		abs, err := filepath.Abs(ws)
		if err != nil {
			return err
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return usagef("--workspace %s: not a directory", o.workspace)
		}
		ws = abs
	}
	srv := mcpserver.New(mcpserver.Options{
		Workspace: ws,
		Open: func(ctx context.Context, dir string) (*ckpt.Repo, error) {
			// The same options as every other command. The pinned
			// workspace is used as is; a client's root, or the current
			// directory (dir ""), is where discovery starts, so the CLI
			// run there finds the same workspace and store.
			// Every global flag (--store, --backend, --git-ref-prefix,
			// --max-file-size, ...) reaches the server: a copy of the
			// command's env, without its open repository and output.
			sub := *e
			sub.stdout, sub.repo, sub.bar, sub.workspace = io.Discard, nil, nil, ""
			switch {
			case dir != "" && dir == ws:
				sub.workspace = dir
			case dir != "":
				sub.dir = dir
			}
			return (&sub).open(true)
		},
	})
	defer srv.Close()
	err := srv.Run(e.ctx, mcpserver.StdioTransport(e.stdin, e.stdout))
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return fmt.Errorf("mcp: %w", err)
}
