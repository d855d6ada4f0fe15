package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/hooks"
	"github.com/spf13/cobra"
)

// Exit statuses.
const (
	ExitOK        = 0
	ExitError     = 1
	ExitUsage     = 2
	ExitIntegrity = 3
	// ExitDeadLetters: ckpt process dead-lettered messages (every attempt
	// failed; their changes were reverted), and nothing else went wrong.
	ExitDeadLetters = 4
	// ckpt run exits with the command's own status; its own failures use
	// statuses a command rarely does, as env, nice and timeout do:
	// ExitRunIntegrity for an integrity failure, ExitRunError for any
	// other (usage included).
	ExitRunIntegrity = 124
	ExitRunError     = 125
	// ckpt diff --exit-code and --quiet exit 1 when there are
	// differences; their other failures exit ExitDiffError, as git's do.
	ExitDiffError = 128
)

// env is what every command shares: I/O, global flags, the open repo.
type env struct {
	ctx context.Context
	// args are the command line's arguments (the hook's guard runs them
	// again in its child).
	args   []string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer

	dir         string
	store       string
	backend     string
	gitPrefix   string
	quiet       bool
	maxFileSize string
	progress    string

	repo      *ckpt.Repo
	bar       *progressBar
	noRecover bool
	// workspace, if set, is the workspace itself (ckpt mcp --workspace,
	// a client's root): no discovery from dir.
	workspace string
	// lockTimeout, if set, is the command's own wait for another
	// process's lock (CKPT_LOCK_TIMEOUT still overrides it).
	lockTimeout time.Duration
	// noCreate: whether the command only looks, and what it sees when
	// there is no store (see lookOnly).
	noCreate int
	// absent, when the command sees an empty store in memory for want of
	// one, is why.
	absent *ckpt.NoStoreError
}

// usageError marks errors that exit with status 2. usage, if set, is
// the command's usage line, printed after the message.
type usageError struct {
	err   error
	usage string
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return &usageError{err: fmt.Errorf(format, a...)} }

// exitStatusError ends the command with a given status, silently.
type exitStatusError struct{ code int }

func (e *exitStatusError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// failedError is an error reported as usual but ending with status code:
// diff --exit-code keeps 1 for "there are differences", so its ordinary
// failures end with 128, as git's do.
type failedError struct {
	error
	code int
}

func (e *failedError) Unwrap() error { return e.error }

// Main runs ckpt with args and returns the exit status.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if p := os.Getenv("CKPT_CPUPROFILE"); p != "" {
		// For performance reports: CKPT_CPUPROFILE=cpu.out ckpt save
		if f, err := os.Create(p); err == nil {
			pprof.StartCPUProfile(f)
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
	}
	e := &env{ctx: ctx, args: args, stdin: stdin, stdout: stdout, stderr: stderr}
	root := newRootCmdFor(e, invokedCommand(args))
	root.SetArgs(attachedRenameScore(root, args))
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if m := cobraUnknown.FindStringSubmatch(errString(err)); m != nil && cmd != nil {
		// cobra's own "unknown command" (with its "Did you mean this?"):
		// say it as ckpt does, the suggestions in a hint.
		err = unknownCommand(cmd, m[1])
	}
	if e.bar != nil {
		e.bar.stop()
	}
	if err == nil && e.repo != nil {
		// The command succeeded, but updating the git backend's refs after
		// it did not: say so, and exit with an error.
		err = e.repo.GitSyncError()
	}
	if e.repo != nil {
		e.repo.Close()
	}
	if err == nil {
		return ExitOK
	}
	code := report(stderr, err)
	if isRunCmd(root, cmd) {
		code = runExitCode(err, code)
	}
	if agent := hookCall(args); code == ExitUsage && agent != "" {
		// An agent takes a hook's exit status 2 as "block": a mistyped
		// flag in an installed hook's command must not block every
		// prompt. It is a failure like any other (for hook status to
		// show): exit 0, or 1 with --strict.
		hooks.ReportFailure(agent, nil, err, 0, hooks.RunOptions{Stderr: io.Discard})
		code = ExitOK
		if slices.Contains(args, "--strict") {
			code = ExitError
		}
	}
	return code
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// isRunCmd reports whether the command was ckpt run (also when its flags
// were wrong: cobra then returns it too).
func isRunCmd(root, cmd *cobra.Command) bool {
	if cmd != nil && cmd != root {
		return cmd.Name() == "run" && cmd.Parent() == root
	}
	return false
}

// runExitCode maps ckpt's own exit status in ckpt run (not the command's,
// passed through as an exitStatusError) to one a command rarely uses.
func runExitCode(err error, code int) int {
	var es *exitStatusError
	switch {
	case errors.As(err, &es), code == 130 || code == 143:
		return code
	case code == ExitIntegrity:
		return ExitRunIntegrity
	}
	return ExitRunError
}

// hookCall returns the agent whose hook program args run (ckpt ... hook
// AGENT ..., not its install or uninstall), or "".
func hookCall(args []string) string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] != "hook" || !slices.Contains(hooks.Programs, args[i+1]) {
			continue
		}
		if i+2 < len(args) && (args[i+2] == "install" || args[i+2] == "uninstall") {
			return ""
		}
		return args[i+1]
	}
	return ""
}

