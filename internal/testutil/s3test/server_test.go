package s3test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// oneTry is a client of endpoint with s's keys that does not retry.
func oneTry(t *testing.T, s *Server, endpoint string) *minio.Client {
	t.Helper()
	c, err := minio.New(strings.TrimPrefix(endpoint, "http://"), &minio.Options{
		Creds:      credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""),
		Region:     s.Region,
		MaxRetries: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func put(t *testing.T, c *minio.Client, bucket, key, data string, opts minio.PutObjectOptions) (minio.UploadInfo, error) {
	t.Helper()
	return c.PutObject(testContext(t), bucket, key, strings.NewReader(data), int64(len(data)), opts)
}

func mustPut(t *testing.T, c *minio.Client, bucket, key, data string) minio.UploadInfo {
	t.Helper()
	info, err := put(t, c, bucket, key, data, minio.PutObjectOptions{})
	if err != nil {
		t.Fatalf("put %s/%s: %v", bucket, key, err)
	}
	return info
}

func get(t *testing.T, c *minio.Client, bucket, key string) (string, error) {
	t.Helper()
	o, err := c.GetObject(testContext(t), bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return "", err
	}
	defer o.Close()
	b, err := io.ReadAll(o)
	return string(b), err
}

func mustGet(t *testing.T, c *minio.Client, bucket, key string) string {
	t.Helper()
	s, err := get(t, c, bucket, key)
	if err != nil {
		t.Fatalf("get %s/%s: %v", bucket, key, err)
	}
	return s
}

func list(t *testing.T, c *minio.Client, bucket, prefix string) []string {
	t.Helper()
	var keys []string
	for o := range c.ListObjects(testContext(t), bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			t.Fatalf("list %s/%s: %v", bucket, prefix, o.Err)
		}
		keys = append(keys, o.Key)
	}
	return keys
}

// wantStatus checks that err is an S3 error answer with status and code.
func wantStatus(t *testing.T, what string, err error, status int, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want %d %s", what, status, code)
	}
	e := minio.ToErrorResponse(err)
	t.Logf("%s: StatusCode=%d Code=%q Message=%q (error %q)", what, e.StatusCode, e.Code, e.Message, err)
	if e.StatusCode != status || e.Code != code {
		t.Fatalf("%s: got %d %q (%v), want %d %q", what, e.StatusCode, e.Code, err, status, code)
	}
}

func TestStartServesABucket(t *testing.T) {
	s := Start(t)
	if !strings.HasPrefix(s.Endpoint, "http://127.0.0.1:") || s.Region != "us-east-1" || s.AccessKey == "" || len(s.SecretKey) < 20 {
		t.Fatalf("server %+v: want a loopback endpoint, us-east-1 and keys", s)
	}
	s.CreateBucket(t, "ckpt-test")
	c := s.Client(t)
	mustPut(t, c, "ckpt-test", "a/b.txt", "hello")
	mustPut(t, c, "ckpt-test", "a/c.txt", "world")
	if got := mustGet(t, c, "ckpt-test", "a/b.txt"); got != "hello" {
		t.Fatalf("get a/b.txt: got %q, want hello", got)
	}
	if got, want := list(t, c, "ckpt-test", "a/"), []string{"a/b.txt", "a/c.txt"}; !slices.Equal(got, want) {
		t.Fatalf("list a/: got %q, want %q", got, want)
	}
	// The posix backend keeps each bucket as a directory of Dir.
	if b, err := os.ReadFile(filepath.Join(s.Dir, "ckpt-test", "a", "b.txt")); err != nil || string(b) != "hello" {
		t.Fatalf("%s: got %q, %v, want hello", filepath.Join(s.Dir, "ckpt-test", "a", "b.txt"), b, err)
	}
	want := []string{
		"AWS_ACCESS_KEY_ID=" + s.AccessKey, "AWS_SECRET_ACCESS_KEY=" + s.SecretKey,
		"AWS_REGION=us-east-1", "AWS_ENDPOINT_URL=" + s.Endpoint,
	}
	if got := s.Env(); !slices.Equal(got, want) {
		t.Fatalf("Env: got %q, want %q", got, want)
	}
}

