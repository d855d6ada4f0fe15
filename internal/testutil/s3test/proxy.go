package s3test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Kind is what a FaultProxy does with a request a Fault picks.
type Kind int

const (
	// Pass forwards the request and its response unchanged; with a
	// Fault's Delay it is a slow response.
	Pass Kind = iota
	// Status answers the Fault's Status (500 when zero) with an S3 error
	// body, without forwarding: the server never sees the request.
	Status
	// ResetRequest reads half the request body, then resets the
	// connection (TCP RST): the server never sees the request.
	ResetRequest
	// LoseResponse forwards the request, so the server carries it out,
	// then resets the connection before sending any of the response: the
	// client cannot tell whether its write happened.
	LoseResponse
	// ResetResponse forwards the request, then sends the first half of
	// the response's bytes (status line, headers and body as sent on the
	// wire) and resets the connection.
	ResetResponse
	// Truncate forwards the request, then sends the response's status
	// and headers, with the whole body's Content-Length, and half the
	// body, and closes the connection cleanly. A response without a body
	// arrives whole; pick GETs with Fault.Match.
	Truncate
)

var kindNames = [...]string{"pass", "status", "reset-request", "lose-response", "reset-response", "truncate"}

func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Fault is one misbehaviour of a FaultProxy and the requests it applies
// to. Of the requests Match accepts (all when nil) it picks every Every-th
// one (the Every-th, 2·Every-th, …) when Every is set, each one with
// Probability otherwise, and every one when neither is set; it stops
// after Limit picks when Limit is set.
//
// "The first two PUTs fail with 503, then the server answers":
//
//	Fault{Kind: Status, Status: 503, Limit: 2, Match: func(r *http.Request) bool { return r.Method == "PUT" }}
type Fault struct {
	Kind       Kind
	Status     int           // for Status: the HTTP status, 500 when zero
	RetryAfter string        // for Status: the Retry-After header, when set
	Delay      time.Duration // waits this long before doing Kind

	Every       int     // picks the Every-th, 2·Every-th, … request
	Probability float64 // when Every is zero: picks each request with this probability
	Seed        uint64  // seeds the random picks: the same seed, the same picks
	Limit       int     // picks at most this many requests; no limit when zero

	Match func(r *http.Request) bool // the requests the fault applies to; all when nil
}

// Record is one request a FaultProxy received and what it did with it.
type Record struct {
	Method string
	Path   string // the request's path and query, as sent
	Kind   Kind   // what the proxy did
	Fault  bool   // whether a Fault picked the request (Kind Pass with a Delay is a fault)
}

// FaultProxy is an HTTP proxy on loopback in front of an S3 server. A
// client sends its requests to URL, signing them for the proxy's host; the
// proxy forwards them to the server with the Host header the client
// signed, so the server verifies the signature as if the client talked to
// it directly. Set programs the faults it injects; Requests, Injected and
// Log report what it saw and did.
type FaultProxy struct {
	target    *url.URL
	url       string
	transport *http.Transport
	ctx       context.Context // cancelled when the test ends: ends Delays

	mu     sync.Mutex
	faults []*faultState
	log    []Record
}

type faultState struct {
	Fault
	seen, picked int
	rnd          *rand.Rand
}

// NewFaultProxy starts a proxy to target (http://host:port) on a loopback
// port, with no faults; it is closed when the test ends.
func NewFaultProxy(t testing.TB, target string) *FaultProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		t.Fatalf("s3test: proxy target %q: want http://host:port", target)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("s3test: proxy: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &FaultProxy{
		target: u,
		url:    "http://" + l.Addr().String(),
		ctx:    ctx,
		transport: &http.Transport{
			Proxy:               nil, // straight to the target, whatever HTTP_PROXY says
			DisableCompression:  true,
			MaxIdleConnsPerHost: 32,
		},
	}
	srv := &http.Server{Handler: p}
	go srv.Serve(l) // ends with ErrServerClosed at cleanup
	t.Cleanup(func() {
		cancel()
		srv.Close()
		p.transport.CloseIdleConnections()
	})
	return p
}

// URL is the proxy's address, http://127.0.0.1:PORT: the endpoint to give
// a client.
func (p *FaultProxy) URL() string { return p.url }

// Set replaces the proxy's faults. A request goes to the first fault that
// picks it, and is forwarded unchanged when none does. Set with no faults
// turns them off. The counts Every, Probability and Limit refer to start
// again; Requests, Injected and Log go on.
func (p *FaultProxy) Set(faults ...Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = nil
	for _, f := range faults {
		p.faults = append(p.faults, &faultState{Fault: f, rnd: rand.New(rand.NewPCG(f.Seed, f.Seed^0x9e3779b97f4a7c15))})
	}
}

// Requests is how many requests the proxy has received.
func (p *FaultProxy) Requests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.log)
}

// Injected is how many requests a fault picked.
func (p *FaultProxy) Injected() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, r := range p.log {
		if r.Fault {
			n++
		}
	}
	return n
}

// Log is every request the proxy received, in order, and what it did.
func (p *FaultProxy) Log() []Record {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Record(nil), p.log...)
}

// pick decides what to do with r and records it.
func (p *FaultProxy) pick(r *http.Request) (Fault, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	rec := Record{Method: r.Method, Path: r.URL.RequestURI()}
	var picked *faultState
	for _, f := range p.faults {
		if f.fires(r) {
			picked = f
			break
		}
	}
	if picked == nil {
		p.log = append(p.log, rec)
		return Fault{}, false
	}
	rec.Kind, rec.Fault = picked.Kind, true
	p.log = append(p.log, rec)
	return picked.Fault, true
}

