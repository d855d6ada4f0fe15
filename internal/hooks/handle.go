package hooks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/seed1cedbf7c/ckpt"
)

// ProjectDirEnv names the environment variable in which an agent tells
// its hooks the project's directory.
var ProjectDirEnv = map[string]string{
	ClaudeCode: "CLAUDE_PROJECT_DIR",
	Gemini:     "GEMINI_PROJECT_DIR",
	QwenCode:   "QWEN_PROJECT_DIR",
	Droid:      "FACTORY_PROJECT_DIR",
	Copilot:    "COPILOT_PROJECT_DIR",
}

// Defaults bounding a hook call.
const (
	// DefaultLockTimeout is how long a hook waits for a store another ckpt
	// process holds before it skips the event (and says so).
	DefaultLockTimeout = 2 * time.Second
	// DefaultTimeout bounds a whole hook call, under the 30 s the
	// installed entries give the agent to wait.
	DefaultTimeout = 25 * time.Second
)

// Options configure [Handle] and [Run].
type Options struct {
	// Store is the store directory ("" for the workspace's default store).
	Store string
	// Backend, GitRefPrefix and MaxFileSize are [ckpt.Options]' fields of
	// the same names: the store is opened as every ckpt command opens it
	// (the CLI resolves them from its flags, CKPT_STORE and CKPT_BACKEND
	// for hooks and commands alike), so a hook never creates a second
	// store beside the one the user's commands use.
	Backend      string
	GitRefPrefix string
	MaxFileSize  int64
	// Workspace, if set, is the workspace itself (ckpt --workspace DIR):
	// not found from the directories below.
	Workspace string
	// ProjectDir is the directory the agent works for, if it says
	// ($CLAUDE_PROJECT_DIR, $GEMINI_PROJECT_DIR; see [ProjectDirEnv]): the
	// workspace is found from there rather than from the payload's cwd,
	// which follows the agent's shell wherever it goes.
	ProjectDir string
	// Dir is where to find the workspace when neither ProjectDir nor the
	// payload's cwd is given ("" for the process's working directory).
	Dir string
	// LockTimeout bounds the wait for a store another process holds
	// (0: DefaultLockTimeout).
	LockTimeout time.Duration
	// NoMessages skips recording the turn's messages (the prompt is still
	// the turn's label and first message).
	NoMessages bool
	// Now is the engine's clock (tests); nil for time.Now.
	Now func() time.Time
	// Called is when the agent ran the hook (zero: when Handle starts). A
	// turn that began after it is not a Stop's to end.
	Called time.Time
	// Watch, if set, is called when a session starts or a turn begins, to
	// make sure the workspace has a watcher (watch mode), so the turn's
	// checkpoints read only what changed. An error is a note, not a failure.
	Watch func(*ckpt.Repo) error
}

// Result is what a hook call did.
type Result struct {
	Agent     string `json:"agent"`
	Event     string `json:"event"`
	Workspace string `json:"workspace,omitempty"`
	Session   string `json:"session,omitempty"`
	// Action says what was done: "opened session", "began turn 3", ...
	Action string `json:"action"`
	Turn   int    `json:"turn,omitempty"`
	// Checkpoint is the checkpoint taken, if any.
	Checkpoint string `json:"checkpoint,omitempty"`
	// Files is the number of files the ended turn changed.
	Files int `json:"files,omitempty"`
	// Messages is the number of messages recorded.
	Messages int `json:"messages,omitempty"`
	// Notes report what was skipped or could not be read; they are not
	// errors.
	Notes []string `json:"notes,omitempty"`
}

func (r *Result) notef(format string, a ...any) { r.Notes = append(r.Notes, fmt.Sprintf(format, a...)) }

