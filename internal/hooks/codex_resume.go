package hooks

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt"
)

// Codex forks its own conversations: its app server's thread/fork takes
// a beforeTurnId and writes a new thread (a new rollout file, a new id)
// that ends before that turn, leaving the original as it is; `codex
// resume ID` then goes on from it. ckpt does not write Codex's rollout
// files itself: Codex (0.169) indexes them in its SQLite databases
// (state_5.sqlite, thread_history_1.sqlite), and a fork's rollout holds
// only its own turns, referring to its parent's rollout by byte offset
// (session_meta's history_base) — what only Codex keeps consistent. So
// a conversation rewind runs `codex app-server` (stdio, its hooks
// disabled: the fork runs no turn) and asks it.

// codexForkTimeout bounds the whole conversation with `codex app-server`;
// codexExitWait how long it may take to exit once it is over.
const (
	codexForkTimeout = 2 * time.Minute
	codexExitWait    = 10 * time.Second
)

// maxRPCLine bounds one line of the app server's output: a line longer
// than that is not an answer ckpt asked for (thread/fork excludes the
// turns, thread/turns/list asks for one), and reading it whole could
// take any amount of memory.
const maxRPCLine = 64 << 20

// codexTurn is one turn of a Codex rollout: its id and the text of its
// first user message (the prompt; later ones steered the turn).
type codexTurn struct {
	id, prompt string
}

// codexRollout reads a Codex rollout file's turns, in order, and whether
// the thread has history before the file's own turns (a fork that refers
// to its parent's rollout). A user message is a UserMessage item
// (item_completed, Codex 0.169) or a user_message event (older), of the
// turn the record names or else of the last task_started (which begins
// a turn; turn_context may come after the prompt).
func codexRollout(data []byte) (turns []codexTurn, inherited bool) {
	cur := ""
	seen := map[string]bool{}
	for _, l := range jsonLines(data) {
		var r struct {
			Type    string `json:"type"`
			Payload struct {
				Type         string          `json:"type"`
				TurnID       string          `json:"turn_id"`
				Message      string          `json:"message"`
				ForkedFromID string          `json:"forked_from_id"`
				HistoryBase  json.RawMessage `json:"history_base"`
				Item         struct {
					Type    string `json:"type"`
					Content []struct {
						Type string `json:"type"`
						Text string `json:"text"`
					} `json:"content"`
				} `json:"item"`
			} `json:"payload"`
		}
		if json.Unmarshal(l, &r) != nil {
			continue
		}
		p := &r.Payload
		if r.Type == "session_meta" && (p.ForkedFromID != "" || len(p.HistoryBase) > 0 && string(p.HistoryBase) != "null") {
			inherited = true
		}
		if r.Type != "event_msg" {
			continue
		}
		if p.Type == "task_started" {
			cur = p.TurnID
			continue
		}
		var text string
		switch {
		case p.Type == "item_completed" && p.Item.Type == "UserMessage":
			var parts []string
			for _, c := range p.Item.Content {
				if c.Type == "text" {
					parts = append(parts, c.Text)
				}
			}
			text = strings.Join(parts, "\n")
		case p.Type == "user_message":
			text = p.Message
		default:
			continue
		}
		id := p.TurnID
		if id == "" {
			id = cur
		}
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		turns = append(turns, codexTurn{id: id, prompt: text})
	}
	return turns, inherited
}

// codexResume forks the Codex thread s.ID before the turn whose prompt
// is want (skipping the last `later` such turns) with Codex's app server.
func codexResume(s *ckpt.Session, want string, later int, o ResumeOptions) (*AgentResume, error) {
	data, whole, err := readTail(s.Transcript, maxTail)
	if err != nil {
		return nil, fmt.Errorf("%w: transcript: %v", ErrNoResume, err)
	}
	turns, inherited := codexRollout(data)
	at, n := -1, 0
	for i := len(turns) - 1; i >= 0; i-- {
		if strings.TrimSpace(turns[i].prompt) != want {
			continue
		}
		if n == later {
			at = i
			break
		}
		n++
	}
	if at < 0 {
		return nil, fmt.Errorf("%w: the turn's prompt is not in %s", ErrNoResume, s.Transcript)
	}
	if at == 0 && whole && !inherited {
		return &AgentResume{Agent: Codex, Command: []string{"codex"}}, nil // a new conversation
	}
	ar := &AgentResume{Agent: Codex, At: turns[at].id}
	if o.DryRun {
		return ar, nil
	}
	ctx := o.Context
	if ctx == nil {
		ctx = context.Background()
	}
	var gone []string // the turns the fork must not have
	for _, t := range turns[at:] {
		gone = append(gone, t.id)
	}
	id, path, err := codexFork(ctx, s, ar.At, gone)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoResume, err)
	}
	ar.File, ar.Written = path, true
	ar.Command = []string{"codex", "resume", id}
	return ar, nil
}

// codexHome returns the CODEX_HOME that holds a rollout file
// (HOME/sessions/YYYY/MM/DD/rollout-….jsonl), or "".
func codexHome(rollout string) string {
	d := filepath.Dir(rollout)
	for range 3 {
		d = filepath.Dir(d)
	}
	if filepath.Base(d) != "sessions" {
		return ""
	}
	return filepath.Dir(d)
}

// rpcMessage is a JSON-RPC message of Codex's app server (it leaves out
// the "jsonrpc" member).
type rpcMessage struct {
	ID     *int64          `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params any             `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// codexRPC is a conversation with `codex app-server` over stdio.
type codexRPC struct {
	in   io.WriteCloser
	out  *bufio.Reader
	next int64
}

func (c *codexRPC) send(m rpcMessage) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = c.in.Write(append(b, '\n'))
	return err
}

