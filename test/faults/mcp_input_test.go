//go:build unix

package faults

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// frameLimit is the largest message `ckpt mcp` reads, not counting its
// line ending, as README's MCP section documents it.
const frameLimit = 16 << 20

// Class 12: bad input never ends `ckpt mcp`. Each hostile frame gets the
// JSON-RPC error it deserves (-32700 for what is not UTF-8 JSON, -32600 for
// JSON that is not a request) and the next request is answered; a frame
// over the limit is answered and skipped without being held in memory; a
// clean EOF still ends the server with status 0.
func TestMCPBadInput(t *testing.T) {
	e := newEnv(t)
	e.Write(map[string]string{"a.txt": "v1\n"})
	p := startMCP(t, e)
	p.initialize("\n")

	deep := strings.Repeat("[", 1500) + strings.Repeat("]", 1500)
	for _, c := range []struct {
		name  string
		frame string
		id    string // the id the frame is answered with ("": no answer)
		code  int    // the error code of that answer (0: a result)
	}{
		{"not JSON", "not json", "null", -32700},
		{"truncated object", `{"jsonrpc":"2.0","id":5,"method":"ping"`, "null", -32700},
		{"two values on a line", `{"jsonrpc":"2.0","id":5,"method":"ping"} {"jsonrpc":"2.0","id":6,"method":"ping"}`, "null", -32700},
		{"invalid UTF-8 alone", "\xff\xfe", "null", -32700},
		{"invalid UTF-8 in a string", "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"snapshot_create\",\"arguments\":{\"name\":\"a\xc3\"}}}", "null", -32700},
		{"NUL", "\x00", "null", -32700},
		{"empty batch", "[]", "null", -32600},
		{"batch", `[{"jsonrpc":"2.0","id":8,"method":"ping"}]`, "null", -32600},
		{"number", "42", "null", -32600},
		{"string", `"ping"`, "null", -32600},
		{"null", "null", "null", -32600},
		{"empty object", "{}", "null", -32600},
		{"no version", `{"id":9,"method":"ping"}`, "9", -32600},
		{"version 1.0", `{"jsonrpc":"1.0","id":"x","method":"ping"}`, `"x"`, -32600},
		{"boolean id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, "null", -32600},
		{"method not a string", `{"jsonrpc":"2.0","id":10,"method":5}`, "10", -32600},
		{"nested too deep", `{"jsonrpc":"2.0","id":11,"method":"ping","params":{"_meta":{"x":` + deep + `}}}`, "11", -32600},
		{"params not an object", `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":42}`, "12", -32602},
		{"unknown method", `{"jsonrpc":"2.0","id":13,"method":"no/such"}`, "13", -32601},
		{"trailing blanks", "{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"ping\"} \t ", "14", 0},
		{"leading blanks", "  {\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"ping\"}", "15", 0},
		{"blank line", " \t", "", 0},
		{"CRLF", "{\"jsonrpc\":\"2.0\",\"id\":16,\"method\":\"ping\"}\r", "16", 0},
		{"CRLF after garbage", "[]\r", "null", -32600},
	} {
		p.exchange(c.name, []byte(c.frame+"\n"), c.id, c.code)
	}

	// A frame of exactly the limit is served; one byte more is refused
	// and the server goes on.
	p.exchange("frame of the limit", paddedPing(17, frameLimit, "\n"), "17", 0)
	p.exchange("frame of the limit with CRLF", paddedPing(18, frameLimit, "\r\n"), "18", 0)
	p.exchange("frame over the limit", paddedPing(19, frameLimit+1, "\n"), "null", -32600)
	// The 64 MiB frame, written in two halves.
	big := bytes.Repeat([]byte("x"), 64<<20)
	p.write(big[:32<<20])
	p.write(big[32<<20:])
	p.exchange("64 MiB frame", []byte("}}\n"), "null", -32600)

	// A request written a byte at a time (a multi-byte character split
	// across writes) is one frame, and the tools still work.
	req := `{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"snapshot_create","arguments":{"name":"s1","description":"café ✓"}}}` + "\r\n"
	for i := range len(req) {
		p.write([]byte{req[i]})
	}
	res := p.await(20)
	if text := toolText(t, res); !strings.HasPrefix(text, "snapshot s1 created: ") {
		t.Errorf("snapshot_create written byte by byte: %s", res)
	}
	if out := e.Must("snapshot", "list"); !strings.Contains(out, "café ✓") {
		t.Errorf("snapshot list after snapshot_create over MCP: %q", out)
	}
	p.exchange("after the split request", []byte("[]\n"), "null", -32600)

	if err := p.cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("ckpt mcp is gone after bad input: %v", err)
	}
	p.close()
}