// isCobraUsage recognizes cobra's own usage errors.
func isCobraUsage(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "unknown command") || strings.HasPrefix(s, "unknown flag") ||
		strings.HasPrefix(s, "unknown shorthand flag")
}

// report prints err (and its hint) and returns the exit status for it.
func report(w io.Writer, err error) int {
	var es *exitStatusError
	if errors.As(err, &es) {
		return es.code // the command's own status; nothing to add
	}
	msg := err.Error()
	fmt.Fprintf(w, "ckpt: %s\n", msg)
	var ue *usageError
	if errors.As(err, &ue) && ue.usage != "" {
		fmt.Fprintf(w, "usage: %s\n", ue.usage)
	}
	if h := ckpt.Hint(err); h != "" {
		fmt.Fprintf(w, "ckpt: hint: %s\n", h)
	} else if isCobraUsage(err) && !errors.As(err, &ue) {
		// An unknown top-level command. Flag and argument errors are
		// usageErrors that already say which --help to run.
		fmt.Fprintf(w, "ckpt: hint: run 'ckpt --help' for the list of commands\n")
	}
	return exitCode(err)
}

func exitCode(err error) int {
	var ue *usageError
	var es *exitStatusError
	var ne *ckpt.NameError
	var fe *failedError
	switch {
	case errors.As(err, &es):
		return es.code
	case errors.As(err, &fe):
		if c := exitCode(fe.error); c != ExitError {
			return c
		}
		return fe.code
	case errors.As(err, &ue), isCobraUsage(err), errors.As(err, &ne):
		return ExitUsage
	case errors.Is(err, ckpt.ErrCorrupt), errors.Is(err, ckpt.ErrIntegrity):
		return ExitIntegrity
	}
	return ExitError
}

func newRootCmd(e *env) *cobra.Command { return newRootCmdFor(e, "") }

// subcommand is a top-level command: its name and how to make it.
type subcommand struct {
	name string
	new  func(*env) *cobra.Command
}

// commandGroups are the top-level commands, in the groups and the order
// --help lists them in.
var commandGroups = []struct {
	id, title string
	cmds      []subcommand
}{
	{"checkpoints", "Checkpoints:", []subcommand{{"save", newSaveCmd}, {"status", newStatusCmd}, {"diff", newDiffCmd},
		{"restore", newRestoreCmd}, {"undo", newUndoCmd}, {"redo", newRedoCmd}, {"op", newOpCmd}, {"snapshot", newSnapshotCmd}, {"watch", newWatchCmd}}},
	{"history", "History:", []subcommand{{"list", newListCmd}, {"log", newLogCmd}, {"show", newShowCmd}, {"cat", newCatCmd}, {"ls", newLsCmd},
		{"branch", newBranchCmd}, {"switch", newSwitchCmd}, {"tag", newTagCmd}, {"tags", newTagsCmd}, {"ancestor", newAncestorCmd}}},
	{"sessions", "Sessions (an agent's turns):", []subcommand{{"session", newSessionCmd}, {"turn", newTurnCmd},
		{"rewind", newRewindCmd}, {"fork", newForkCmd}, {"summarize", newSummarizeCmd}}},
	{"runs", "Guarded runs (Decree):", []subcommand{{"run", newRunCmd}, {"process", newProcessCmd}, {"runs", newRunsCmd}}},
	{"remotes", "Remotes (checkpoints that outlive the machine):", []subcommand{{"remote", newRemoteCmd}, {"push", newPushCmd},
		{"pull", newPullCmd}, {"clone", newCloneCmd}}},
	{"store", "Store:", []subcommand{{"fsck", newFsckCmd}, {"recover", newRecoverCmd}, {"gc", newGCCmd}, {"stats", newStatsCmd},
		{"clear", newClearCmd}, {"workspaces", newWorkspacesCmd}, {"config", newConfigCmd}, {"version", newVersionCmd}}},
	{"integrations", "Integrations:", []subcommand{{"mcp", newMCPCmd}, {"serve", newServeCmd}, {"hook", newHookCmd}}},
}