// SessionID maps an agent's session id to a ckpt session id: itself when
// it is one (letters, digits, '.', '_', '-', up to 128), else a readable
// form with a hash of the original.
func SessionID(id string) string {
	if ckpt.ValidSessionID(id) {
		return id
	}
	var b strings.Builder
	for _, r := range id {
		if r < 128 && (r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := strings.TrimLeft(b.String(), "._-")
	if len(s) > 100 {
		s = s[:100]
	}
	h := sha256.Sum256([]byte(id))
	if s == "" {
		return "s-" + hex.EncodeToString(h[:8])
	}
	return s + "-" + hex.EncodeToString(h[:6])
}

// Handle acts on one event: it finds the workspace (from opts.ProjectDir,
// else the event's cwd, else opts.Dir), opens its store and drives the
// session. The Result says what it did, with notes on what it skipped.
func Handle(ctx context.Context, ev *Event, opts Options) (*Result, error) {
	called := opts.Called
	if called.IsZero() {
		called = time.Now()
	}
	res := &Result{Agent: ev.Agent, Event: ev.Name}
	if ev.Kind == KindIgnore {
		res.Action = "ignored"
		if ev.Detail != "" {
			res.notef("ckpt does nothing for %s %s: %s", ev.Agent, ev.Name, ev.Detail)
		} else {
			res.notef("ckpt does nothing for %s %s", ev.Agent, ev.Name)
		}
		return res, nil
	}
	if ev.SessionID == "" {
		return res, fmt.Errorf("%s %s: the payload has no session id", ev.Agent, ev.Name)
	}
	// Named from here on, so a failure to open the store says whose
	// event it skipped.
	res.Session = SessionID(ev.SessionID)
	dir := opts.ProjectDir
	if dir == "" {
		dir = ev.Cwd
	}
	if dir == "" {
		dir = opts.Dir
	}
	if dir == "" {
		dir = "."
	}
	ws, explicit := opts.Workspace, opts.Workspace != ""
	if !explicit {
		var err error
		if ws, err = ckpt.FindWorkspace(dir, opts.Store); err != nil {
			return res, err
		}
	}
	if err := checkAdopt(ws, opts.Store, explicit); err != nil {
		return res, err
	}
	res.Workspace = ws
	lt := opts.LockTimeout
	if lt <= 0 {
		lt = DefaultLockTimeout
	}
	r, err := ckpt.Open(ctx, ws, ckpt.Options{Store: opts.Store, Backend: opts.Backend, GitRefPrefix: opts.GitRefPrefix,
		MaxFileSize: opts.MaxFileSize, LockTimeout: lt, Now: opts.Now})
	if err != nil {
		return res, err
	}
	defer r.Close()
	sid := res.Session
	if opts.Watch != nil && (ev.Kind == KindSessionStart || ev.Kind == KindPrompt || ev.Kind == KindTurnComplete) {
		if err := opts.Watch(r); err != nil {
			res.notef("no watcher (saves read the whole workspace): %v", err)
		}
	}
	open := func() (*ckpt.Controller, *ckpt.Session, error) {
		title := ""
		if ev.Kind == KindPrompt || ev.Kind == KindTurnComplete {
			title = firstLine(ev.Prompt, 60)
		}
		agent := ev.Agent
		if ev.Label != "" {
			agent = ev.Label
		}
		return r.Controller(ctx, ckpt.ControllerOptions{ID: sid, Exact: true, Create: &ckpt.SessionOptions{Agent: agent, Title: title}})
	}
	switch ev.Kind {
	case KindEdit:
		// Before an edit tool writes: keep the files it names that no
		// checkpoint holds (ignored), so a rewind puts them back.
		var rel []string
		for _, p := range ev.Paths {
			if q, ok := workspacePath(ws, ev.Cwd, p); ok {
				rel = append(rel, q)
			}
		}
		ignored := r.IgnoredFiles(rel)
		if len(ignored) == 0 {
			res.Action = "nothing to keep"
			return res, nil
		}
		ctl, _, err := r.Controller(ctx, ckpt.ControllerOptions{ID: sid, Exact: true})
		if errors.Is(err, ckpt.ErrNotFound) {
			res.Action = "nothing to keep"
			res.notef("no session %s: its turn's start was not recorded", sid)
			return res, nil
		}
		if err != nil {
			return res, err
		}
		var ps []ckpt.Path
		for _, p := range ignored {
			ps = append(ps, ckpt.Path(p))
		}
		taken, err := ctl.TrackIgnored(ctx, ps)
		if err != nil {
			return res, err
		}
		res.Action = "nothing to keep"
		if len(taken) > 0 {
			var names []string
			for _, p := range taken {
				names = append(names, ckpt.QuotePath(string(p)))
			}
			res.Action = "kept ignored " + strings.Join(names, ", ")
		}
		return res, nil

	case KindSessionStart:
		_, s, err := open()
		if err != nil {
			return res, err
		}
		res.Action = "opened session"
		if len(s.Turns) > 0 {
			res.Action = fmt.Sprintf("resumed session (%d turns)", len(s.Turns))
		}
		return res, nil

	case KindPrompt:
		// The session is usually there already: look it up without
		// writing (BeginTurn makes it the current one).
		ctl, s, err := r.Controller(ctx, ckpt.ControllerOptions{ID: sid, Exact: true})
		if errors.Is(err, ckpt.ErrNotFound) {
			ctl, s, err = open()
		}
		if err != nil {
			return res, err
		}
		t, err := ctl.BeginTurn(ctx, ev.Prompt)
		if err != nil {
			return res, err
		}
		if filepath.IsAbs(ev.Transcript) && s.Transcript != ev.Transcript {
			// Where a conversation rewind finds the agent's own
			// conversation to resume.
			if err := ctl.SetTranscript(ctx, ev.Transcript); err != nil {
				res.notef("transcript: %v", err)
			}
		}
		res.Action, res.Turn, res.Checkpoint = fmt.Sprintf("began turn %d", t.N), t.N, t.Begin.Short()
		return res, nil

	case KindStop, KindSessionEnd:
		// Nothing to create here: a session this hook never saw begin
		// has no turn to end.
		ctl, s, err := r.Controller(ctx, ckpt.ControllerOptions{ID: sid, Exact: true})
		if err != nil && !errors.Is(err, ckpt.ErrNotFound) {
			return res, err
		}
		n := 0
		if s != nil {
			n = len(s.Turns)
		}
		// A turn that began after this hook was called is not this
		// event's to end (a Stop that runs in the background, or late,
		// after the next prompt's hook).
		if n > 0 && s.Turns[n-1].Open() && s.Turns[n-1].Started.After(called) {
			res.Action = "nothing to end"
			res.notef("turn %d began after this %s was sent; the turn before it was ended when it began", n, ev.Name)
			return res, nil
		}
		if n == 0 || !s.Turns[n-1].Open() {
			if ev.Kind == KindStop {
				res.Action = "nothing to end"
				if ev.StopHookActive {
					res.notef("no turn in progress: this stop ends a continuation a stop hook asked for; its changes count as the next turn's starting state")
				} else {
					res.notef("no turn in progress (its start was not recorded); the next prompt begins one")
				}
			} else {
				res.Action = "closed session"
			}
			return res, nil
		}
		t, ended, err := ctl.EndTurnIfOpen(ctx, n)
		if err != nil {
			return res, err
		}
		if !ended { // another call ended it meanwhile
			res.Action = "nothing to end"
			res.notef("turn %d was ended by another call meanwhile", n)
			return res, nil
		}
		res.Action, res.Turn, res.Files = fmt.Sprintf("ended turn %d", t.N), t.N, len(t.Files)
		if t.End != nil {
			res.Checkpoint = t.End.Short()
		}
		if ev.Kind == KindSessionEnd {
			res.Action += " (session end)"
			return res, nil
		}
		if filepath.IsAbs(ev.Transcript) && s.Transcript != ev.Transcript {
			// An agent that names its transcript only at Stop (Copilot).
			if err := ctl.SetTranscript(ctx, ev.Transcript); err != nil {
				res.notef("transcript: %v", err)
			}
		}
		if !opts.NoMessages {
			addMessages(ctx, ctl, ev, t, res)
		}
		return res, nil

	case KindTurnComplete:
		ctl, _, err := open()
		if err != nil {
			return res, err
		}
		t, err := ctl.RecordTurn(ctx, ev.Prompt)
		if err != nil {
			return res, err
		}
		res.Action, res.Turn, res.Files = fmt.Sprintf("recorded turn %d", t.N), t.N, len(t.Files)
		if t.End != nil {
			res.Checkpoint = t.End.Short()
		}
		if !opts.NoMessages {
			addMessages(ctx, ctl, ev, t, res)
		}
		return res, nil

	case KindCompact:
		ctl, _, err := open()
		if err != nil {
			return res, err
		}
		text := "the agent compacted its context"
		if ev.Detail != "" {
			text += " (" + ev.Detail + ")"
		}
		if _, err := ctl.AddMessage(ctx, ckpt.Message{Role: "system", Content: text}); err != nil {
			return res, err
		}
		res.Action, res.Messages = "noted compaction", 1
		return res, nil
	}
	return res, fmt.Errorf("%s %s: unhandled event kind %q", ev.Agent, ev.Name, ev.Kind)
}

// addMessages records the turn's assistant replies and tool calls. Failures
// are notes: the turn itself is recorded.
func addMessages(ctx context.Context, ctl *ckpt.Controller, ev *Event, t *ckpt.Turn, res *Result) {
	msgs, err := turnMessages(ev, t.Prompt)
	if err != nil {
		res.notef("messages: %v", err)
	}
	if len(msgs) == 0 {
		return
	}
	for i := range msgs {
		msgs[i].Turn = t.N
	}
	added, err := ctl.AddMessages(ctx, msgs)
	res.Messages = len(added)
	if err != nil {
		res.notef("messages: %v", err)
	}
}

func firstLine(s string, max int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return clip(s, max)
}

// RunOptions configure [Run].
type RunOptions struct {
	Options
	// Timeout bounds the whole call (0: DefaultTimeout).
	Timeout time.Duration
	// Stderr receives errors and notes ("" output when all went well).
	Stderr io.Writer
	// Log is the log file ("" for [LogPath]; "-" for none).
	Log string
	// FailureFile keeps the last failure ("" for [FailurePath]; "-" for
	// none): a failed call records itself there, and a call that reaches
	// a workspace and succeeds clears it.
	FailureFile string
}

// ErrTimeout: a hook call ran out of time and was abandoned.
var ErrTimeout = errors.New("timed out")

// Run handles one hook call end to end, the way `ckpt hook AGENT` does:
// it parses the payload, handles the event within the time limit, and
// reports errors and notes on stderr and in the log. The agent must not
// be failed by ckpt: callers exit 0 whatever the error (unless the user
// asked otherwise).
func Run(ctx context.Context, agent string, payload []byte, opts RunOptions) (*Result, error) {
	start := time.Now()
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	stderr := opts.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	logPath := opts.Log
	if logPath == "" {
		logPath = LogPath()
	}
	ev, err := Parse(agent, payload)
	res := &Result{Agent: agent}
	if opts.Called.IsZero() {
		opts.Called = start
		if opts.Now != nil {
			opts.Called = opts.Now()
		}
	}
	if err == nil {
		res.Event = ev.Name
		type outcome struct {
			res *Result
			err error
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		done := make(chan outcome, 1)
		go func() {
			r, err := Handle(ctx, ev, opts.Options)
			done <- outcome{r, err}
		}()
		select {
		case o := <-done:
			res, err = o.res, o.err
		case <-ctx.Done():
			// Give the operation a moment to notice the cancellation,
			// then leave it: the agent must not wait longer.
			select {
			case o := <-done:
				res, err = o.res, o.err
			case <-time.After(500 * time.Millisecond):
			}
			if err == nil || errors.Is(err, context.DeadlineExceeded) {
				err = fmt.Errorf("%w after %s; the event was skipped", ErrTimeout, timeout)
			}
		}
		if res == nil {
			res = &Result{Agent: agent, Event: ev.Name}
		}
	}
	report(stderr, logPath, failureFile(opts), res, err, start, payload)
	return res, err
}

func failureFile(opts RunOptions) string {
	if opts.FailureFile == "" {
		return FailurePath()
	}
	return opts.FailureFile
}

// ReportFailure reports a hook call that failed outside [Run]: the guard
// process of `ckpt hook` reports with it a child that crashed, was killed
// or ran past its time. It says so on opts.Stderr and in the log, naming
// the event when the payload says which (it is parsed here only for that,
// and a parser that panics on it does not stop the report).
func ReportFailure(agent string, payload []byte, err error, elapsed time.Duration, opts RunOptions) {
	stderr := opts.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	logPath := opts.Log
	if logPath == "" {
		logPath = LogPath()
	}
	res := &Result{Agent: agent}
	func() {
		defer func() { recover() }()
		if ev, perr := Parse(agent, payload); perr == nil {
			res.Event = ev.Name
		}
	}()
	report(stderr, logPath, failureFile(opts), res, err, time.Now().Add(-elapsed), payload)
}

// report writes the outcome to the log (one line, and the payload of a
// call that failed to parse), errors and notes to stderr, and keeps a
// failure (or clears the last one) in failFile.
func report(stderr io.Writer, logPath, failFile string, res *Result, err error, start time.Time, payload []byte) {
	elapsed := time.Since(start)
	var ferr error
	if err != nil {
		ferr = recordFailure(failFile, &Failure{Time: time.Now().UTC(), Agent: res.Agent, Event: res.Event, Session: res.Session,
			Workspace: res.Workspace, Error: flat(err.Error()), Next: nextStep(err, logPath), Log: logPath})
	} else if res.Workspace != "" {
		ferr = clearFailure(failFile, start)
	}
	if ferr != nil {
		fmt.Fprintf(stderr, "ckpt: hook failure record: %v\n", ferr)
	}
	what := res.Agent
	if res.Event != "" {
		what += " " + logEvent(res.Event)
	}
	var line strings.Builder
	fmt.Fprintf(&line, "%s %s", time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), what)
	if res.Session != "" {
		fmt.Fprintf(&line, " session=%s", res.Session)
	}
	if res.Workspace != "" {
		fmt.Fprintf(&line, " workspace=%s", logWorkspace(res.Workspace))
	}
	if err != nil {
		fmt.Fprintf(&line, " error: %s", flat(err.Error()))
		if h := ckpt.Hint(err); h != "" {
			fmt.Fprintf(&line, " (hint: %s)", h)
		}
		var pe *ParseError
		if errors.As(err, &pe) {
			fmt.Fprintf(&line, " payload=%q", clip(string(payload), 500))
		}
	} else {
		fmt.Fprintf(&line, ": %s", res.Action)
		if res.Checkpoint != "" {
			fmt.Fprintf(&line, " at %s", res.Checkpoint)
		}
		if res.Files > 0 {
			fmt.Fprintf(&line, ", %d file(s) changed", res.Files)
		}
		if res.Messages > 0 {
			fmt.Fprintf(&line, ", %d message(s)", res.Messages)
		}
	}
	for _, n := range res.Notes {
		fmt.Fprintf(&line, "; note: %s", flat(n))
	}
	fmt.Fprintf(&line, " (%dms)\n", elapsed.Milliseconds())
	if logPath != "-" {
		if lerr := appendLog(logPath, line.String()); lerr != nil {
			fmt.Fprintf(stderr, "ckpt: hook log: %v\n", lerr)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "ckpt: hook %s: %v\n", what, err)
		if h := ckpt.Hint(err); h != "" {
			fmt.Fprintf(stderr, "ckpt: hint: %s\n", h)
		}
		if errors.Is(err, ckpt.ErrLocked) {
			fmt.Fprintf(stderr, "ckpt: hint: the event was skipped so the agent does not wait; raise --lock-timeout to wait longer\n")
		}
		if logPath != "-" {
			fmt.Fprintf(stderr, "ckpt: the hook log is %s\n", logPath)
		}
	}
	for _, n := range res.Notes {
		fmt.Fprintf(stderr, "ckpt: hook %s: note: %s\n", what, n)
	}
}

// flat puts a message on one line (the log has one line per call).
func flat(s string) string { return flattener.Replace(s) }

var flattener = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")

// LogPath returns the hook log: $CKPT_HOOK_LOG, else hooks.log in ckpt's
// state directory ($XDG_STATE_HOME/ckpt or ~/.local/state/ckpt).
func LogPath() string {
	if p := os.Getenv("CKPT_HOOK_LOG"); p != "" {
		return p
	}
	d, err := ckpt.StateDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "ckpt-hooks.log")
	}
	return filepath.Join(d, "hooks.log")
}