// A line with no end followed by EOF is refused without being held in
// memory, and the server ends normally.
func TestMCPHugeLineThenEOF(t *testing.T) {
	e := newEnv(t)
	p := startMCP(t, e)
	p.initialize("\r\n")
	p.write([]byte(`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"`))
	chunk := bytes.Repeat([]byte("y"), 1<<20)
	for range 64 {
		p.write(chunk)
	}
	p.checkError("huge line before EOF", p.next(), "null", -32600)
	// The rest of the line is discarded as it comes: reading 192 MiB more
	// of it takes no more memory.
	peak := p.peakRSS()
	for range 192 {
		p.write(chunk)
	}
	if more := p.peakRSS() - peak; more > 8<<20 {
		t.Errorf("ckpt mcp took %d MiB more memory reading 192 MiB more of a line over the limit", more>>20)
	}
	p.close()
}

// mcpProc is `ckpt mcp` as a child process, spoken to line by line.
type mcpProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte
	stderr syncBuffer
	id     int // the last request id used by exchange
}

func startMCP(t *testing.T, e *env) *mcpProc {
	t.Helper()
	p := &mcpProc{t: t, cmd: e.Cmd("mcp"), lines: make(chan []byte, 16), id: 1000}
	p.cmd.Stderr = &p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r := bufio.NewReader(stdout)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				p.lines <- line
			}
			if err != nil {
				close(p.lines)
				return
			}
		}
	}()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	})
	return p
}

