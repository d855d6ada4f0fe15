package s3test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// startTimeout bounds how long Start and Restart wait for the gateway to
// answer.
const startTimeout = 30 * time.Second

// Server is a Versity S3 Gateway serving the posix directory Dir on a
// loopback port, with a root account of its own. Start runs one; it is
// killed when the test ends.
type Server struct {
	Endpoint  string // http://127.0.0.1:PORT
	AccessKey string
	SecretKey string
	Region    string // us-east-1
	Dir       string // the gateway's storage: one directory per bucket

	bin  string
	addr string // 127.0.0.1:PORT
	log  string // the gateway's stdout and stderr, across restarts

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// Start runs a gateway for the test: a free loopback port, a temporary
// directory, random keys. It returns once the gateway answers an
// authenticated request, and kills it when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{
		bin:       Binary(t),
		AccessKey: "CKPT" + strings.ToUpper(randomHex(t, 8)),
		SecretKey: randomHex(t, 20),
		Region:    "us-east-1",
		Dir:       t.TempDir(),
		log:       filepath.Join(t.TempDir(), "versitygw.log"),
	}
	t.Cleanup(s.Stop)
	// The port is free when chosen and taken by the gateway a moment
	// later; another process may take it in between, so a gateway that
	// cannot listen is started again on another port.
	var err error
	for try := 0; try < 5; try++ {
		s.addr = freeLoopbackAddr(t)
		s.Endpoint = "http://" + s.addr
		if err = s.start(); err == nil {
			return s
		}
		if !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	t.Fatal(err)
	return nil
}

// Restart kills the gateway if it runs and starts it again on the same
// port, directory and keys: what it stored is still there.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	var err error
	for try := 0; try < 20; try++ {
		if err = s.start(); err == nil || !strings.Contains(err.Error(), "address already in use") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// Stop kills the gateway (SIGKILL: no chance to finish what it was doing)
// and waits for it to exit. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill() // it may have exited already
	<-s.done
	s.cmd, s.done = nil, nil
}

// Env is the environment that points the AWS tools and SDKs, and ckpt's
// S3 remotes, at the gateway: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_REGION and AWS_ENDPOINT_URL.
func (s *Server) Env() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + s.AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + s.SecretKey,
		"AWS_REGION=" + s.Region,
		"AWS_ENDPOINT_URL=" + s.Endpoint,
	}
}

// Client is a minio-go client of the gateway with its root keys.
func (s *Server) Client(t testing.TB) *minio.Client {
	t.Helper()
	return s.ClientVia(t, s.Endpoint)
}

// ClientVia is a minio-go client with the gateway's keys that talks to
// endpoint (http://host:port) instead: a FaultProxy's URL in front of the
// gateway. It signs requests for endpoint's host.
func (s *Server) ClientVia(t testing.TB, endpoint string) *minio.Client {
	t.Helper()
	host, ok := strings.CutPrefix(endpoint, "http://")
	if !ok {
		t.Fatalf("s3test: endpoint %q: want http://host:port", endpoint)
	}
	c, err := minio.New(host, &minio.Options{
		Creds:  credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""),
		Secure: false,
		Region: s.Region,
	})
	if err != nil {
		t.Fatalf("s3test: client of %s: %v", endpoint, err)
	}
	return c
}

// CreateBucket creates the bucket name on the gateway.
func (s *Server) CreateBucket(t testing.TB, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Client(t).MakeBucket(ctx, name, minio.MakeBucketOptions{Region: s.Region}); err != nil {
		t.Fatalf("s3test: create bucket %s at %s: %v", name, s.Endpoint, err)
	}
}

// Log is what the gateway printed so far, across restarts.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.log)
	return string(b)
}

// start runs the gateway on s.addr and waits until it answers.
func (s *Server) start() error {
	logf, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("s3test: %w", err)
	}
	defer logf.Close()
	mark, _ := logf.Seek(0, 2)
	fmt.Fprintf(logf, "== versitygw --port %s posix %s\n", s.addr, s.Dir)
	c := exec.Command(s.bin, "--port", s.addr, "posix", s.Dir)
	c.Env = append(gatewayEnv(), "ROOT_ACCESS_KEY="+s.AccessKey, "ROOT_SECRET_KEY="+s.SecretKey, "VGW_REGION="+s.Region)
	c.Stdout, c.Stderr = logf, logf
	c.SysProcAttr = procAttr()
	if err := c.Start(); err != nil {
		return fmt.Errorf("s3test: start %s: %w", s.bin, err)
	}
	done := make(chan struct{})
	go func() { c.Wait(); close(done) }() // its exit is reported by waitReady
	s.mu.Lock()
	s.cmd, s.done = c, done
	s.mu.Unlock()
	if err := s.waitReady(done); err != nil {
		s.Stop()
		b, _ := os.ReadFile(s.log)
		if int(mark) <= len(b) {
			b = b[mark:]
		}
		return fmt.Errorf("s3test: versitygw on %s: %w; its output:\n%s", s.addr, err, bytes.TrimSpace(b))
	}
	return nil
}

// waitReady polls the gateway with an authenticated ListBuckets until it
// answers, the process exits, or startTimeout passes.
func (s *Server) waitReady(exited <-chan struct{}) error {
	c, err := minio.New(s.addr, &minio.Options{
		Creds:      credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""),
		Region:     s.Region,
		MaxRetries: 1,
	})
	if err != nil {
		return err
	}
	deadline := time.Now().Add(startTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err = c.ListBuckets(ctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("exited before it answered")
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer after %s: %w", startTimeout, err)
		}
	}
}

// gatewayEnv is the test's environment without the variables that would
// configure the gateway (VGW_*, ROOT_*, the audit log and webhook) or
// point it at AWS.
func gatewayEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "VGW_") || strings.HasPrefix(name, "ROOT_") || strings.HasPrefix(name, "AWS_") ||
			name == "LOGFILE" || name == "WEBHOOK" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// freeLoopbackAddr is 127.0.0.1 and a port nobody listens on just now.
func freeLoopbackAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("s3test: find a free port: %v", err)
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

func randomHex(t testing.TB, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