func TestStartRejectsWrongKeys(t *testing.T) {
	s := Start(t)
	s.CreateBucket(t, "bkt")
	other := &Server{AccessKey: s.AccessKey, SecretKey: "not-" + s.SecretKey, Region: s.Region}
	_, err := other.ClientVia(t, s.Endpoint).ListBuckets(testContext(t))
	wantStatus(t, "list buckets with the wrong secret key", err, http.StatusForbidden, "SignatureDoesNotMatch")
}

func TestConditionalWritesAreEnforced(t *testing.T) {
	s := Start(t)
	s.CreateBucket(t, "bkt")
	c := s.Client(t)

	var ifNoneMatch minio.PutObjectOptions
	ifNoneMatch.SetMatchETagExcept("*")
	first, err := put(t, c, "bkt", "ref", "v1", ifNoneMatch)
	if err != nil {
		t.Fatalf("put with If-None-Match * of a new key: %v", err)
	}
	_, err = put(t, c, "bkt", "ref", "v2", ifNoneMatch)
	wantStatus(t, "put with If-None-Match * of an existing key", err, http.StatusPreconditionFailed, "PreconditionFailed")

	var ifMatch minio.PutObjectOptions
	ifMatch.SetMatchETag(first.ETag)
	second, err := put(t, c, "bkt", "ref", "v2", ifMatch)
	if err != nil {
		t.Fatalf("put with If-Match of the current ETag: %v", err)
	}
	if second.ETag == first.ETag {
		t.Fatalf("ETag unchanged (%s) by a new content", first.ETag)
	}
	_, err = put(t, c, "bkt", "ref", "v3", ifMatch) // first.ETag is stale now
	wantStatus(t, "put with If-Match of a stale ETag", err, http.StatusPreconditionFailed, "PreconditionFailed")

	var ifMatchMissing minio.PutObjectOptions
	ifMatchMissing.SetMatchETag(first.ETag)
	_, err = put(t, c, "bkt", "missing", "v1", ifMatchMissing)
	if err == nil {
		t.Fatal("put with If-Match of a key that does not exist: no error")
	}
	e := minio.ToErrorResponse(err)
	t.Logf("put with If-Match of a missing key: StatusCode=%d Code=%q", e.StatusCode, e.Code)

	if got := mustGet(t, c, "bkt", "ref"); got != "v2" {
		t.Fatalf("after the failed writes: got %q, want v2", got)
	}
}

func TestRestartKeepsData(t *testing.T) {
	s := Start(t)
	s.CreateBucket(t, "bkt")
	endpoint := s.Endpoint
	mustPut(t, s.Client(t), "bkt", "k", "kept")

	s.Stop()
	if _, err := get(t, oneTry(t, s, s.Endpoint), "bkt", "k"); err == nil {
		t.Fatal("a stopped server answered")
	}
	s.Stop() // a second Stop does nothing

	s.Restart(t)
	if s.Endpoint != endpoint {
		t.Fatalf("endpoint after restart: got %s, want %s", s.Endpoint, endpoint)
	}
	if got := mustGet(t, s.Client(t), "bkt", "k"); got != "kept" {
		t.Fatalf("after restart: got %q, want kept", got)
	}
	s.Restart(t) // a running server restarts too
	mustPut(t, s.Client(t), "bkt", "k2", "new")
	if got := list(t, s.Client(t), "bkt", ""); !slices.Equal(got, []string{"k", "k2"}) {
		t.Fatalf("list after two restarts: got %q", got)
	}
	if !bytes.Contains([]byte(s.Log()), []byte("== versitygw --port")) {
		t.Fatalf("Log has no start line:\n%s", s.Log())
	}
}

func TestBinaryHonoursCKPT_VERSITYGW(t *testing.T) {
	bin := Binary(t)
	t.Setenv("CKPT_VERSITYGW", bin)
	if got := Binary(t); got != bin {
		t.Fatalf("Binary with CKPT_VERSITYGW=%s: got %s", bin, got)
	}
	dir, err := CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(dir) != "versitygw-"+Version || filepath.Base(filepath.Dir(dir)) != "ckpt-tools" {
		t.Fatalf("CacheDir: got %s, want …/ckpt-tools/versitygw-%s", dir, Version)
	}
}

// scripts/test installs the release the tests expect.
func TestScriptInstallsVersion(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "scripts", "test"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "\nversitygw_version=" + Version + "\n"; !strings.Contains(string(b), want) {
		t.Fatalf("scripts/test: no line %q: it installs another versitygw than s3test.Version", strings.TrimSpace(want))
	}
}