// invokedCommand returns the top-level command args run, when they name
// one first (no flag before it, not help or completion): Main then makes
// only that command, not all forty (a third of a millisecond at every
// start, twice per agent hook event). "" otherwise.
func invokedCommand(args []string) string {
	if len(args) == 0 {
		return "" // (ckpt man, not in the table, needs every command)
	}
	for _, g := range commandGroups {
		for _, sc := range g.cmds {
			if sc.name == args[0] {
				return sc.name
			}
		}
	}
	return ""
}

// newRootCmdFor makes the root command with every command, or with only
// the top-level command named only.
func newRootCmdFor(e *env, only string) *cobra.Command {
	root := &cobra.Command{
		Use:   "ckpt",
		Short: "Checkpoints and rewind for AI coding agents",
		Long: `ckpt checkpoints a whole workspace in milliseconds, shows exactly what changed,
and restores any earlier state — verified, undoable, and without touching git.

The store lives outside the workspace (in $XDG_STATE_HOME/ckpt by default), so
nothing run inside the workspace can destroy it. With --backend git it lives in
the repository's .git/ckpt instead, and snapshots and the timeline are also
detached git commits under refs/ckpt/ (HEAD, branches, index, stash untouched).

Revisions: a checkpoint id or any unique prefix of 4+ hex digits, HEAD, HEAD~N,
@last (the newest checkpoint of any kind, a partial one included), or a
snapshot, tag or branch name.

Exit status: 0 ok, 1 error, 2 usage, 3 integrity failure (corrupt store or a
restore that does not verify), 130 or 143 ended by Ctrl-C or SIGTERM (what was
cut short is finished or rolled back by the next command).

A store another user owns is refused unless CKPT_SAFE_STORE lists it
(':'-separated directories, or '*').`,
		Example: `  ckpt save -m "before refactor"   # checkpoint the workspace
  ckpt diff                         # what changed since the last checkpoint
  ckpt list                         # checkpoints, newest first
  ckpt restore HEAD~1               # go back one checkpoint (undoable)
  ckpt undo                         # take the last save or restore back`,
		SilenceErrors:     true,
		SilenceUsage:      true,
		CompletionOptions: cobra.CompletionOptions{HiddenDefaultCmd: true},
	}
	pf := root.PersistentFlags()
	pf.StringVarP(&e.dir, "dir", "C", "", "run as if started in `DIR`")
	pf.StringVar(&e.workspace, "workspace", "", "the workspace is `DIR` itself (default: found from the current directory, as git finds a repository)")
	pf.StringVar(&e.store, "store", "", "store `DIR` (default: $CKPT_STORE, else under $XDG_STATE_HOME/ckpt)")
	pf.StringVar(&e.backend, "backend", "", "store `BACKEND`: sqlite or git (default: $CKPT_BACKEND, else the store's setting, else detected)")
	pf.StringVar(&e.gitPrefix, "git-ref-prefix", "", "git backend's ref namespace `PREFIX` (default refs/ckpt; refs/sandbox: the sandbox snapshot tools'), saved")
	pf.BoolVarP(&e.quiet, "quiet", "q", false, "print only ids, or nothing")
	pf.StringVar(&e.maxFileSize, "max-file-size", "", "skip files larger than `SIZE` (default 100MiB; e.g. 10MiB, 1GiB)")
	pf.StringVar(&e.progress, "progress", "auto", "progress on stderr: auto (a bar on a terminal), json (progress and events as JSON lines), none")
	root.PersistentPreRun = func(c *cobra.Command, args []string) { e.noCreate = lookOnly(c, args) }
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return cmdUsageError(c, err, "") })
	// The commands, in the groups and the order --help lists them in.
	cobra.EnableCommandSorting = false
	for _, g := range commandGroups {
		root.AddGroup(&cobra.Group{ID: g.id, Title: g.title})
		for _, sc := range g.cmds {
			if only != "" && sc.name != only {
				continue
			}
			c := sc.new(e)
			c.GroupID = g.id
			root.AddCommand(c)
		}
	}
	if only == "" {
		root.AddCommand(newManCmd(e)) // hidden: for packagers
	}
	root.SetHelpCommandGroupID("store")
	setVersion(root)
	if only == "" {
		setCompletionCmd(root)
	}
	setCompletions(e, root)
	for _, c := range root.Commands() {
		wrapArgs(c)
	}
	return root
}