// maxLog is the log's size at which it is rotated to hooks.log.1.
const maxLog = 1 << 20

func appendLog(path, line string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if fi, err := os.Stat(path); err == nil && fi.Size() > maxLog {
		os.Rename(path, path+".1")
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	// The log quotes payloads (prompts, paths): private, also when an
	// older ckpt or a lax umask made it readable by others.
	if fi, err := f.Stat(); err == nil && fi.Mode().Perm()&0o077 != 0 {
		f.Chmod(fi.Mode().Perm() &^ 0o077)
	}
	_, err = f.WriteString(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// workspacePath returns the workspace-relative, slash-separated path of
// the file an agent's tool names (absolute, or relative to cwd), and false
// for a path outside the workspace. The directories on the way are
// resolved as the tool's write would resolve them: a symlinked directory
// inside the workspace leads to the file it writes (ws/link/f is sub/f
// when link points to sub), and one leading out of the workspace leads
// out. The file itself may be a symlink: that is the path kept.
func workspacePath(ws, cwd, p string) (string, bool) {
	if !filepath.IsAbs(p) {
		if cwd == "" {
			cwd = ws
		}
		p = filepath.Join(cwd, p)
	}
	p = filepath.Clean(p)
	if len(p) > maxPath {
		// No tool writes there (ENAMETOOLONG), and resolving it would
		// take time that grows with the square of its length.
		return "", false
	}
	q := filepath.Join(evalDir(filepath.Dir(p)), filepath.Base(p))
	for _, w := range []string{evalDir(ws), ws} {
		if rel, err := filepath.Rel(w, q); err == nil && rel != "." && filepath.IsLocal(rel) {
			return filepath.ToSlash(rel), true
		}
	}
	return "", false
}

// maxPath is the longest path a file system call takes (Linux's
// PATH_MAX).
const maxPath = 4096

// evalDir resolves a directory's symlinks — those of its longest
// existing ancestor, for a directory not made yet — or returns it as it
// is.
func evalDir(d string) string {
	rest := ""
	for cur := d; ; {
		if e, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(e, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return d
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// lazyRE compiles expr on first use: a hook process pays only for the
// expressions its event needs, not for every one when the package loads.
func lazyRE(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