func (f *faultState) fires(r *http.Request) bool {
	if f.Match != nil && !f.Match(r) {
		return false
	}
	if f.Limit > 0 && f.picked >= f.Limit {
		return false
	}
	f.seen++
	var yes bool
	switch {
	case f.Every > 0:
		yes = f.seen%f.Every == 0
	case f.Probability > 0:
		yes = f.rnd.Float64() < f.Probability
	default:
		yes = true
	}
	if yes {
		f.picked++
	}
	return yes
}

func (p *FaultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f, _ := p.pick(r)
	if f.Delay > 0 {
		select {
		case <-time.After(f.Delay):
		case <-r.Context().Done():
			return
		case <-p.ctx.Done():
			return
		}
	}
	switch f.Kind {
	case Status:
		// The whole request is read first, as a server does that checks
		// the body's signature: answering early leaves the client's
		// transport writing the body while minio-go seeks it to retry,
		// a data race in minio-go (golang/go#51907) that -race reports.
		io.Copy(io.Discard, r.Body) // an error is the client's to see
		status := f.Status
		if status == 0 {
			status = http.StatusInternalServerError
		}
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		writeS3Error(w, r, status)
	case ResetRequest:
		if r.ContentLength > 0 {
			io.CopyN(io.Discard, r.Body, r.ContentLength/2) // only to be mid-request
		}
		reset(w)
	case LoseResponse:
		resp, err := p.forward(r)
		if err != nil {
			writeBadGateway(w, err)
			return
		}
		io.Copy(io.Discard, resp.Body) // the client gets nothing anyway
		resp.Body.Close()
		reset(w)
	case ResetResponse, Truncate:
		p.cut(w, r, f.Kind)
	default:
		p.pass(w, r)
	}
}

// forward sends r to the target as the client sent it: method, path and
// query, headers (less hop-by-hop ones), Host and body.
func (p *FaultProxy) forward(r *http.Request) (*http.Response, error) {
	out, err := http.NewRequestWithContext(r.Context(), r.Method, p.target.String(), nil)
	if err != nil {
		return nil, err
	}
	out.URL.Path, out.URL.RawPath, out.URL.RawQuery = r.URL.Path, r.URL.RawPath, r.URL.RawQuery
	out.Host = r.Host
	out.Header = r.Header.Clone()
	removeHopByHop(out.Header)
	out.ContentLength = r.ContentLength
	out.TransferEncoding = r.TransferEncoding
	if r.ContentLength != 0 {
		out.Body = r.Body
	}
	return p.transport.RoundTrip(out)
}

func (p *FaultProxy) pass(w http.ResponseWriter, r *http.Request) {
	resp, err := p.forward(r)
	if err != nil {
		writeBadGateway(w, err)
		return
	}
	defer resp.Body.Close()
	h := w.Header()
	for k, v := range resp.Header {
		h[k] = v
	}
	removeHopByHop(h)
	if resp.ContentLength >= 0 && r.Method != http.MethodHead {
		h.Set("Content-Length", strconv.FormatInt(resp.ContentLength, 10))
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body) // a client that went away gets a cut response
}

// cut forwards r and sends the client part of the response (see
// ResetResponse and Truncate).
func (p *FaultProxy) cut(w http.ResponseWriter, r *http.Request, kind Kind) {
	resp, err := p.forward(r)
	if err != nil {
		writeBadGateway(w, err)
		return
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		writeBadGateway(w, err)
		return
	}
	removeHopByHop(resp.Header)
	if r.Method != http.MethodHead {
		resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	}
	resp.Header.Set("Connection", "close")
	var wire bytes.Buffer
	fmt.Fprintf(&wire, "HTTP/1.1 %03d %s\r\n", resp.StatusCode, http.StatusText(resp.StatusCode))
	resp.Header.Write(&wire) // a bytes.Buffer does not fail
	wire.WriteString("\r\n")
	head := wire.Len()
	wire.Write(body)
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	if kind == Truncate {
		conn.Write(wire.Bytes()[:head+len(body)/2]) // the client sees what it sees
		conn.Close()
		return
	}
	conn.Write(wire.Bytes()[:wire.Len()/2]) // the client sees what it sees
	resetConn(conn)
}

// reset resets the client's connection (TCP RST, not a clean close).
func reset(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	resetConn(conn)
}

func resetConn(conn net.Conn) {
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0) // then it is a plain close
	}
	conn.Close()
}

// writeS3Error answers status with an S3 error document, as S3 does.
func writeS3Error(w http.ResponseWriter, r *http.Request, status int) {
	code := "InternalError"
	if status == http.StatusServiceUnavailable {
		code = "SlowDown"
	}
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<Error><Code>%s</Code><Message>injected by s3test.FaultProxy</Message><Resource>%s</Resource><RequestId>s3test</RequestId></Error>`,
		code, r.URL.Path)
}

func writeBadGateway(w http.ResponseWriter, err error) {
	if errors.Is(err, context.Canceled) {
		return // the client went away
	}
	http.Error(w, "s3test.FaultProxy: "+err.Error(), http.StatusBadGateway)
}

// hopByHop are the headers that belong to one connection, not to the
// request or response (RFC 9110, section 7.6.1).
var hopByHop = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func removeHopByHop(h http.Header) {
	for _, v := range h.Values("Connection") {
		for _, name := range bytes.Split([]byte(v), []byte(",")) {
			h.Del(string(bytes.TrimSpace(name)))
		}
	}
	for _, name := range hopByHop {
		h.Del(name)
	}
}