// wrapArgs makes argument errors usage errors (exit 2) that say what the
// command takes, its usage line and where its help is.
func wrapArgs(c *cobra.Command) {
	if c.Args != nil {
		inner := c.Args
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := inner(cmd, args); err != nil {
				return argsError(cmd, args, err)
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		wrapArgs(sub)
	}
}

// findWorkspace finds the workspace the way every command does:
// --workspace DIR as it is (relative to -C DIR), else found from -C DIR or
// the current directory (see ckpt.FindWorkspace) with the store named.
func (e *env) findWorkspace(store string) (string, error) {
	if ws := e.workspace; ws != "" {
		if !filepath.IsAbs(ws) && e.dir != "" {
			ws = filepath.Join(e.dir, ws)
		}
		abs, err := filepath.Abs(ws)
		if err != nil {
			return "", err
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return "", usagef("--workspace %s: not a directory", e.workspace)
		}
		return abs, nil
	}
	dir := e.dir
	if dir == "" {
		dir = "."
	}
	return ckpt.FindWorkspace(dir, store)
}

// storeOptions resolves which store to open, the way every command does
// — and every hook, so a hook never opens (or creates) another store than
// the user's commands: --store, else $CKPT_STORE; --backend, else
// $CKPT_BACKEND, else sqlite when --store names a store without a backend
// setting, else (empty) the store's setting or what ckpt.Open detects;
// --git-ref-prefix and --max-file-size.
func (e *env) storeOptions() (ckpt.Options, error) {
	opts := ckpt.Options{Store: e.store, Backend: e.backend, GitRefPrefix: e.gitPrefix}
	if opts.Store == "" {
		opts.Store = os.Getenv("CKPT_STORE")
	}
	if opts.Backend == "" {
		opts.Backend = os.Getenv("CKPT_BACKEND")
	}
	if opts.Backend == "" && e.store != "" {
		// --store names a sqlite store: it wins over a git-backend store
		// found in the repository, unless its own settings say git.
		if set, err := ckpt.ConfigSet(e.store); err == nil && set["backend"] == "" {
			opts.Backend = ckpt.BackendSQLite
		}
	}
	switch opts.Backend {
	case "", ckpt.BackendSQLite, ckpt.BackendGit:
	default:
		return opts, usagef("unknown backend %q: want sqlite or git", opts.Backend)
	}
	if e.maxFileSize != "" {
		// One size parser for every flag and setting: 10mib is 10 MiB.
		n, err := ckpt.ParseSize(e.maxFileSize)
		if err == nil && n <= 0 {
			err = fmt.Errorf("want a size above 0, not %q", e.maxFileSize)
		}
		if err != nil {
			return opts, usagef("--max-file-size: %v", err)
		}
		opts.MaxFileSize = n
	}
	return opts, nil
}

// clockOptions sets the lock timeout (the command's, CKPT_LOCK_TIMEOUT)
// and the clock (CKPT_NOW) of opts.
func (e *env) clockOptions(opts *ckpt.Options) error {
	if e.lockTimeout > 0 {
		opts.LockTimeout = e.lockTimeout
	}
	if v := os.Getenv("CKPT_LOCK_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return usagef("CKPT_LOCK_TIMEOUT: %v", err)
		}
		opts.LockTimeout = d
	}
	if v := os.Getenv("CKPT_NOW"); v != "" {
		// A fixed clock, for tests and reproducible examples.
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return usagef("CKPT_NOW: want an RFC 3339 time like 2026-04-23T12:30:00Z: %v", err)
		}
		opts.Now = func() time.Time { return t }
	}
	return nil
}

