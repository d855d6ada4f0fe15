package httpserver_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/httpserver"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// ckpt serve as a real process: the URL it prints logs in, the token
// reads, a save by another ckpt process reaches an open event stream,
// and SIGINT ends it at once, stream open or not, with status 0.
func TestServeProcess(t *testing.T) {
	dir := testutil.TempDir(t)
	ws, store := filepath.Join(dir, "ws"), filepath.Join(dir, "store")
	testutil.WriteFiles(t, ws, map[string]string{"a.txt": "one\n"})
	bin := testutil.CkptBinary(t, filepath.Join(dir, "bin"))
	env := append(os.Environ(), "CKPT_NO_WATCH=1", "XDG_STATE_HOME="+dir, "CKPT_STORE="+store)
	run := func(args ...string) {
		cmd := exec.Command(bin, append([]string{"--workspace", ws}, args...)...)
		cmd.Env = env
		if code, out, errs := testutil.Run(t, cmd); code != 0 {
			t.Fatalf("ckpt %v: %d %s%s", args, code, out, errs)
		}
	}
	run("save", "-m", "first")
	tokenFile := filepath.Join(dir, "token")
	serve := exec.Command(bin, "--workspace", ws, "serve", "--token-file", tokenFile)
	serve.Env = env
	base, tok := startServe(t, serve, tokenFile)
	get := func(path string) *http.Response {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if resp := get("/api/status?changes=false"); resp.StatusCode != 200 {
		t.Fatalf("status: %d", resp.StatusCode)
	} else {
		resp.Body.Close()
	}
	resp := get("/api/events")
	defer resp.Body.Close()
	events := make(chan string, 100)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			events <- sc.Text()
		}
	}()
	testutil.WriteFiles(t, ws, map[string]string{"a.txt": "two\n"})
	run("save", "-m", "from another process")
	deadline := time.After(2 * time.Second)
	for seen := false; !seen; {
		select {
		case l := <-events:
			seen = strings.HasPrefix(l, "data: ") && strings.Contains(l, `"message":"from another process"`) && strings.Contains(l, `"source":"other"`)
		case <-deadline:
			t.Fatal("no event for the other process's save")
		}
	}
	start := time.Now()
	serve.Process.Signal(syscall.SIGINT)
	// Status 0: it stopped by itself within the CLI's InterruptGrace,
	// which otherwise ends it with 130.
	if err := serve.Wait(); err != nil {
		t.Errorf("ckpt serve after SIGINT: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("ckpt serve took %v to stop", d)
	}
	for range events {
	}
}

// ckpt serve --all as a real process: it lists every workspace with a
// store, serves each one's checkpoints under /w/ID/, and SIGINT ends it
// with status 0 after it opened them.
func TestServeAllProcess(t *testing.T) {
	dir := testutil.TempDir(t)
	bin := testutil.CkptBinary(t, filepath.Join(dir, "bin"))
	env := append(os.Environ(), "CKPT_NO_WATCH=1", "XDG_STATE_HOME="+filepath.Join(dir, "state"), "CKPT_STORE=")
	var wss []string
	for _, name := range []string{"one", "two"} {
		ws := filepath.Join(dir, name)
		testutil.WriteFiles(t, ws, map[string]string{"a.txt": name + "\n"})
		cmd := exec.Command(bin, "--workspace", ws, "save", "-m", "first of "+name)
		cmd.Env = env
		if code, out, errs := testutil.Run(t, cmd); code != 0 {
			t.Fatalf("ckpt save: %d %s%s", code, out, errs)
		}
		wss = append(wss, ws)
	}
	tokenFile := filepath.Join(dir, "token")
	serve := exec.Command(bin, "serve", "--all", "--token-file", tokenFile)
	serve.Env = env
	base, tok := startServe(t, serve, tokenFile)
	get := func(path string, v any) {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d", path, resp.StatusCode)
		}
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}
	var list httpserver.WorkspacesResponse
	get("/api/workspaces", &list)
	if len(list.Workspaces) != 2 {
		t.Fatalf("workspaces: %+v", list)
	}
	for i, w := range list.Workspaces {
		if string(w.Workspace) != wss[i] || w.ID != httpserver.WorkspaceID(wss[i]) || !w.Exists || w.Backend != "sqlite" {
			t.Errorf("workspace %d: %+v", i, w)
		}
		var page httpserver.Page
		get(w.URL+"api/checkpoints", &page)
		if len(page.Checkpoints) != 1 || page.Checkpoints[0].Message != "first of "+filepath.Base(wss[i]) {
			t.Errorf("%s's checkpoints: %+v", wss[i], page.Checkpoints)
		}
	}
	start := time.Now()
	serve.Process.Signal(syscall.SIGINT)
	if err := serve.Wait(); err != nil {
		t.Errorf("ckpt serve --all after SIGINT: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("ckpt serve --all took %v to stop", d)
	}
}

// startServe starts a `ckpt serve` process that writes its token to
// tokenFile and returns the server's base URL (from the login URL it
// prints first) and the API token. The process is killed when the test ends (if
// it has not stopped).
func startServe(t *testing.T, serve *exec.Cmd, tokenFile string) (base, token string) {
	t.Helper()
	stdout, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { serve.Process.Kill() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	base, _, _ = strings.Cut(strings.TrimSpace(line), "/?token=")
	tok, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	return base, strings.TrimSpace(string(tok))
}
