package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A frameReader passes on each line the SDK can take and answers every
// other one, however the input is split into reads: at the limit and one
// byte over, with "\r\n", without a last newline, and a long line with no
// end at all.
func TestFrameReader(t *testing.T) {
	const max = 32
	at := `{"jsonrpc":"2.0","method":"xyz"}`    // max bytes
	over := `{"jsonrpc":"2.0","method":"wxyz"}` // max+1
	short := `{"jsonrpc":"2.0","method":"x"}`   // max-2
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	long := strings.Repeat("z", 10_000)
	for _, c := range []struct {
		name, in string
		out      string   // what the SDK reads
		answers  []string // "id code" of each answer
	}{
		{"at the limit", at + "\n", at + "\n", nil},
		{"at the limit, CRLF", at + "\r\n" + at + "\r\n", at + "\n" + at + "\n", nil},
		{"at the limit, at EOF", at, at + "\n", nil},
		{"over the limit", over + "\n" + at + "\n", at + "\n", []string{"null -32600"}},
		{"over the limit by a CR", at + "\r\r\n" + at + "\n", at + "\n", []string{"null -32600"}},
		{"over the limit, at EOF", over, "", []string{"null -32600"}},
		{"CR at the limit, at EOF", at + "\r", "", []string{"null -32600"}},
		{"a long line", long + "\n" + at + "\n", at + "\n", []string{"null -32600"}},
		{"a long line, at EOF", long, "", []string{"null -32600"}},
		{"blank lines", "\n \t\r\n\r\n" + at + "\n\n", at + "\n", nil},
		{"blanks around", "\t" + short + " \r\n", short + "\n", nil},
		{"blanks around, over the limit", "\t" + short + "  \r\n", "", []string{"null -32600"}},
		{"a CR inside", strings.Replace(short, ",", ",\r", 1) + "\n", strings.Replace(short, ",", ",\r", 1) + "\n", nil},
		{"garbage", "x\n" + at + "\n", at + "\n", []string{"null -32700"}},
		{"invalid UTF-8", "\"\xff\"\n", "", []string{"null -32700"}},
		{"two values", at[:16] + "}{}\n", "", []string{"null -32700"}},
		{"a batch", "[" + at + "]\n[]\n", "", []string{"null -32600", "null -32600"}},
		{"not an object", "1\n\"s\"\nnull\n", "", []string{"null -32600", "null -32600", "null -32600"}},
		{"no version", `{"id":"a","method":"x"}` + "\n", "", []string{`"a" -32600`}},
		{"a bad id", `{"jsonrpc":"2.0","id":{},"method":"x"}` + "\n", "", []string{"null -32600"}},
		{"a response", `{"jsonrpc":"2.0","id":2}` + "\n", `{"jsonrpc":"2.0","id":2}` + "\n", nil},
	} {
		for _, split := range []struct {
			name string
			r    func(io.Reader) io.Reader
		}{
			{"whole", func(r io.Reader) io.Reader { return r }},
			{"bytes", iotest.OneByteReader},
			{"halves", iotest.HalfReader},
		} {
			t.Run(c.name+"/"+split.name, func(t *testing.T) {
				var answers bytes.Buffer
				fr := newFrameReader(split.r(strings.NewReader(c.in)), &answers, max, 16)
				out, err := io.ReadAll(fr)
				if err != nil {
					t.Fatal(err)
				}
				if string(out) != c.out {
					t.Errorf("passed on %q, want %q", out, c.out)
				}
				if got := answerCodes(t, answers.Bytes()); strings.Join(got, ",") != strings.Join(c.answers, ",") {
					t.Errorf("answered %q, want %q", got, c.answers)
				}
			})
		}
	}

	// A read error ends the reading after the whole lines before it.
	var answers bytes.Buffer
	boom := errors.New("boom")
	fr := newFrameReader(io.MultiReader(strings.NewReader(ping+"\n"+at[:5]), iotest.ErrReader(boom)), &answers, 64, 16)
	out, err := io.ReadAll(fr)
	if string(out) != ping+"\n" || err != boom {
		t.Errorf("before a read error: got %q, %v; want %q, %v", out, err, ping+"\n", boom)
	}
}

