package httpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/httpserver"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// The load: event-stream clients, read requests a second, and how long.
const (
	loadStreams = 50
	loadReads   = 100
)

// loadDuration is 60 s, or CKPT_LOAD_SECONDS.
func loadDuration(t *testing.T) time.Duration {
	d := 60 * time.Second
	if v := os.Getenv("CKPT_LOAD_SECONDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("CKPT_LOAD_SECONDS=%q: want a whole number of seconds, 1 or more", v)
		}
		d = time.Duration(n) * time.Second
	}
	return d
}

// loadErrors collects what went wrong in the load's goroutines, keeping
// the first few of each kind.
type loadErrors struct {
	mu sync.Mutex
	n  map[string]int
	ex map[string][]string
}

func (e *loadErrors) add(kind, format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.n == nil {
		e.n, e.ex = map[string]int{}, map[string][]string{}
	}
	e.n[kind]++
	if len(e.ex[kind]) < 3 {
		e.ex[kind] = append(e.ex[kind], fmt.Sprintf(format, args...))
	}
}

// TestServeLoad: a `ckpt serve` process under 50 event-stream clients and
// 100 mixed read requests a second for 60 s (CKPT_LOAD_SECONDS), while
// another ckpt process saves a change every second. No request fails,
// and every client receives every event, in order, with consecutive ids
// and the saver's checkpoints all there. The read latencies and the
// server's resident memory are measured and logged, not asserted
// (docs/benchmarks.md has them).
func TestServeLoad(t *testing.T) {
	testutil.Long(t, "the 60-second load test of ckpt serve")
	duration := loadDuration(t)
	dir := testutil.TempDir(t)
	ws, store := filepath.Join(dir, "ws"), filepath.Join(dir, "store")
	files := map[string]string{}
	for i := range 200 {
		files[fmt.Sprintf("src/d%d/f%03d.go", i%10, i)] = strings.Repeat(fmt.Sprintf("line %d\n", i), 40)
	}
	testutil.WriteFiles(t, ws, files)
	bin := testutil.CkptBinary(t, filepath.Join(dir, "bin"))
	env := append(os.Environ(), "CKPT_NO_WATCH=1", "XDG_STATE_HOME="+dir, "CKPT_STORE="+store)
	ckptCmd := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, append([]string{"--workspace", ws}, args...)...)
		cmd.Env = env
		return cmd
	}
	if code, out, errs := testutil.Run(t, ckptCmd("save", "-m", "first")); code != 0 {
		t.Fatalf("ckpt save: %d %s%s", code, out, errs)
	}

	// The server, a process of its own, so its memory is its own.
	tokenFile := filepath.Join(dir, "token")
	serve := ckptCmd("serve", "--token-file", tokenFile)
	base, token := startServe(t, serve, tokenFile)
	newRequest := func(ctx context.Context, path string) *http.Request {
		req, _ := http.NewRequestWithContext(ctx, "GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		return req
	}
	var errs loadErrors

	// The streams, all open before anything is saved.
	streamCtx, stopStreams := context.WithCancel(context.Background())
	defer stopStreams()
	received := make([][]httpserver.StreamEvent, loadStreams)
	var recvMu sync.Mutex
	var streams sync.WaitGroup
	streamClient := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: loadStreams}}
	for i := range loadStreams {
		resp, err := streamClient.Do(newRequest(streamCtx, "/api/events"))
		if err != nil {
			t.Fatalf("event stream %d: %v", i, err)
		}
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("event stream %d: status %d: %s", i, resp.StatusCode, b)
		}
		streams.Add(1)
		go func() {
			defer streams.Done()
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(nil, 1<<20)
			var id string
			for sc.Scan() {
				l := sc.Text()
				switch {
				case strings.HasPrefix(l, "id: "):
					id = l[4:]
				case strings.HasPrefix(l, "data: "):
					var ev httpserver.StreamEvent
					if err := json.Unmarshal([]byte(l[6:]), &ev); err != nil || strconv.FormatUint(ev.ID, 10) != id {
						errs.add("stream", "stream %d: event %s (id %s): %v", i, l, id, err)
					}
					recvMu.Lock()
					received[i] = append(received[i], ev)
					recvMu.Unlock()
				}
			}
			if err := sc.Err(); err != nil && streamCtx.Err() == nil {
				errs.add("stream", "stream %d ended: %v", i, err)
			} else if streamCtx.Err() == nil {
				errs.add("stream", "stream %d ended early", i)
			}
		}()
	}

	// The server's resident memory, every half second.
	var rss []int64
	sample := func() {
		if kb := procStatus(serve.Process.Pid, "VmRSS"); kb > 0 {
			rss = append(rss, kb)
		}
	}
	sample()
	idle := rss

	ctx, stop := context.WithTimeout(context.Background(), duration)
	defer stop()
	var load sync.WaitGroup

	// The saver: a change and `ckpt save` in another process, every second.
	var saved []ckpt.ID // the saver's own until load.Wait
	var nSaved atomic.Int64
	load.Add(1)
	go func() {
		defer load.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for n := 1; ; n++ {
			p := filepath.Join(ws, fmt.Sprintf("src/d%d/f%03d.go", n%10, n%200))
			if err := os.WriteFile(p, fmt.Appendf(nil, "edited %d\n", n), 0o644); err != nil {
				errs.add("save", "%v", err)
			}
			out, err := ckptCmd("save", "--json", "-m", fmt.Sprintf("load %d", n)).Output()
			var res struct {
				Created    bool             `json:"created"`
				Checkpoint *ckpt.Checkpoint `json:"checkpoint"`
			}
			if err == nil {
				err = json.Unmarshal(out, &res)
			}
			if err != nil || !res.Created {
				errs.add("save", "save %d: %v %s", n, err, out)
			} else {
				saved = append(saved, res.Checkpoint.ID)
				nSaved.Add(1)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()

	// The reads: 100 a second, on a schedule that does not wait for
	// answers (a slow answer delays no other request), round-robin over
	// what the web UI reads.
	reads := []string{
		"/api/status?changes=false",
		"/api/checkpoints?limit=50",
		"/api/checkpoints/HEAD",
		"/api/checkpoints/HEAD/manifest",
		"/api/diff?from=HEAD~1&to=HEAD&format=unified",
		"/api/checkpoints?limit=20&before=HEAD~3",
		"/api/sessions",
		"/api/branches",
		"/api/snapshots",
		"/api/stats",
	}
	readClient := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}
	var latMu sync.Mutex
	latencies := map[string][]time.Duration{}
	load.Add(1)
	go func() {
		defer load.Done()
		tick := time.NewTicker(time.Second / loadReads)
		defer tick.Stop()
		memTick := time.NewTicker(500 * time.Millisecond)
		defer memTick.Stop()
		var inflight sync.WaitGroup
		defer inflight.Wait()
		for n := 0; ; n++ {
			select {
			case <-ctx.Done():
				return
			case <-memTick.C:
				sample()
				n--
				continue
			case <-tick.C:
			}
			path := reads[n%len(reads)]
			if strings.Contains(path, "HEAD~") && nSaved.Load() < 4 {
				path = reads[0] // no HEAD~3 yet
			}
			inflight.Add(1)
			go func() {
				defer inflight.Done()
				start := time.Now()
				resp, err := readClient.Do(newRequest(context.Background(), path))
				if err != nil {
					errs.add("read", "GET %s: %v", path, err)
					return
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				d := time.Since(start)
				if err != nil || resp.StatusCode != http.StatusOK {
					errs.add("read", "GET %s: %d %v %.200s", path, resp.StatusCode, err, body)
					return
				}
				key, _, _ := strings.Cut(path, "?")
				latMu.Lock()
				latencies[key] = append(latencies[key], d)
				latencies[""] = append(latencies[""], d)
				latMu.Unlock()
			}()
		}
	}()
	load.Wait()
	sample()

	// Every stream gets the last save within a few polls; then all end.
	deadline := time.Now().Add(5 * time.Second)
	for len(saved) > 0 && time.Now().Before(deadline) {
		recvMu.Lock()
		all := true
		for _, evs := range received {
			all = all && slices.ContainsFunc(evs, func(e httpserver.StreamEvent) bool {
				return e.Kind == ckpt.EventCheckpoint && e.Checkpoint == saved[len(saved)-1]
			})
		}
		recvMu.Unlock()
		if all {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	peakKB := procStatus(serve.Process.Pid, "VmHWM")
	stopStreams()
	streams.Wait()
	serve.Process.Signal(syscall.SIGINT)
	if err := serve.Wait(); err != nil {
		t.Errorf("ckpt serve after SIGINT: %v", err)
	}

	for kind, n := range errs.n {
		t.Errorf("%d %s error(s), such as:\n\t%s", n, kind, strings.Join(errs.ex[kind], "\n\t"))
	}
	if len(saved) < int(duration/time.Second)/2 {
		t.Errorf("%d saves in %v", len(saved), duration)
	}
	// Every client: ids one apart, no resync, the saver's checkpoints in
	// the order it made them, none missing.
	for i, evs := range received {
		var got []ckpt.ID
		for j, e := range evs {
			if j > 0 && e.ID != evs[j-1].ID+1 {
				t.Errorf("stream %d: event %d has id %d after %d", i, j, e.ID, evs[j-1].ID)
				break
			}
			if e.Kind == httpserver.EventResync {
				t.Errorf("stream %d: a resync at event %d", i, j)
			}
			if e.Kind == ckpt.EventCheckpoint && strings.HasPrefix(e.Message, "load ") {
				got = append(got, e.Checkpoint)
			}
		}
		if !slices.Equal(got, saved) {
			t.Errorf("stream %d: %d of the saver's %d checkpoints in order (%d events)", i, len(got), len(saved), len(evs))
		}
	}

	// The measurements.
	var lines []string
	keys := make([]string, 0, len(latencies))
	for k := range latencies {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		ds := latencies[k]
		slices.Sort(ds)
		name := k
		if name == "" {
			name = "all reads"
		}
		lines = append(lines, fmt.Sprintf("%-32s %6d  p50 %8v  p99 %8v  max %8v", name, len(ds),
			pct(ds, 50).Round(10*time.Microsecond), pct(ds, 99).Round(10*time.Microsecond), ds[len(ds)-1].Round(10*time.Microsecond)))
	}
	var events int
	for _, evs := range received {
		events += len(evs)
	}
	t.Logf("%v, %d streams, %d reads/s, %d saves; %d events delivered (%d per stream)\n%s\nserver RSS: %d MiB idle with the streams open, %d MiB median, %d MiB at the end, %d MiB peak (VmHWM)",
		duration, loadStreams, loadReads, len(saved), events, events/loadStreams, strings.Join(lines, "\n"),
		idle[0]>>10, median(rss)>>10, rss[len(rss)-1]>>10, peakKB>>10)
}

// procStatus reads a kB field of /proc/PID/status (0 if absent).
func procStatus(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// pct is the p-th percentile of sorted durations.
func pct(sorted []time.Duration, p int) time.Duration {
	return sorted[min(len(sorted)-1, len(sorted)*p/100)]
}

func median(xs []int64) int64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
