package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/mcpserver"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

var allTools = []string{
	"checkpoint_diff", "checkpoint_list", "checkpoint_restore", "redo",
	"session_rewind", "session_turns",
	"snapshot_create", "snapshot_delete", "snapshot_diff", "snapshot_list", "snapshot_restore", "undo",
}

// session is a client connected in memory to a server.
type session struct {
	t  *testing.T
	cs *mcp.ClientSession
}

func connect(t *testing.T, srv *mcpserver.Server, client *mcp.Client) *session {
	return connectVersion(t, srv, client, "")
}

// connectVersion connects with a given protocol version ("": the latest).
func connectVersion(t *testing.T, srv *mcpserver.Server, client *mcp.Client, version string) *session {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if client == nil {
		client = mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	}
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	if got := cs.InitializeResult().ProtocolVersion; version == "" && got < "2026-07-28" {
		t.Fatalf("negotiated protocol %s, want 2026-07-28 or later", got)
	}
	if version != "" && cs.InitializeResult().ProtocolVersion != version {
		t.Fatalf("negotiated protocol %s, want %s", cs.InitializeResult().ProtocolVersion, version)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return &session{t: t, cs: cs}
}

// call calls a tool and returns its text and whether it is a tool error.
func (s *session) call(name string, args any) (string, bool) {
	s.t.Helper()
	res, err := s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		s.t.Fatalf("%s: %v", name, err)
	}
	if len(res.Content) != 1 {
		s.t.Fatalf("%s: %d content blocks", name, len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		s.t.Fatalf("%s: content is %T", name, res.Content[0])
	}
	return tc.Text, res.IsError
}

// ok calls a tool that must succeed and returns its text.
func (s *session) ok(name string, args any) string {
	s.t.Helper()
	text, isErr := s.call(name, args)
	if isErr {
		s.t.Fatalf("%s(%v) failed: %s", name, args, text)
	}
	return text
}

// want calls a tool and compares its text.
func (s *session) want(name string, args any, want string) {
	s.t.Helper()
	if got := s.ok(name, args); got != want {
		s.t.Errorf("%s(%v):\ngot  %q\nwant %q", name, args, got, want)
	}
}

// wantErr calls a tool that must fail with exactly the text want.
func (s *session) wantErr(name string, args any, want string) {
	s.t.Helper()
	text, isErr := s.call(name, args)
	if !isErr {
		s.t.Errorf("%s(%v) succeeded: %s", name, args, text)
		return
	}
	if text != want {
		s.t.Errorf("%s(%v) error:\ngot  %q\nwant %q", name, args, text, want)
	}
}

func match(t *testing.T, re, s string) []string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("%q does not match %s", s, re)
	}
	return m
}

type args = map[string]any