// open finds the workspace and opens its store.
func (e *env) open(json bool) (*ckpt.Repo, error) {
	if e.repo != nil {
		return e.repo, nil
	}
	opts, err := e.storeOptions()
	if err != nil {
		return nil, err
	}
	opts.NoRecover = e.noRecover
	opts.NoCreate = e.noCreate != createStore
	ws, err := e.findWorkspace(opts.Store)
	if err != nil {
		return nil, err
	}
	if err := e.clockOptions(&opts); err != nil {
		return nil, err
	}
	opts.Waiting = func(holder string) {
		if !e.quiet {
			fmt.Fprintf(e.stderr, "ckpt: waiting for the store, held by %s\n", holder)
		}
	}
	mode := e.progress
	if v := os.Getenv("CKPT_PROGRESS"); v != "" && (mode == "" || mode == "auto") {
		mode = v
	}
	var lines *jsonLines
	switch mode {
	case "", "auto", "always":
		if !json && !e.quiet && (isTerminal(e.stderr) || mode == "always") {
			e.bar = newProgressBar(e.stderr)
			opts.Progress = e.bar.update
		}
	case "json":
		lines = &jsonLines{w: e.stderr}
		opts.Progress = lines.progress
	case "none":
	default:
		return nil, usagef("--progress %q: want auto, json or none", mode)
	}
	r, err := ckpt.Open(e.ctx, ws, opts)
	var ns *ckpt.NoStoreError
	if errors.As(err, &ns) && e.noCreate == noStoreEmpty {
		// Nothing here yet: an empty history, and no store left behind.
		opts.Backend, opts.Store = ckpt.BackendMemory, ""
		r, err = ckpt.Open(e.ctx, ws, opts)
		e.absent = ns
	}
	if err != nil {
		return nil, err
	}
	if lines != nil {
		r.Subscribe(lines.event)
	}
	for _, w := range r.Warnings() {
		e.bar.clear()
		fmt.Fprintf(e.stderr, "ckpt: warning: %s\n", w)
	}
	for _, n := range r.Notes() {
		// Said once (e.g. the git backend initialised a repository), even
		// with -q.
		e.bar.clear()
		fmt.Fprintf(e.stderr, "ckpt: note: %s\n", n)
	}
	e.repo = r
	return r, nil
}

// printJSON writes v as indented JSON.
func (e *env) printJSON(v any) error {
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func (e *env) printf(format string, a ...any) { fmt.Fprintf(e.stdout, format, a...) }

// warnf prints a warning to stderr (not with -q).
func (e *env) warnf(format string, a ...any) {
	if !e.quiet {
		e.bar.clear()
		fmt.Fprintf(e.stderr, "ckpt: "+format+"\n", a...)
	}
}

// infof prints a line for people on stderr that is neither an error nor
// a warning (an empty listing, nothing to do), so without the "ckpt: "
// that marks those. Not with -q.
func (e *env) infof(format string, a ...any) {
	if !e.quiet {
		e.bar.clear()
		fmt.Fprintf(e.stderr, format+"\n", a...)
	}
}

func (e *env) doneProgress() {
	if e.bar != nil {
		e.bar.stop()
	}
}

// summary is a checkpoint's "+a ~m -d" against its parent.
func summary(s ckpt.Stats) string { return ckpt.FormatCounts(s.Added, s.Modified, s.Deleted) }

// refLabel formats a checkpoint's names for listings: "(HEAD, main, tag: v1)".
func refLabel(c *ckpt.Checkpoint) string {
	if l := c.Labels(); len(l) > 0 {
		return "(" + strings.Join(l, ", ") + ")"
	}
	return ""
}

func fmtTime(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") }

// displayPath shows a path for humans: quoted the way git does when it
// holds unusual bytes.
func displayPath(p ckpt.Path) string { return quotePath(string(p)) }
