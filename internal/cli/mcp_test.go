package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// ckpt mcp answers the sandbox snapshot tools' four tools with exactly what ckpt snapshot
// prints, and fails with exactly what it prints on stderr. Both run
// in-process here: the MCP server through Main with pipes for stdin and
// stdout, as cmd/ckpt runs it.
func TestMCPMatchesCLI(t *testing.T) {
	ctx := context.Background()
	ws, store := t.TempDir(), t.TempDir()
	write := func(p, s string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(filepath.Join(ws, p)), 0o755)
		if err := os.WriteFile(filepath.Join(ws, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", "v1\n")
	write("b.txt", "b1\n")

	cli := func(args ...string) (string, string, int) {
		t.Helper()
		var o, e bytes.Buffer
		code := Main(ctx, append([]string{"-C", ws, "--store", store}, args...), nil, &o, &e)
		return o.String(), e.String(), code
	}

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var serverErr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		code := Main(ctx, []string{"--store", store, "mcp", "--workspace", ws}, inR, outW, &serverErr)
		outW.Close()
		done <- code
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tool := func(name string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res.Content[0].(*mcp.TextContent).Text, res.IsError
	}
	same := func(what, mcpText, cliOut string) {
		t.Helper()
		if !strings.HasSuffix(mcpText, "\n") {
			mcpText += "\n"
		}
		if mcpText != cliOut {
			t.Errorf("%s: MCP and CLI differ:\nmcp %q\ncli %q", what, mcpText, cliOut)
		}
	}

	// Responses.
	text, _ := tool("snapshot_list", nil)
	out, _, _ := cli("snapshot", "list")
	same("empty list", text, out)

	text, _ = tool("snapshot_create", map[string]any{"name": "s1", "description": "from mcp"})
	out, _, _ = cli("snapshot", "create", "s2", "--description", "from cli")
	id := regexp.MustCompile(`[0-9a-f]{64}`)
	same("create", strings.Replace(id.ReplaceAllString(text, "ID"), "s1", "s2", 1), id.ReplaceAllString(out, "ID"))

	text, _ = tool("snapshot_list", nil)
	out, _, _ = cli("snapshot", "list")
	same("list", text, out)
	if strings.Count(out, "\n") != 2 {
		t.Errorf("list: %q", out)
	}

	write("a.txt", "v2\n")
	write("new/c.txt", "c\n")
	text, _ = tool("snapshot_diff", map[string]any{"name": "s1"})
	out, _, _ = cli("snapshot", "diff", "s1")
	same("diff", text, out)

	text, _ = tool("snapshot_restore", map[string]any{"name": "s1"})
	write("a.txt", "v2\n")
	write("new/c.txt", "c\n")
	out, _, _ = cli("snapshot", "restore", "s1")
	same("restore", text, out)
	if !strings.HasPrefix(out, "restored snapshot s1 (2 file(s) changed):\na.txt\nnew/c.txt\n") {
		t.Errorf("restore: %q", out)
	}

	text, _ = tool("snapshot_diff", map[string]any{"name": "s1"})
	out, _, _ = cli("snapshot", "diff", "s1")
	same("no differences", text, out)

	text, _ = tool("snapshot_delete", map[string]any{"name": "s1"})
	out, _, _ = cli("snapshot", "delete", "s2")
	same("delete", strings.Replace(text, "s1", "s2", 1), out)

	// Errors: the tool error's text is what the CLI prints on stderr.
	cli("snapshot", "create", "s3")
	for _, c := range []struct {
		tool string
		args map[string]any
		cli  []string
		code int
	}{
		{"snapshot_restore", map[string]any{"name": "nope"}, []string{"snapshot", "restore", "nope"}, ExitError},
		{"snapshot_diff", map[string]any{"name": "nope"}, []string{"snapshot", "diff", "nope"}, ExitError},
		{"snapshot_delete", map[string]any{"name": "nope"}, []string{"snapshot", "delete", "nope"}, ExitError},
		{"snapshot_create", map[string]any{"name": "s3"}, []string{"snapshot", "create", "s3"}, ExitError},
		{"snapshot_create", map[string]any{"name": ".secret"}, []string{"snapshot", "create", ".secret"}, ExitUsage},
		{"snapshot_create", map[string]any{"name": ""}, []string{"snapshot", "create", ""}, ExitUsage},
		{"snapshot_create", map[string]any{"name": "-x"}, []string{"snapshot", "create", "--", "-x"}, ExitUsage},
		{"snapshot_restore", map[string]any{"name": "a b"}, []string{"snapshot", "restore", "a b"}, ExitUsage},
		{"snapshot_diff", map[string]any{"name": "foo/bar"}, []string{"snapshot", "diff", "foo/bar"}, ExitUsage},
		{"checkpoint_restore", map[string]any{"rev": "nosuch"}, []string{"restore", "nosuch"}, ExitError},
		{"redo", nil, []string{"redo"}, ExitError},
	} {
		text, isErr := tool(c.tool, c.args)
		out, errOut, code := cli(c.cli...)
		if !isErr || code != c.code || out != "" {
			t.Errorf("%s %v: tool error %v; ckpt %v exit %d (want %d), stdout %q", c.tool, c.args, isErr, c.cli, code, c.code, out)
		}
		same("error of "+strings.Join(c.cli, " "), text, errOut)
	}

	cs.Close()
	inW.Close()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("ckpt mcp exited %d: %s", code, serverErr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ckpt mcp did not exit when the client went away")
	}
	if serverErr.Len() > 0 {
		t.Errorf("ckpt mcp wrote to stderr: %s", serverErr.String())
	}
}

// Every global flag reaches ckpt mcp (--git-ref-prefix put refs under
// refs/ckpt before); a git ref update that fails after a tool's change is
// a tool error, never "created"; an unknown checkpoint kind is an error;
// and ckpt mcp --help names every tool the server lists.
func TestMCPFlagsErrorsAndHelp(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	git := func(args ...string) string { t.Helper(); return strings.TrimSpace(testutil.Git(t, ws, args...)) }
	git("init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644)
	git("add", "a.txt")
	git("commit", "-q", "-m", "user's commit")
	t.Setenv("CKPT_STORE", "")
	t.Setenv("XDG_STATE_HOME", t.TempDir())

	cs := serveMCP(t, "--backend", "git", "--git-ref-prefix", "refs/sandbox", "mcp", "--workspace", ws)
	tool := func(name string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res.Content[0].(*mcp.TextContent).Text, res.IsError
	}

	if text, isErr := tool("snapshot_create", map[string]any{"name": "s1"}); isErr {
		t.Fatalf("snapshot_create s1: %s", text)
	}
	if refs := git("for-each-ref", "--format=%(refname)", "refs/sandbox/snapshots/"); refs != "refs/sandbox/snapshots/s1" {
		t.Fatalf("--git-ref-prefix did not reach ckpt mcp: refs %q", refs)
	}
	if refs := git("for-each-ref", "refs/ckpt/"); refs != "" {
		t.Fatalf("refs under refs/ckpt: %q", refs)
	}

	// A ref ckpt did not write is in the way of s2: the snapshot is safe in
	// the store, but the tool fails as the CLI would.
	git("update-ref", "refs/sandbox/snapshots/s2", "HEAD")
	text, isErr := tool("snapshot_create", map[string]any{"name": "s2"})
	if !isErr || strings.Contains(text, "created") || !strings.Contains(text, "refs/sandbox") {
		t.Fatalf("snapshot_create with its ref in the way: error %v: %s", isErr, text)
	}
	if text, isErr := tool("snapshot_list", nil); isErr {
		t.Fatalf("a read-only tool after the failure: %s", text)
	}

	if text, isErr := tool("checkpoint_list", map[string]any{"kind": "bogus"}); !isErr || !strings.Contains(text, `invalid checkpoint kind name "bogus"`) {
		t.Fatalf("checkpoint_list with an unknown kind: error %v: %s", isErr, text)
	}

	var help bytes.Buffer
	Main(ctx, []string{"mcp", "--help"}, nil, &help, &help)
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if !strings.Contains(help.String(), tl.Name+" {") {
			t.Errorf("ckpt mcp --help does not list %s", tl.Name)
		}
	}
}

// ckpt mcp --sandbox answers as the sandbox snapshot tools document, byte
// for byte: a lazy `git init -b main`, 40-hex commit ids, refs under
// refs/sandbox/snapshots/, their list, diff and restore responses, and
// the user's HEAD untouched.
func TestMCPSandbox(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	t.Setenv("CKPT_STORE", "")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("CKPT_NOW", "2026-04-23T12:30:00Z")
	git := func(args ...string) string { t.Helper(); return strings.TrimSpace(testutil.Git(t, ws, args...)) }
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("v1\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "b.txt"), []byte("b\n"), 0o644)

	cs := serveMCP(t, "mcp", "--sandbox", "--workspace", ws)
	tool := func(name string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if res.IsError {
			t.Fatalf("%s: %s", name, text)
		}
		return text
	}

	if got := tool("snapshot_list", nil); got != "no snapshots" {
		t.Fatalf("empty list: %q", got)
	}
	got := tool("snapshot_create", map[string]any{"name": "s1", "description": "before refactor"})
	sha := git("rev-parse", "refs/sandbox/snapshots/s1")
	if want := "snapshot s1 created: " + sha; got != want || len(sha) != 40 {
		t.Fatalf("create: %q, want %q", got, want)
	}
	if head := git("symbolic-ref", "HEAD"); head != "refs/heads/main" {
		t.Fatalf("the lazy git init made HEAD %s, want refs/heads/main", head)
	}
	if err := exec.Command("git", "-C", ws, "rev-parse", "--verify", "-q", "HEAD").Run(); err == nil {
		t.Fatal("the user's branch got a commit")
	}
	if msg := git("log", "-1", "--format=%B", sha); !strings.HasPrefix(msg, "before refactor") {
		t.Fatalf("the snapshot commit's message: %q", msg)
	}
	if got, want := tool("snapshot_list", nil), "s1\t"+sha[:12]+"\t2026-04-23T12:30:00+00:00\tbefore refactor"; got != want {
		t.Fatalf("list: %q, want %q", got, want)
	}
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("v2\n"), 0o644)
	// The document's example has index 626799f..e5c5594: v1's blob, and an
	// illustrative one; git's own id of "v2\n" is what git diff prints.
	v2 := git("hash-object", "a.txt")[:7]
	if got, want := tool("snapshot_diff", map[string]any{"name": "s1"}), "diff --git a/a.txt b/a.txt\nindex 626799f.."+v2+" 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-v1\n+v2"; strings.TrimSuffix(got, "\n") != want {
		t.Fatalf("diff: %q, want %q", got, want)
	}
	os.WriteFile(filepath.Join(ws, "b.txt"), []byte("b2\n"), 0o644)
	if got, want := tool("snapshot_restore", map[string]any{"name": "s1"}), "restored snapshot s1 (2 file(s) changed):\na.txt\nb.txt"; strings.TrimSuffix(got, "\n") != want {
		t.Fatalf("restore: %q, want %q", got, want)
	}
	if got := tool("snapshot_diff", map[string]any{"name": "s1"}); got != "no differences" {
		t.Fatalf("diff after restore: %q", got)
	}
	if refs := git("for-each-ref", "--format=%(refname)", "refs/sandbox/snapshots/"); refs != "refs/sandbox/snapshots/s1" {
		t.Fatalf("refs: %q", refs)
	}
}

// serveMCP runs ckpt with args (an mcp command) in-process and returns a
// client connected to it; the server ends with the test.
func serveMCP(t *testing.T, args ...string) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var serverErr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		code := Main(ctx, args, inR, outW, &serverErr)
		outW.Close()
		done <- code
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); inW.Close(); <-done })
	return cs
}