func TestToolsList(t *testing.T) {
	ws := t.TempDir()
	srv := mcpserver.New(mcpserver.Options{Workspace: ws, Open: func(ctx context.Context, dir string) (*ckpt.Repo, error) {
		return ckpt.Open(ctx, dir, ckpt.Options{Backend: ckpt.BackendMemory})
	}})
	defer srv.Close()
	s := connect(t, srv, nil)
	if got := s.cs.InitializeResult().Instructions; got != mcpserver.Instructions || !strings.Contains(got, "snapshot_create") {
		t.Errorf("instructions = %q", got)
	}
	res, err := s.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	required := map[string][]string{}
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if ro := tool.Annotations != nil && tool.Annotations.ReadOnlyHint; ro == slices.Contains(mcpserver.WriteTools, tool.Name) {
			t.Errorf("%s: read-only hint %v, but WriteTools %v", tool.Name, ro, mcpserver.WriteTools)
		}
		if len(tool.Description) < 40 {
			t.Errorf("%s: description %q does not say when to use it", tool.Name, tool.Description)
		}
		var schema struct {
			Type       string                     `json:"type"`
			Required   []string                   `json:"required"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		b, _ := json.Marshal(tool.InputSchema)
		if err := json.Unmarshal(b, &schema); err != nil || schema.Type != "object" {
			t.Errorf("%s: input schema %s", tool.Name, b)
		}
		required[tool.Name] = schema.Required
		for p, ps := range schema.Properties {
			if !strings.Contains(string(ps), `"description"`) {
				t.Errorf("%s.%s has no description", tool.Name, p)
			}
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, allTools) {
		t.Errorf("tools = %v, want %v", names, allTools)
	}
	for tool, want := range map[string][]string{
		"snapshot_create": {"name"}, "snapshot_restore": {"name"}, "snapshot_diff": {"name"},
		"snapshot_delete": {"name"}, "checkpoint_restore": {"rev"},
		"snapshot_list": nil, "checkpoint_list": nil, "checkpoint_diff": nil, "undo": nil, "redo": nil,
	} {
		if !slices.Equal(required[tool], want) {
			t.Errorf("%s requires %v, want %v", tool, required[tool], want)
		}
	}
}

// Every tool against a real workspace and store, with exact responses.
func TestTools(t *testing.T) {
	ws, store := t.TempDir(), t.TempDir()
	testutil.WriteFiles(t, ws, map[string]string{"a.txt": "v1\n", "b.txt": "b1\n", ".gitignore": "*.log\n", "debug.log": "log\n"})
	clk := testutil.NewClock("2026-04-23T12:00:00Z")
	srv := mcpserver.New(mcpserver.Options{Workspace: ws, Open: func(ctx context.Context, dir string) (*ckpt.Repo, error) {
		if dir != ws {
			t.Errorf("opened %q, want the pinned %q", dir, ws)
		}
		return ckpt.Open(ctx, dir, ckpt.Options{Store: store, Now: clk.Now})
	}})
	defer srv.Close()
	s := connect(t, srv, nil)

	// The sandbox snapshot tools' four tools.
	s.want("snapshot_list", args{}, "no snapshots")
	clk.Set("2026-04-23T12:15:00Z")
	s2 := match(t, `^snapshot s2 created: ([0-9a-f]{64})$`, s.ok("snapshot_create", args{"name": "s2", "description": "initial checkpoint"}))[1]
	testutil.WriteFiles(t, ws, map[string]string{"a.txt": "v2\n"})
	clk.Set("2026-04-23T12:30:00Z")
	s1 := match(t, `^snapshot s1 created: ([0-9a-f]{64})$`, s.ok("snapshot_create", args{"name": "s1", "description": "before refactor"}))[1]
	s.want("snapshot_list", nil, "s1\t"+s1[:12]+"\t2026-04-23T12:30:00+00:00\tbefore refactor\n"+
		"s2\t"+s2[:12]+"\t2026-04-23T12:15:00+00:00\tinitial checkpoint")
	seedDiff := "diff --git a/a.txt b/a.txt\nindex 626799f..8c1384d 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-v1\n+v2\n"
	s.want("snapshot_diff", args{"name": "s2"}, seedDiff)
	s.want("snapshot_diff", args{"name": "s1"}, "no differences")
	testutil.WriteFiles(t, ws, map[string]string{"b.txt": "b2\n", "debug.log": "log 2\n"})
	s.want("snapshot_restore", args{"name": "s2"}, "restored snapshot s2 (2 file(s) changed):\na.txt\nb.txt")
	if a, b, l := testutil.ReadFile(t, ws, "a.txt"), testutil.ReadFile(t, ws, "b.txt"), testutil.ReadFile(t, ws, "debug.log"); a != "v1\n" || b != "b1\n" || l != "log 2\n" {
		t.Errorf("after restore: a=%q b=%q debug.log=%q", a, b, l)
	}

	// undo takes the restore back (the unsaved b2 included), redo redoes it.
	match(t, `^undo: now at [0-9a-f]{12} \(2 file\(s\) changed\):\na\.txt\nb\.txt$`, s.ok("undo", nil))
	if a, b := testutil.ReadFile(t, ws, "a.txt"), testutil.ReadFile(t, ws, "b.txt"); a != "v2\n" || b != "b2\n" {
		t.Errorf("after undo: a=%q b=%q", a, b)
	}
	s.want("redo", nil, "redo: now at "+s2[:12]+" (2 file(s) changed):\na.txt\nb.txt")

	// checkpoint_list: newest first, tab-separated, limit and kind.
	rows := strings.Split(s.ok("checkpoint_list", args{}), "\n")
	for _, r := range rows {
		if len(strings.Split(r, "\t")) != 6 {
			t.Errorf("checkpoint_list row %q: want 6 fields", r)
		}
	}
	if want := s2[:12] + "\t2026-04-23T12:15:00+00:00\tmanual\t+3 ~0 -0\tHEAD, main, snapshot: s2\tinitial checkpoint"; !slices.Contains(rows, want) {
		t.Errorf("checkpoint_list has no row %q:\n%s", want, strings.Join(rows, "\n"))
	}
	if got := s.ok("checkpoint_list", args{"limit": 1}); strings.Count(got, "\n") != 0 {
		t.Errorf("limit 1: %q", got)
	}
	for _, r := range strings.Split(s.ok("checkpoint_list", args{"kind": "pre-restore"}), "\n") {
		if strings.Split(r, "\t")[2] != "pre-restore" {
			t.Errorf("kind pre-restore: row %q", r)
		}
	}
	s.want("checkpoint_list", args{"kind": "turn"}, "no checkpoints")

	// checkpoint_diff: HEAD vs the working tree by default, or any two.
	s.want("checkpoint_diff", nil, "no differences")
	s.want("checkpoint_diff", args{"from": "s2", "to": "s1"}, seedDiff)
	testutil.WriteFiles(t, ws, map[string]string{"a.txt": "v3\n"})
	match(t, `(?s)^diff --git a/a.txt b/a.txt\n.*\n-v1\n\+v3\n$`, s.ok("checkpoint_diff", args{}))
	s.want("checkpoint_diff", args{"paths": []string{"b.txt"}}, "no differences")

	// checkpoint_restore: a revision, optionally some paths; unsaved work
	// is saved first and said so.
	match(t, `^restored `+s1[:12]+` \(1 file\(s\) changed\):\na\.txt\nunsaved changes were saved first as [0-9a-f]{12}; undo brings them back$`,
		s.ok("checkpoint_restore", args{"rev": "s1"}))
	if a := testutil.ReadFile(t, ws, "a.txt"); a != "v2\n" {
		t.Errorf("after checkpoint_restore: a=%q", a)
	}
	testutil.WriteFiles(t, ws, map[string]string{"b.txt": "b3\n"})
	match(t, `^restored `+s2[:12]+` \(1 file\(s\) changed\):\nb\.txt\n`, s.ok("checkpoint_restore", args{"rev": "s2", "paths": []string{"b.txt"}}))
	if a, b := testutil.ReadFile(t, ws, "a.txt"), testutil.ReadFile(t, ws, "b.txt"); a != "v2\n" || b != "b1\n" {
		t.Errorf("after a partial restore: a=%q b=%q", a, b)
	}

	// snapshot_delete, force and ttl.
	s.want("snapshot_delete", args{"name": "s1"}, "snapshot s1 deleted")
	s.want("snapshot_list", nil, "s2\t"+s2[:12]+"\t2026-04-23T12:15:00+00:00\tinitial checkpoint")
	s.wantErr("snapshot_create", args{"name": "s2"}, "ckpt: snapshot create: snapshot \"s2\" already exists (checkpoint "+s2[:12]+")\n"+
		"ckpt: hint: replace it with --force (MCP: force: true), or pick another name")
	clk.Set("2026-04-23T13:00:00Z")
	match(t, `^snapshot s2 created: [0-9a-f]{64}$`, s.ok("snapshot_create", args{"name": "s2", "force": true, "description": "forced", "ttl": "1h"}))
	match(t, `^s2\t[0-9a-f]{12}\t2026-04-23T13:00:00\+00:00\tforced$`, s.ok("snapshot_list", nil))
	clk.Set("2026-04-23T14:00:00Z")
	s.want("snapshot_list", nil, "no snapshots") // expired
	s.wantErr("snapshot_create", args{"name": "s3", "ttl": "soon"}, `ckpt: ttl: invalid duration "soon" (e.g. 90m, 24h, 30d)`)

	// Errors: the CLI's text, as tool errors; nothing touched.
	before := testutil.ReadFile(t, ws, "a.txt") + testutil.ReadFile(t, ws, "b.txt")
	unknown := "ckpt: snapshot %s: no snapshot named \"nope\"\nckpt: hint: `ckpt snapshot list` (MCP: snapshot_list) shows the snapshots"
	s.wantErr("snapshot_restore", args{"name": "nope"}, strings.Replace(unknown, "%s", "restore", 1))
	s.wantErr("snapshot_diff", args{"name": "nope"}, strings.Replace(unknown, "%s", "diff", 1))
	s.wantErr("snapshot_delete", args{"name": "nope"}, strings.Replace(unknown, "%s", "delete", 1))
	for _, name := range []string{"", ".secret", "foo/bar", "a b", "-x"} {
		err := ckpt.ValidSnapshotName(name)
		for _, tool := range []string{"create", "restore", "diff", "delete"} {
			s.wantErr("snapshot_"+tool, args{"name": name}, "ckpt: snapshot "+tool+": "+err.Error())
		}
	}
	s.wantErr("checkpoint_restore", args{"rev": "nosuch"}, "ckpt: unknown revision \"nosuch\": no checkpoint, snapshot, tag or branch has that name\n"+
		"ckpt: hint: `ckpt list` shows checkpoints; revisions are ids (any unique prefix of 4+ hex digits), HEAD, HEAD~N, @last (the newest checkpoint), or snapshot, tag and branch names")
	s.wantErr("redo", nil, "ckpt: nothing to redo\nckpt: hint: redo follows undo; a new save or restore after an undo starts a new timeline")
	if text, isErr := s.call("snapshot_restore", args{}); !isErr || !strings.Contains(text, `missing properties: ["name"]`) {
		t.Errorf("missing name: %v %q", isErr, text)
	}
	if after := testutil.ReadFile(t, ws, "a.txt") + testutil.ReadFile(t, ws, "b.txt"); after != before {
		t.Errorf("failed calls changed the workspace: %q, was %q", after, before)
	}
	if l := testutil.ReadFile(t, ws, "debug.log"); l != "log 2\n" {
		t.Errorf("ignored debug.log = %q", l)
	}
}

// Without --workspace the server works in the client's first file:// root,
// and follows the client when its roots change: asked for with a multi
// round-trip result on protocol 2026-07-28, with roots/list before.
func TestRoots(t *testing.T) {
	for _, v := range []string{"", "2025-11-25", "2025-06-18"} {
		t.Run("protocol="+v, func(t *testing.T) { testRoots(t, v) })
	}
}

func testRoots(t *testing.T, version string) {
	ws1, ws2 := t.TempDir(), t.TempDir()
	testutil.WriteFiles(t, ws1, map[string]string{"one.txt": "1\n"})
	testutil.WriteFiles(t, ws2, map[string]string{"two.txt": "2\n"})
	var mu sync.Mutex
	var opened []string
	srv := mcpserver.New(mcpserver.Options{Open: func(ctx context.Context, dir string) (*ckpt.Repo, error) {
		mu.Lock()
		opened = append(opened, dir)
		mu.Unlock()
		if dir == "" {
			dir = ws2 // "the current directory"
		}
		return ckpt.Open(ctx, dir, ckpt.Options{Backend: ckpt.BackendMemory})
	}})
	defer srv.Close()

	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	client.AddRoots(&mcp.Root{URI: "https://example.com/not-a-dir"}, &mcp.Root{URI: "file://" + filepath.ToSlash(ws1), Name: "one"})
	s := connectVersion(t, srv, client, version)
	s.ok("snapshot_create", args{"name": "a"})
	testutil.WriteFiles(t, ws1, map[string]string{"new.txt": "new\n"})
	match(t, `^diff --git a/new.txt b/new.txt\n`, s.ok("snapshot_diff", args{"name": "a"}))

	// The client's roots change: the next call works in the new root.
	client.RemoveRoots("file://" + filepath.ToSlash(ws1))
	client.AddRoots(&mcp.Root{URI: "file://" + filepath.ToSlash(ws2)})
	deadline := time.Now().Add(10 * time.Second)
	for s.ok("snapshot_list", nil) != "no snapshots" {
		if time.Now().After(deadline) {
			t.Fatal("the server did not follow the client's new root")
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	if !slices.Equal(opened, []string{ws1, ws2}) {
		t.Errorf("opened %q, want %q", opened, []string{ws1, ws2})
	}
	mu.Unlock()

	// A client without roots: the current directory's workspace ("").
	noRoots := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	s2 := connectVersion(t, srv, noRoots, version)
	s2.want("snapshot_list", nil, "no snapshots")
	mu.Lock()
	if opened[len(opened)-1] != "" {
		t.Errorf("without roots opened %q, want \"\"", opened[len(opened)-1])
	}
	mu.Unlock()
}

// sessionServer is an MCP server on a new workspace holding files, and
// the workspace opened in this process on the same store (close it
// before the server is called: the server opens its own).
func sessionServer(t *testing.T, files map[string]string, now func() time.Time) (*session, string, *ckpt.Repo) {
	t.Helper()
	ws, store := t.TempDir(), t.TempDir()
	testutil.WriteFiles(t, ws, files)
	open := func(ctx context.Context, dir string) (*ckpt.Repo, error) {
		return ckpt.Open(ctx, dir, ckpt.Options{Store: store, Now: now})
	}
	srv := mcpserver.New(mcpserver.Options{Workspace: ws, Open: open})
	t.Cleanup(func() { srv.Close() })
	s := connect(t, srv, nil)
	r, err := open(context.Background(), ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return s, ws, r
}

// newSession starts session id and returns its controller.
func newSession(t *testing.T, r *ckpt.Repo, id string) *ckpt.Controller {
	t.Helper()
	ctx := context.Background()
	if _, err := r.NewSession(ctx, ckpt.SessionOptions{ID: id}); err != nil {
		t.Fatal(err)
	}
	c, _, err := r.Controller(ctx, ckpt.ControllerOptions{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// session_turns and session_rewind drive the session controller.
func TestSessionTools(t *testing.T) {
	ctx := context.Background()
	clk := testutil.NewClock("2026-04-23T12:00:00Z")
	s, ws, r := sessionServer(t, map[string]string{"a.txt": "v1\n", "b.txt": "keep\n"}, clk.Now)
	s.wantErr("session_turns", args{}, "ckpt: no session\nckpt: hint: `ckpt session new` starts one (agent hooks start them by themselves)")
	c := newSession(t, r, "s1")
	if _, err := c.BeginTurn(ctx, "change a\nand more"); err != nil {
		t.Fatal(err)
	}
	testutil.WriteFiles(t, ws, map[string]string{"a.txt": "v2\n", "new.txt": "n\n"})
	if _, err := c.EndTurn(ctx); err != nil {
		t.Fatal(err)
	}
	r.Close()

	s.want("session_turns", args{}, "session s1\n1\t2026-04-23T12:00:00+00:00\t+1 ~1 -0\tchange a")
	s.want("session_rewind", args{"turn": 1, "dry_run": true}, "would rewind code to the start of turn 1 (2 file(s) changed):\na.txt\nnew.txt")
	s.want("session_rewind", args{"turn": 1}, "rewound code to the start of turn 1 (2 file(s) changed):\na.txt\nnew.txt")
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "v1\n" {
		t.Fatalf("a.txt = %q", b)
	}
	s.want("session_rewind", args{"turn": 1, "scope": "conversation"},
		"rewound the conversation to before turn 1 (1 message(s), 1 turn(s) removed); its prompt:\nchange a\nand more")
	s.wantErr("session_rewind", args{"turn": 1}, "ckpt: session s1 has no turns yet")
	s.wantErr("session_rewind", args{"turn": 1, "scope": "all"}, `ckpt: rewind: unknown scope "all" (want code, conversation or both)`)
}

// session_rewind keeps the user's edits made between turns unless asked
// for an exact rewind (exact, or keep_user_edits false from older
// clients); asking for both is an error.
func TestSessionRewindKeepsUserEdits(t *testing.T) {
	ctx := context.Background()
	s, ws, r := sessionServer(t, map[string]string{"a.txt": "v1\n", "b.txt": "b1\n"}, nil)
	c := newSession(t, r, "s1")
	if _, err := c.BeginTurn(ctx, "change a"); err != nil {
		t.Fatal(err)
	}
	testutil.WriteFiles(t, ws, map[string]string{"a.txt": "v2\n"})
	if _, err := c.EndTurn(ctx); err != nil {
		t.Fatal(err)
	}
	r.Close()
	// The user's edit after the turn.
	testutil.WriteFiles(t, ws, map[string]string{"b.txt": "mine\n"})

	s.want("session_rewind", args{"turn": 1, "exact": true, "dry_run": true}, "would rewind code to the start of turn 1 (2 file(s) changed):\na.txt\nb.txt")
	s.want("session_rewind", args{"turn": 1, "keep_user_edits": false, "dry_run": true}, "would rewind code to the start of turn 1 (2 file(s) changed):\na.txt\nb.txt")
	s.wantErr("session_rewind", args{"turn": 1, "keep_user_edits": true, "exact": true}, "ckpt: session_rewind: exact and keep_user_edits contradict each other; pass one")
	s.want("session_rewind", args{"turn": 1, "keep_user_edits": true, "dry_run": true}, "would rewind code to the start of turn 1 (1 file(s) changed):\na.txt")
	if got := s.ok("session_rewind", args{"turn": 1}); !strings.HasPrefix(got, "rewound code to the start of turn 1 (1 file(s) changed):\na.txt\nunsaved changes were saved first as ") {
		t.Errorf("session_rewind: %q", got)
	}
	for p, want := range map[string]string{"a.txt": "v1\n", "b.txt": "mine\n"} {
		if got := testutil.ReadFile(t, ws, p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
}