// call sends a request and returns its result, skipping the server's
// notifications (and refusing its requests: ckpt answers none).
func (c *codexRPC) call(method string, params, result any) error {
	c.next++
	id := c.next
	if err := c.send(rpcMessage{ID: &id, Method: method, Params: params}); err != nil {
		return fmt.Errorf("%s: %v", method, err)
	}
	for {
		line, err := readLine(c.out, maxRPCLine)
		if err != nil {
			return fmt.Errorf("%s: no answer (%v)", method, err)
		}
		var m rpcMessage
		if json.Unmarshal(line, &m) != nil || m.ID == nil {
			continue
		}
		if m.Method != "" { // a request to ckpt
			c.send(rpcMessage{ID: m.ID, Error: &struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			}{-32601, "ckpt answers no requests"}})
			continue
		}
		if *m.ID != id {
			continue
		}
		if m.Error != nil {
			return fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		if err := json.Unmarshal(m.Result, result); err != nil {
			return fmt.Errorf("%s: %v", method, err)
		}
		return nil
	}
}

// readLine reads one line of at most max bytes.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		part, err := r.ReadSlice('\n')
		if len(line)+len(part) > max {
			return nil, fmt.Errorf("a line of more than %d MiB", max>>20)
		}
		line = append(line, part...)
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

// codexFork runs `codex app-server` and forks thread s.ID before turn,
// then checks that the fork has none of the turns gone (a Codex that
// does not know beforeTurnId would fork them all; that fork is deleted).
// It returns the fork's id and rollout file.
func codexFork(ctx context.Context, s *ckpt.Session, turn string, gone []string) (id, path string, err error) {
	bin, err := exec.LookPath("codex")
	if err != nil {
		return "", "", errors.New("the fork is Codex's to write, and `codex` is not on PATH: run the rewind where codex runs")
	}
	ctx, cancel := context.WithTimeout(ctx, codexForkTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "app-server", "--disable", "hooks")
	cmd.Env = os.Environ()
	if h := codexHome(s.Transcript); h != "" {
		cmd.Env = append(cmd.Env, "CODEX_HOME="+h)
	}
	var stderr strings.Builder
	cmd.Stderr = &limitedWriter{w: &stderr, n: 8 << 10}
	cmd.WaitDelay = 5 * time.Second
	// Its own process group, killed whole: a child of codex's does not
	// outlive it holding its output open.
	ownGroup(cmd)
	in, err := cmd.StdinPipe()
	if err != nil {
		return "", "", err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return "", "", err
	}
	if err := cmd.Start(); err != nil {
		return "", "", fmt.Errorf("%s app-server: %v", bin, err)
	}
	started := time.Now()
	// Past the deadline (or on an interrupt) the read below ends at once,
	// also when a child of codex holds its stdout open after codex is
	// killed.
	stopRead := context.AfterFunc(ctx, func() { outPipe.Close() })
	defer func() {
		stopRead()
		if err != nil && ctx.Err() != nil {
			// The pipes were closed under the read: say why.
			err = fmt.Errorf("codex app-server did not answer within %s (%v); Codex's conversation is left as it was", time.Since(started).Round(time.Second), context.Cause(ctx))
		}
		in.Close() // the app server exits at the end of its input
		if err != nil {
			// Nothing more is read: a server still writing (garbage
			// without end) gets EPIPE rather than wait on a full pipe.
			outPipe.Close()
		}
		stop := time.AfterFunc(codexExitWait, func() { cmd.Cancel() })
		werr := cmd.Wait()
		stop.Stop()
		if err != nil {
			if e := strings.TrimSpace(stderr.String()); e != "" {
				err = fmt.Errorf("%v (codex app-server: %v: %s)", err, werr, lastLines(e, 5))
			}
		}
	}()
	rpc := &codexRPC{in: in, out: bufio.NewReader(outPipe)}
	var init struct{}
	if err := rpc.call("initialize", map[string]any{
		"clientInfo":   map[string]string{"name": "ckpt", "title": "ckpt", "version": "1"},
		"capabilities": map[string]any{"experimentalApi": true},
	}, &init); err != nil {
		return "", "", err
	}
	if err := rpc.send(rpcMessage{Method: "initialized"}); err != nil {
		return "", "", err
	}
	var fork struct {
		Thread struct {
			ID   string `json:"id"`
			Path string `json:"path"`
		} `json:"thread"`
	}
	if err := rpc.call("thread/fork", map[string]any{"threadId": s.ID, "beforeTurnId": turn, "excludeTurns": true}, &fork); err != nil {
		return "", "", err
	}
	if fork.Thread.ID == "" {
		return "", "", errors.New("thread/fork: Codex named no thread")
	}
	var last struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := rpc.call("thread/turns/list", map[string]any{"threadId": fork.Thread.ID, "limit": 1, "sortDirection": "desc"}, &last); err != nil {
		return "", "", fmt.Errorf("%v (the fork: %s)", err, fork.Thread.Path)
	}
	if len(last.Data) > 0 && slices.Contains(gone, last.Data[0].ID) {
		// A Codex that does not know beforeTurnId forked every turn.
		what := "ckpt deleted it"
		var del struct{}
		if err := rpc.call("thread/delete", map[string]string{"threadId": fork.Thread.ID}, &del); err != nil {
			what = fmt.Sprintf("delete it with `codex delete %s` (%v)", fork.Thread.ID, err)
		}
		return "", "", fmt.Errorf("this Codex does not fork before a turn: its fork %s still ends with turn %s; %s", fork.Thread.ID, last.Data[0].ID, what)
	}
	return fork.Thread.ID, fork.Thread.Path, nil
}

// limitedWriter keeps the first n bytes written to it.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	k := min(len(p), l.n)
	if k > 0 {
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	ls := strings.Split(s, "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}
