package httpserver

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/seed1cedbf7c/ckpt"
)

// The store keeps no history of its size and no record of its gc runs,
// and the server adds no persistent state for them: it samples the
// store's size (Repo.Usage: the bytes holding data, which gc frees at
// once) whenever its files change, from its start, and notes
// the gc runs it sees — its own (the engine's events) and other
// processes' (checkpoints gone, found by the watcher). GET
// /api/stats/history serves them with the growth the checkpoints still
// kept account for (Repo.Growth), which covers the whole history.

// maxSamples bounds the size samples a server keeps (the oldest go).
const maxSamples = 2048

// maxGCRuns bounds the gc runs a server keeps (the oldest go).
const maxGCRuns = 256

// SizeSample is the store's size at a time: the bytes holding data.
type SizeSample struct {
	Time  time.Time `json:"time"`
	Bytes int64     `json:"bytes"`
}

// GCRun is a gc this server saw: when, who ran it (server: through this
// server, or automatically after one of its saves; other: another
// process), and the store's size (bytes holding data) before and after.
type GCRun struct {
	Time    time.Time `json:"time"`
	Source  string    `json:"source"`
	Message string    `json:"message"`
	Before  int64     `json:"size_before"`
	After   int64     `json:"size_after"`
}

// StoreHistory is GET /api/stats/history's answer.
type StoreHistory struct {
	// Growth is derived from the checkpoints kept, oldest first.
	Growth []ckpt.GrowthPoint `json:"growth"`
	// Since is when this server began sampling; Sizes and GC cover the
	// time since.
	Since time.Time    `json:"since"`
	Sizes []SizeSample `json:"sizes"`
	GC    []GCRun      `json:"gc"`
}

// sizeLog holds the samples and gc runs.
type sizeLog struct {
	repo  *ckpt.Repo
	mu    sync.Mutex
	since time.Time
	sizes []SizeSample
	gc    []GCRun
}

func newSizeLog(repo *ckpt.Repo) *sizeLog {
	l := &sizeLog{repo: repo, since: time.Now()}
	l.sample()
	return l
}

// sample records the store's size now, unless it is the last one's (or
// the store cannot tell); it returns the size before.
func (l *sizeLog) sample() (before, now int64) {
	u, err := l.repo.Usage(context.Background())
	n := u.Used
	l.mu.Lock()
	defer l.mu.Unlock()
	if k := len(l.sizes); k > 0 {
		before = l.sizes[k-1].Bytes
		if before == n || err != nil {
			return before, before
		}
	} else {
		before = n
	}
	l.sizes = append(l.sizes, SizeSample{Time: time.Now(), Bytes: n})
	if len(l.sizes) > maxSamples {
		l.sizes = append(l.sizes[:0:0], l.sizes[len(l.sizes)-maxSamples:]...)
	}
	return before, n
}

// used returns the store's size now (-1 if the store cannot tell).
func (l *sizeLog) used() int64 {
	u, err := l.repo.Usage(context.Background())
	if err != nil {
		return -1
	}
	return u.Used
}

// gcRan records a gc: the size now against before, or against the last
// sample if before is negative.
func (l *sizeLog) gcRan(e ckpt.Event, source string, before int64) {
	last, after := l.sample()
	if before < 0 {
		before = last
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gc = append(l.gc, GCRun{Time: time.Now(), Source: source, Message: e.Message, Before: before, After: after})
	if len(l.gc) > maxGCRuns {
		l.gc = append(l.gc[:0:0], l.gc[len(l.gc)-maxGCRuns:]...)
	}
}

func (s *Server) storeHistory(r *http.Request) (any, error) {
	g, err := s.growthRun.do(r.Context())
	if err != nil {
		return nil, err
	}
	s.sizes.sample()
	s.sizes.mu.Lock()
	defer s.sizes.mu.Unlock()
	return &StoreHistory{Growth: g, Since: s.sizes.since,
		Sizes: append([]SizeSample{}, s.sizes.sizes...), GC: append([]GCRun{}, s.sizes.gc...)}, nil
}
