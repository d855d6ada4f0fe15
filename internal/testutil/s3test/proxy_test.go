package s3test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// proxied starts a server with the bucket bkt and a proxy in front of it.
func proxied(t *testing.T) (*Server, *FaultProxy) {
	t.Helper()
	s := Start(t)
	s.CreateBucket(t, "bkt")
	return s, NewFaultProxy(t, s.Endpoint)
}

// retrying is a client of endpoint with s's keys that tries a request at
// most tries times, waiting little between tries.
func retrying(t *testing.T, s *Server, endpoint string, tries int) *minio.Client {
	t.Helper()
	c, err := minio.New(strings.TrimPrefix(endpoint, "http://"), &minio.Options{
		Creds:      credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""),
		Region:     s.Region,
		MaxRetries: tries,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func isPut(r *http.Request) bool { return r.Method == http.MethodPut }
func isGet(r *http.Request) bool { return r.Method == http.MethodGet }

// records are the proxy's records of method, as "kind" or "kind*" for a
// fault.
func records(p *FaultProxy, method string) []string {
	var out []string
	for _, r := range p.Log() {
		if r.Method == method {
			s := r.Kind.String()
			if r.Fault {
				s += "*"
			}
			out = append(out, s)
		}
	}
	return out
}

func TestProxyForwardsSignedRequests(t *testing.T) {
	s, p := proxied(t)
	c := s.ClientVia(t, p.URL())
	keys := []string{"plain", "dir/with space+plus=equals.txt", "ünï/cödé~!'()*&$@,;:.txt"}
	for _, k := range keys {
		mustPut(t, c, "bkt", k, "data of "+k)
	}
	for _, k := range keys {
		if got := mustGet(t, c, "bkt", k); got != "data of "+k {
			t.Fatalf("get %q through the proxy: got %q", k, got)
		}
		if got := mustGet(t, s.Client(t), "bkt", k); got != "data of "+k {
			t.Fatalf("get %q from the server: got %q", k, got)
		}
	}
	want := slices.Clone(keys)
	slices.Sort(want)
	if got := list(t, c, "bkt", ""); !slices.Equal(got, want) {
		t.Fatalf("list through the proxy: got %q, want %q", got, want)
	}
	if _, err := c.StatObject(testContext(t), "bkt", "plain", minio.StatObjectOptions{}); err != nil {
		t.Fatalf("stat through the proxy: %v", err)
	}
	if err := c.RemoveObject(testContext(t), "bkt", "plain", minio.RemoveObjectOptions{}); err != nil {
		t.Fatalf("delete through the proxy: %v", err)
	}
	// Conditional headers arrive too.
	var ifNoneMatch minio.PutObjectOptions
	ifNoneMatch.SetMatchETagExcept("*")
	_, err := put(t, c, "bkt", keys[1], "again", ifNoneMatch)
	wantStatus(t, "put with If-None-Match * of an existing key through the proxy", err, http.StatusPreconditionFailed, "PreconditionFailed")
	// A large body, streamed.
	big := strings.Repeat("0123456789abcdef", 1<<16)
	mustPut(t, c, "bkt", "big", big)
	if got := mustGet(t, c, "bkt", "big"); got != big {
		t.Fatalf("get big: %d bytes, want %d", len(got), len(big))
	}
	if p.Injected() != 0 || p.Requests() < 12 {
		t.Fatalf("Requests %d, Injected %d: want at least 12 and no fault", p.Requests(), p.Injected())
	}
}

func TestProxyStatusIsRetried(t *testing.T) {
	for _, f := range []Fault{
		{Kind: Status, Status: 503, RetryAfter: "1", Limit: 2, Match: isPut},
		{Kind: Status, Status: 503, Limit: 2, Match: isPut},
		{Kind: Status, Limit: 2, Match: isPut}, // 500
	} {
		s, p := proxied(t)
		p.Set(f)
		if _, err := put(t, s.ClientVia(t, p.URL()), "bkt", "k", "v", minio.PutObjectOptions{}); err != nil {
			t.Fatalf("put after two %d answers: %v", f.Status, err)
		}
		if got, want := records(p, "PUT"), []string{"status*", "status*", "pass"}; !slices.Equal(got, want) {
			t.Fatalf("%+v: PUTs %q, want %q", f, got, want)
		}
		if p.Injected() != 2 {
			t.Fatalf("Injected: got %d, want 2", p.Injected())
		}
	}
}

func TestProxyStatusRetriesAreBounded(t *testing.T) {
	s, p := proxied(t)
	p.Set(Fault{Kind: Status, Status: 500, Match: isPut})
	_, err := put(t, retrying(t, s, p.URL(), 3), "bkt", "k", "v", minio.PutObjectOptions{})
	wantStatus(t, "put when every PUT is answered 500", err, 500, "InternalError")
	if got := records(p, "PUT"); !slices.Equal(got, []string{"status*", "status*", "status*"}) {
		t.Fatalf("PUTs %q, want three faults", got)
	}
	p.Set() // no faults
	if _, err := put(t, retrying(t, s, p.URL(), 1), "bkt", "k", "v", minio.PutObjectOptions{}); err != nil {
		t.Fatalf("put with the faults off: %v", err)
	}
}

func TestProxyResetRequest(t *testing.T) {
	s, p := proxied(t)
	p.Set(Fault{Kind: ResetRequest, Limit: 1, Match: isPut})
	if _, err := put(t, s.ClientVia(t, p.URL()), "bkt", "k", strings.Repeat("x", 1<<20), minio.PutObjectOptions{}); err != nil {
		t.Fatalf("put after a reset: %v", err)
	}
	if got := records(p, "PUT"); !slices.Equal(got, []string{"reset-request*", "pass"}) {
		t.Fatalf("PUTs %q, want a reset, then a forwarded one", got)
	}

	p.Set(Fault{Kind: ResetRequest, Match: isPut})
	_, err := put(t, retrying(t, s, p.URL(), 1), "bkt", "k2", "v", minio.PutObjectOptions{})
	t.Logf("put whose connection is reset: %v (ToErrorResponse %+v)", err, minio.ToErrorResponse(err))
	if err == nil {
		t.Fatal("put whose connection is reset: no error")
	}
	if _, err := s.Client(t).StatObject(testContext(t), "bkt", "k2", minio.StatObjectOptions{}); minio.ToErrorResponse(err).Code != "NoSuchKey" {
		t.Fatalf("the server stored a request reset before it was forwarded: stat %v", err)
	}
}

// TestProxyLoseResponse shows why a remote's writes must be idempotent:
// the server stored the object, the client saw its connection reset and
// tried again, and its If-None-Match retry fails against its own write.
func TestProxyLoseResponse(t *testing.T) {
	s, p := proxied(t)
	p.Set(Fault{Kind: LoseResponse, Limit: 1, Match: isPut})
	var ifNoneMatch minio.PutObjectOptions
	ifNoneMatch.SetMatchETagExcept("*")
	_, err := put(t, s.ClientVia(t, p.URL()), "bkt", "ref", "v1", ifNoneMatch)
	wantStatus(t, "put with If-None-Match * whose first response was lost", err, http.StatusPreconditionFailed, "PreconditionFailed")
	if got := records(p, "PUT"); !slices.Equal(got, []string{"lose-response*", "pass"}) {
		t.Fatalf("PUTs %q, want a lost response, then a forwarded retry", got)
	}
	if got := mustGet(t, s.Client(t), "bkt", "ref"); got != "v1" {
		t.Fatalf("the server has %q, want v1 from the request whose response was lost", got)
	}
}

func TestProxyCutResponses(t *testing.T) {
	for _, kind := range []Kind{ResetResponse, Truncate} {
		t.Run(kind.String(), func(t *testing.T) {
			s, p := proxied(t)
			data := strings.Repeat("y", 100000)
			mustPut(t, s.Client(t), "bkt", "k", data)
			p.Set(Fault{Kind: kind, Limit: 1, Match: isGet})
			got, err := get(t, retrying(t, s, p.URL(), 1), "bkt", "k")
			t.Logf("get with a %s response: %d bytes, %v", kind, len(got), err)
			if err == nil {
				t.Fatalf("get with a %s response: no error, %d bytes", kind, len(got))
			}
			// The fault is spent: the next GET is whole.
			if got := mustGet(t, retrying(t, s, p.URL(), 1), "bkt", "k"); got != data {
				t.Fatalf("get after the fault: %d bytes, want %d", len(got), len(data))
			}
			if p.Injected() != 1 {
				t.Fatalf("Injected %d, want 1", p.Injected())
			}
		})
	}
}

func TestProxyDelay(t *testing.T) {
	s, p := proxied(t)
	mustPut(t, s.Client(t), "bkt", "k", "v")
	p.Set(Fault{Kind: Pass, Delay: 300 * time.Millisecond, Match: isGet})
	start := time.Now()
	if got := mustGet(t, s.ClientVia(t, p.URL()), "bkt", "k"); got != "v" {
		t.Fatalf("slow get: got %q", got)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Fatalf("slow get took %s, want at least 300ms", d)
	}
	p.Set(Fault{Kind: Pass, Delay: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := retrying(t, s, p.URL(), 1).StatObject(ctx, "bkt", "k", minio.StatObjectOptions{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("stat with a 50ms deadline through a 300ms delay: got %v, want the deadline", err)
	}
	if got := records(p, "HEAD"); !slices.Equal(got, []string{"pass*"}) {
		t.Fatalf("HEADs %q, want one delayed", got)
	}
}

func TestProxySchedules(t *testing.T) {
	_, p := proxied(t)
	hit := func(n int) string {
		var b strings.Builder
		for range n {
			resp, err := http.Get(p.URL() + "/bkt/nothing")
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 500 {
				b.WriteByte('x')
			} else {
				b.WriteByte('.')
			}
		}
		return b.String()
	}
	p.Set(Fault{Kind: Status, Every: 3})
	if got := hit(9); got != "..x..x..x" {
		t.Fatalf("Every 3: got %s", got)
	}
	p.Set(Fault{Kind: Status, Every: 2, Limit: 2})
	if got := hit(8); got != ".x.x...." {
		t.Fatalf("Every 2, Limit 2: got %s", got)
	}
	p.Set(Fault{Kind: Status, Probability: 0.5, Seed: 7})
	first := hit(40)
	p.Set(Fault{Kind: Status, Probability: 0.5, Seed: 7})
	if again := hit(40); again != first {
		t.Fatalf("Probability 0.5, Seed 7 twice: %s, then %s", first, again)
	}
	if n := strings.Count(first, "x"); n < 8 || n > 32 {
		t.Fatalf("Probability 0.5 over 40 requests: %d faults (%s)", n, first)
	}
	// The first fault that picks a request wins.
	p.Set(Fault{Kind: Status, Status: 503, Match: isPut}, Fault{Kind: Status, Every: 2})
	if got := hit(4); got != ".x.x" {
		t.Fatalf("two faults: got %s", got)
	}
	if got, want := p.Requests(), 9+8+40+40+4; got != want {
		t.Fatalf("Requests: got %d, want %d", got, want)
	}
	if got, want := p.Injected(), 3+2+2*strings.Count(first, "x")+2; got != want {
		t.Fatalf("Injected: got %d, want %d", got, want)
	}
}

func TestProxyWithTheServerDown(t *testing.T) {
	s, p := proxied(t)
	s.Stop()
	resp, err := http.Get(p.URL() + "/bkt/k")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("with the server stopped: got %s, want 502", resp.Status)
	}
	s.Restart(t)
	mustPut(t, s.ClientVia(t, p.URL()), "bkt", "k", "back")
}
