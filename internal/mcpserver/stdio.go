package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxFrame is the size limit of one message [StdioTransport] reads, in
// bytes, not counting its line ending.
const MaxFrame = 16 << 20

// StdioTransport returns the transport `ckpt mcp` serves on: JSON-RPC
// messages one per line on r and w, as [mcp.IOTransport], except that bad
// input never ends the session. The SDK's transport ends it on any line it
// cannot take as a message; here each line is checked before the SDK sees
// it, and one that would end the session is answered instead and skipped:
//
//   - a line that is not JSON, or not UTF-8, or holds more than one JSON
//     value: a parse error (-32700);
//   - JSON that is not a JSON-RPC message object — a number, a string,
//     {} or an object without "jsonrpc": "2.0", a bad "id" or "method",
//     nesting deeper than the SDK reads: an invalid request (-32600);
//   - an array: an invalid request too. Batches were part of MCP only in
//     protocol 2025-03-26, and the SDK ends the session on a batch it does
//     not take (an empty one, a repeated id, any batch in a session of a
//     later protocol);
//   - a line longer than [MaxFrame]: an invalid request, sent as soon as
//     the line passes the limit; the rest of the line is discarded as it
//     arrives, never held in memory.
//
// An answer carries the request's id when the line is JSON with a string
// or number "id", else a null id. Blank lines are skipped, blanks around a
// message ignored, and a last line without a newline is read at EOF.
// Invalid UTF-8 is refused rather than replaced: a replaced byte would make
// a path in a tool's arguments name another file.
func StdioTransport(r io.Reader, w io.Writer) mcp.Transport {
	out := &syncWriter{w: w}
	return &mcp.IOTransport{
		Reader:        newFrameReader(r, out, MaxFrame, 64<<10),
		Writer:        out,
		MaxLineLength: -1, // the frameReader bounds every line
	}
}

// syncWriter serializes writes to w. The SDK writes each message with one
// Write, and so does a frameReader answering a bad line, so the two never
// interleave within a line.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// Close does nothing: the caller owns w.
func (s *syncWriter) Close() error { return nil }

// A frameReader reads lines from in and passes on, one line each, the
// messages the SDK can take; it answers every other line on out.
type frameReader struct {
	in      *bufio.Reader
	out     io.Writer
	max     int
	lineNo  int
	line    []byte // the line being read
	pending []byte // a checked message and its newline, not yet read
	err     error  // in's error, returned once pending is read
}

// newFrameReader reads r through a buffer of bufSize bytes, passing on
// lines of at most max bytes.
func newFrameReader(r io.Reader, out io.Writer, max, bufSize int) *frameReader {
	return &frameReader{in: bufio.NewReaderSize(r, bufSize), out: out, max: max}
}

