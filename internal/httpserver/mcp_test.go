package httpserver_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/seed1cedbf7c/ckpt/internal/httpserver"
	"github.com/seed1cedbf7c/ckpt/internal/mcpserver"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// bearer adds the token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.next.RoundTrip(r)
}

func (f *fixture) mcp(token string) (*mcp.ClientSession, error) {
	f.t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: f.base + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearer{token, f.ts.Client().Transport}}}
	cs, err := client.Connect(context.Background(), tr, nil)
	if err == nil {
		f.t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func callText(t *testing.T, cs *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

// The MCP tools over HTTP, with the SDK's client: the same answers as on
// stdio, on the served workspace.
func TestMCP(t *testing.T) {
	f := newFixture(t, httpserver.Options{})
	f.save("first")
	cs, err := f.mcp(f.srv.Token())
	if err != nil {
		t.Fatal(err)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) < 12 {
		t.Errorf("%d tools", len(tools.Tools))
	}
	s := f.events(nil)
	text, isErr := callText(t, cs, "snapshot_create", map[string]any{"name": "over-http"})
	if isErr || !strings.HasPrefix(text, "snapshot over-http created: ") {
		t.Errorf("snapshot_create: %q", text)
	}
	if ev := s.waitFor("snapshot-created", 2e9); ev.data.Source != "server" {
		t.Errorf("event %+v", ev.data)
	}
	testutil.WriteFiles(t, f.ws, map[string]string{"a.txt": "edited\n"})
	text, _ = callText(t, cs, "snapshot_restore", map[string]any{"name": "over-http"})
	if !strings.HasPrefix(text, "restored snapshot over-http (1 file(s) changed):") || testutil.ReadFile(t, f.ws, "a.txt") != "one\n" {
		t.Errorf("snapshot_restore: %q", text)
	}
	if ev, ok := s.next(500e6); ok && ev.data.Source == "other" {
		t.Errorf("a change made over MCP told as another process's: %+v", ev.data)
	}
}

func TestMCPAuth(t *testing.T) {
	f := newFixture(t, httpserver.Options{})
	for _, tok := range []string{"", "wrong"} {
		if _, err := f.mcp(tok); err == nil {
			t.Errorf("token %q: connected", tok)
		}
	}
}

// A read-only server offers only the tools that read.
func TestMCPReadOnly(t *testing.T) {
	f := newFixture(t, httpserver.Options{ReadOnly: true})
	f.save("first")
	cs, err := f.mcp(f.srv.Token())
	if err != nil {
		t.Fatal(err)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if slices.Contains(mcpserver.WriteTools, tool.Name) {
			t.Errorf("read-only server offers %s", tool.Name)
		}
	}
	if text, isErr := callText(t, cs, "checkpoint_list", map[string]any{}); isErr || !strings.Contains(text, "first") {
		t.Errorf("checkpoint_list: %q", text)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "undo", Arguments: map[string]any{}})
	if err == nil && !res.IsError {
		t.Errorf("undo on a read-only server: %+v", res)
	}
}