// answerCodes checks that each line of b is a JSON-RPC error response and
// returns their ids and codes.
func answerCodes(t *testing.T, b []byte) []string {
	t.Helper()
	var codes []string
	for line := range strings.Lines(string(b)) {
		var resp struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *jsonrpc.Error  `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &resp); err != nil || resp.JSONRPC != "2.0" || resp.Error == nil || resp.Error.Message == "" || !strings.HasSuffix(line, "}\n") {
			t.Errorf("not a JSON-RPC error response: %q (%v)", line, err)
			continue
		}
		codes = append(codes, string(resp.ID)+" "+jsonNumber(resp.Error.Code))
	}
	return codes
}

func jsonNumber(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// FuzzFrameReader: whatever the input and however it is split into reads,
// a frameReader returns no error but EOF, answers each line it does not
// pass on with a JSON-RPC error, passes on only lines within the limit,
// and the SDK's own transport reads everything it passes on without
// ending the session.
func FuzzFrameReader(f *testing.F) {
	deep := strings.Repeat("[", 1200) + strings.Repeat("]", 1200)
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n",
		`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\r\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"undo","arguments":{}}}` + "\n\n  \n",
		"not json\n[]\n42\n{}\nnull\n\"s\"\n",
		"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]\n",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"a\":\"\xff\"}}\n\xc3\n",
		`{"jsonrpc":"1.0","id":1,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":true,"method":"ping"}` + "\n",
		`{"jsonrpc":"2.0","id":1,"method":5}` + "\n" + `{"jsonrpc":"2.0","id":1}{"x":1}` + "\n",
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"x":` + deep + `}}}` + "\n",
		strings.Repeat("x", 300) + "\n" + `{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n" + strings.Repeat("y", 300),
		"\x00\n\r\r\n\t\n",
	} {
		f.Add([]byte(seed), uint8(0), uint16(4096))
		f.Add([]byte(seed), uint8(1), uint16(40))
		f.Add([]byte(seed), uint8(7), uint16(0))
	}
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8, limit uint16) {
		max := 16 + int(limit)%8192
		var answers bytes.Buffer
		r := &chunkReader{b: in, n: 1 + int(chunk)%32}
		out, err := io.ReadAll(newFrameReader(r, &answers, max, 16))
		if err != nil {
			t.Fatalf("read error %v", err)
		}
		passed := 0
		for line := range strings.Lines(string(out)) {
			passed++
			msg, ok := strings.CutSuffix(line, "\n")
			if !ok || len(msg) > max || strings.Contains(msg, "\n") || !utf8.ValidString(msg) || !json.Valid([]byte(msg)) || msg[0] != '{' {
				t.Fatalf("passed on %q", line)
			}
			if _, err := jsonrpc.DecodeMessage([]byte(msg)); err != nil {
				t.Fatalf("passed on %q: %v", line, err)
			}
		}
		answered := len(answerCodes(t, answers.Bytes()))
		if want := countLines(in, max); passed+answered != want {
			t.Fatalf("passed on %d lines and answered %d, want %d in all", passed, answered, want)
		}

		// The SDK reads every line passed on as one message, then EOF.
		conn, err := (&mcp.IOTransport{Reader: io.NopCloser(bytes.NewReader(out)), Writer: discard{}}).Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for i := range passed + 1 {
			_, err := conn.Read(context.Background())
			if i < passed && err != nil || i == passed && err != io.EOF {
				t.Fatalf("the SDK's read %d of %d: %v", i+1, passed, err)
			}
		}
	})
}

// countLines is how many lines of in a frameReader passes on or answers:
// every line but blank ones within the limit.
func countLines(in []byte, max int) int {
	n := 0
	for len(in) > 0 {
		line, rest, found := bytes.Cut(in, []byte("\n"))
		in = rest
		if found {
			line = bytes.TrimSuffix(line, []byte("\r"))
		}
		if len(line) > max || len(bytes.Trim(line, " \t\r\n")) > 0 {
			n++
		}
	}
	return n
}

// chunkReader returns b n bytes at a time.
type chunkReader struct {
	b []byte
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.n)], c.b)
	c.b = c.b[n:]
	return n, nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) Close() error                { return nil }