// Read returns the next checked messages, each on a line of its own.
func (f *frameReader) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		line, ok, err := f.readLine()
		if ok {
			msg, bad := checkFrame(line)
			switch {
			case bad != nil:
				err = f.answer(bad)
			case msg != nil:
				f.pending = append(msg, '\n')
			}
		}
		if err != nil {
			f.err = err
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// Close does nothing: the caller owns the input.
func (f *frameReader) Close() error { return nil }

// readLine reads the next line and returns it without its line ending
// ("\n" or "\r\n"). A line over the limit is answered as soon as it
// passes it, and discarded (ok false). At the end of the input the last
// line is returned if it is not empty, and f.err is set. The error is one
// writing an answer.
func (f *frameReader) readLine() (line []byte, ok bool, err error) {
	if cap(f.line) > 1<<20 {
		f.line = nil // do not keep a big line's buffer
	}
	f.line = f.line[:0]
	f.lineNo++
	over := false
	for {
		chunk, rerr := f.in.ReadSlice('\n')
		if !over {
			cut := f.appendLine(chunk)
			n := len(f.line)
			switch rerr {
			case nil: // a whole line
				n = len(trimEOL(f.line))
			case io.EOF: // the last line, without an ending
			default: // the line goes on, and may end in "\r\n"
				n--
			}
			if n > f.max || cut {
				over = true
				f.line = f.line[:0]
				err := f.answer(&frameError{code: jsonrpc.CodeInvalidRequest,
					msg: fmt.Sprintf("longer than the limit of %d bytes; discarded", f.max)})
				if err != nil {
					return nil, false, err
				}
			}
		}
		switch {
		case rerr == bufio.ErrBufferFull:
			continue
		case rerr != nil:
			f.err = rerr
			return f.line, !over && rerr == io.EOF && len(f.line) > 0, nil
		case over:
			return nil, false, nil
		}
		return trimEOL(f.line), true, nil
	}
}

// appendLine appends chunk to f.line, or as much of it as a line within
// the limit can hold (the limit and "\r\n"), and says if it cut it. A
// line past 1 MiB gets room for the whole limit at once, so that a long
// line leaves no trail of smaller buffers.
func (f *frameReader) appendLine(chunk []byte) (cut bool) {
	if room := f.max + 2 - len(f.line); len(chunk) > room {
		chunk, cut = chunk[:room], true
	}
	if need := len(f.line) + len(chunk); need > cap(f.line) && need > 1<<20 {
		f.line = slices.Grow(f.line, f.max+2-len(f.line))
	}
	f.line = append(f.line, chunk...)
	return cut
}

// trimEOL returns line without its ending, "\n" or "\r\n".
func trimEOL(line []byte) []byte {
	if l, ok := bytes.CutSuffix(line, []byte("\n")); ok {
		return bytes.TrimSuffix(l, []byte("\r"))
	}
	return line
}

// answer writes the error response to a bad line.
func (f *frameReader) answer(e *frameError) error {
	id := e.id
	if id == nil {
		id = json.RawMessage("null")
	}
	prefix := "parse error"
	if e.code == jsonrpc.CodeInvalidRequest {
		prefix = "invalid request"
	}
	resp := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: e.code, Message: fmt.Sprintf("%s: line %d: %s", prefix, f.lineNo, e.msg)}}
	var b bytes.Buffer
	enc := json.NewEncoder(&b) // one line, ending in "\n"
	enc.SetEscapeHTML(false)   // the id as the client sent it
	if err := enc.Encode(resp); err != nil {
		return fmt.Errorf("answering line %d: %w", f.lineNo, err)
	}
	_, err := f.out.Write(b.Bytes())
	return err
}

// frameError is why a line is refused, and the id to answer with (nil:
// null).
type frameError struct {
	id   json.RawMessage
	code int64
	msg  string
}

// checkFrame decides what becomes of one line (without its line ending):
// msg is the message to pass on to the SDK, bad says why the line is
// refused; both are nil for a blank line.
func checkFrame(line []byte) (msg []byte, bad *frameError) {
	msg = bytes.Trim(line, " \t\r\n")
	switch {
	case len(msg) == 0:
		return nil, nil
	case !utf8.Valid(msg):
		return nil, &frameError{code: jsonrpc.CodeParseError, msg: "not valid UTF-8"}
	case !json.Valid(msg):
		err := json.Unmarshal(msg, new(json.RawMessage))
		return nil, &frameError{code: jsonrpc.CodeParseError, msg: err.Error()}
	case msg[0] == '[':
		return nil, &frameError{code: jsonrpc.CodeInvalidRequest, msg: "batches are not supported"}
	case msg[0] != '{':
		return nil, &frameError{code: jsonrpc.CodeInvalidRequest, msg: "a message must be a JSON object"}
	}
	if _, err := jsonrpc.DecodeMessage(msg); err != nil {
		return nil, &frameError{id: messageID(msg), code: jsonrpc.CodeInvalidRequest, msg: err.Error()}
	}
	return msg, nil
}

// messageID returns the "id" of a JSON object if it is a string or a
// number, else nil.
func messageID(obj []byte) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return nil
	}
	id := m["id"]
	if len(id) > 0 && (id[0] == '"' || id[0] == '-' || '0' <= id[0] && id[0] <= '9') {
		return id
	}
	return nil
}