// initialize opens the session, each line ending in eol.
func (p *mcpProc) initialize(eol string) {
	p.t.Helper()
	p.write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"faults","version":"0"}}}` + eol))
	if res := p.await(1); res["result"] == nil {
		p.t.Fatalf("initialize: %s", res)
	}
	p.write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + eol))
}

// write sends b, failing the test if the server is gone.
func (p *mcpProc) write(b []byte) {
	p.t.Helper()
	if _, err := p.stdin.Write(b); err != nil {
		p.t.Fatalf("writing to ckpt mcp: %v\nstderr: %s", err, p.stderr.String())
	}
}

// next returns the next message the server sends (notifications skipped).
func (p *mcpProc) next() map[string]any {
	p.t.Helper()
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				p.cmd.Wait()
				p.t.Fatalf("ckpt mcp ended (%v); stderr: %s", p.cmd.ProcessState, p.stderr.String())
			}
			var msg map[string]any
			if err := json.Unmarshal(line, &msg); err != nil {
				p.t.Fatalf("ckpt mcp wrote a line that is not JSON: %v: %.200q", err, line)
			}
			if _, ok := msg["method"]; !ok {
				return msg
			}
		case <-time.After(2 * time.Minute):
			p.t.Fatalf("no answer from ckpt mcp in 2 minutes; stderr: %s", p.stderr.String())
		}
	}
}

// await returns the response to request id; any other response fails.
func (p *mcpProc) await(id int) map[string]any {
	p.t.Helper()
	msg := p.next()
	if got := rawID(msg); got != strconv.Itoa(id) {
		p.t.Fatalf("got a response with id %s, want the one to request %d: %v", got, id, msg)
	}
	return msg
}

// exchange sends frame and then a valid request (tools/list or, every other
// time, tools/call snapshot_list), and checks that the frame was answered
// with id and code as given and the request correctly.
func (p *mcpProc) exchange(name string, frame []byte, id string, code int) {
	p.t.Helper()
	p.id++
	p.write(frame)
	call := p.id%2 == 0
	if call {
		p.write([]byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(p.id) + `,"method":"tools/call","params":{"name":"snapshot_list","arguments":{}}}` + "\n"))
	} else {
		p.write([]byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(p.id) + `,"method":"tools/list"}` + "\n"))
	}
	var answer, reply map[string]any
	for answer == nil && id != "" || reply == nil {
		msg := p.next()
		switch got := rawID(msg); {
		case got == strconv.Itoa(p.id) && reply == nil:
			reply = msg
		case got == id && answer == nil:
			answer = msg
		default:
			p.t.Fatalf("%s: unexpected response %v", name, msg)
		}
	}
	if id != "" {
		p.checkError(name, answer, id, code)
	}
	if call {
		if text := toolText(p.t, reply); text == "" || reply["result"].(map[string]any)["isError"] == true {
			p.t.Errorf("%s: then tools/call snapshot_list: %v", name, reply)
		}
	} else if res, _ := reply["result"].(map[string]any); res == nil || !strings.Contains(mustJSON(res["tools"]), `"snapshot_create"`) {
		p.t.Errorf("%s: then tools/list: %v", name, reply)
	}
}

// checkError checks that msg answers with id (raw JSON) and error code
// (0: a result).
func (p *mcpProc) checkError(name string, msg map[string]any, id string, code int) {
	p.t.Helper()
	if got := rawID(msg); got != id {
		p.t.Errorf("%s: answered with id %s, want %s", name, got, id)
	}
	if v, _ := msg["jsonrpc"].(string); v != "2.0" {
		p.t.Errorf("%s: answer has jsonrpc %q: %v", name, v, msg)
	}
	errObj, _ := msg["error"].(map[string]any)
	switch {
	case code == 0 && (errObj != nil || msg["result"] == nil):
		p.t.Errorf("%s: got %v, want a result", name, msg)
	case code != 0 && errObj == nil:
		p.t.Errorf("%s: got %v, want error %d", name, msg, code)
	case code != 0 && errObj["code"] != float64(code):
		p.t.Errorf("%s: got error %v, want code %d", name, errObj, code)
	case code != 0 && (errObj["message"] == nil || errObj["message"] == ""):
		p.t.Errorf("%s: error without a message: %v", name, errObj)
	}
}

// peakRSS is the most memory the server has held (VmHWM).
func (p *mcpProc) peakRSS() int64 {
	p.t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/status")
	if err != nil {
		p.t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if kb, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")), 10, 64)
			if err != nil {
				p.t.Fatalf("VmHWM: %v", err)
			}
			return n << 10
		}
	}
	p.t.Fatalf("no VmHWM in /proc/%d/status", p.cmd.Process.Pid)
	return 0
}

// close ends stdin and expects the server to exit 0, having said nothing
// more.
func (p *mcpProc) close() {
	p.t.Helper()
	p.stdin.Close()
	for line := range p.lines {
		p.t.Errorf("unexpected output after the last request: %.200q", line)
	}
	if err := p.cmd.Wait(); err != nil {
		p.t.Errorf("ckpt mcp at EOF: %v; stderr: %s", err, p.stderr.String())
	}
}

// syncBuffer is a bytes.Buffer safe to read while a process writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// paddedPing is a ping request of exactly n bytes, then eol.
func paddedPing(id, n int, eol string) []byte {
	head := `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"ping","params":{"_meta":{"pad":"`
	tail := `"}}}`
	b := make([]byte, 0, n+len(eol))
	b = append(b, head...)
	b = append(b, bytes.Repeat([]byte("p"), n-len(head)-len(tail))...)
	b = append(b, tail...)
	return append(b, eol...)
}

// rawID is a message's id as JSON ("null" if absent).
func rawID(msg map[string]any) string {
	return mustJSON(msg["id"])
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// toolText is the text of a tools/call result.
func toolText(t *testing.T, msg map[string]any) string {
	t.Helper()
	res, _ := msg["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		t.Errorf("not a tool result: %v", msg)
		return ""
	}
	text, _ := content[0].(map[string]any)["text"].(string)
	return text
}
