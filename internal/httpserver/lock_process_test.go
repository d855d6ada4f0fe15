package httpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/httpserver"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// While another process holds the store, a write through ckpt serve
// answers 503 locked (with Retry-After and a hint) within seconds, not
// after the CLI's ten-minute lock timeout.
func TestServeStoreBusy(t *testing.T) {
	testutil.Long(t, "waits out ckpt serve's lock timeout")
	dir := testutil.TempDir(t)
	ws, store := filepath.Join(dir, "ws"), filepath.Join(dir, "store")
	testutil.WriteFiles(t, ws, map[string]string{"a.txt": "one\n"})
	bin := testutil.CkptBinary(t, filepath.Join(dir, "bin"))
	tokenFile := filepath.Join(dir, "token")
	serve := exec.Command(bin, "--workspace", ws, "serve", "--token-file", tokenFile)
	serve.Env = append(os.Environ(), "CKPT_NO_WATCH=1", "XDG_STATE_HOME="+dir, "CKPT_STORE="+store)
	stdout, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { serve.Process.Kill(); serve.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	base, _, _ := strings.Cut(strings.TrimSpace(line), "/?token=")
	tok, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}

	other, err := ckpt.Open(context.Background(), ws, ckpt.Options{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	held, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() { done <- other.HoldLock(context.Background(), func() { close(held); <-release }) }()
	<-held
	defer func() { close(release); <-done }()

	req, _ := http.NewRequest("POST", base+"/api/checkpoints", strings.NewReader(`{"allow_empty":true}`))
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	start := time.Now()
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("a save while the store is held: %v after %v", err, time.Since(start))
	}
	defer resp.Body.Close()
	var e httpserver.Error
	json.NewDecoder(resp.Body).Decode(&e)
	if resp.StatusCode != http.StatusServiceUnavailable || e.Code != "locked" || e.Hint == "" || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a save while the store is held: %d %+v", resp.StatusCode, e)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("the answer took %v", d)
	}
}
