package httpserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/seed1cedbf7c/ckpt"
)

// StreamEvent is one event of GET /api/events: the engine's [ckpt.Event]
// with the stream's id and where it came from.
type StreamEvent struct {
	// ID numbers the stream's events in order, one apart (the SSE id,
	// for Last-Event-ID). The first is the server's start time in
	// microseconds, plus one: an id an earlier server gave is older than
	// any this one gives, and resumes with a resync.
	ID uint64 `json:"id"`
	ckpt.Event
	// Source is "server" for what this server did, "other" for a change
	// another process made (the CLI, an agent's hooks), seen in the store.
	Source string `json:"source"`
}

// EventResync is the kind of the event sent when a client resumes from
// an id the server no longer holds (or never gave): it may have missed
// events, so it should read the state again.
const EventResync ckpt.EventKind = "resync"

// broker keeps the recent events in a ring and wakes the streams.
type broker struct {
	mu   sync.Mutex
	ring []StreamEvent // the last len(ring) events, oldest first, ids consecutive
	size int
	last uint64        // the last id given (at first the start time in µs)
	wake chan struct{} // closed and replaced at every publish
}

func newBroker(size int) *broker {
	// Ids start at the start time, not at 1: a client that resumes with
	// an earlier server's id would otherwise get this server's events
	// after the same number and never learn what it missed.
	return &broker{size: size, last: uint64(time.Now().UnixMicro()), wake: make(chan struct{})}
}

func (b *broker) publish(e ckpt.Event, source string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.last++
	b.ring = append(b.ring, StreamEvent{ID: b.last, Event: e, Source: source})
	if len(b.ring) > b.size {
		b.ring = append(b.ring[:0:0], b.ring[len(b.ring)-b.size:]...)
	}
	close(b.wake)
	b.wake = make(chan struct{})
}

// since returns the events after id, a channel closed at the next
// publish, and whether events after id were lost (id older than the
// ring, or from the future: another server's).
func (b *broker) since(id uint64) ([]StreamEvent, <-chan struct{}, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if id > b.last {
		return nil, b.wake, true
	}
	if id == b.last {
		return nil, b.wake, false
	}
	first := b.last - uint64(len(b.ring)) + 1
	if id+1 < first {
		return append([]StreamEvent(nil), b.ring...), b.wake, true
	}
	return append([]StreamEvent(nil), b.ring[id+1-first:]...), b.wake, false
}

func (b *broker) lastID() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.last
}

// engineEvent receives this process's engine events (Repo.Subscribe).
func (s *Server) engineEvent(e ckpt.Event) {
	if s.tell != nil {
		s.tell(e)
	}
	if e.Kind == ckpt.EventGC {
		s.sizes.gcRan(e, "server", -1)
	}
	s.events.publish(e, "server")
}

// maxStreams bounds the event streams a server keeps open at once: each
// holds a goroutine and a connection (a variable for the tests).
var maxStreams int64 = 256

// serveEvents is GET /api/events: a server-sent event stream. Each event
// is "id: N", "event: KIND" and "data: JSON" (a [StreamEvent]); a
// comment line every Heartbeat keeps proxies and clients from timing
// out. Last-Event-ID (the header, or ?last_event_id) resumes after that
// event; when the events after it are no longer held, a resync event
// comes first.
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	if n := s.streams.Add(1); n > maxStreams {
		s.streams.Add(-1)
		w.Header().Set("Retry-After", "5")
		writeError(w, &apiError{status: http.StatusServiceUnavailable, code: "too_many_streams",
			msg:  fmt.Sprintf("%d event streams are open already (at most %d)", n-1, maxStreams),
			hint: "close another tab or client of this server, then reconnect"})
		return
	}
	defer s.streams.Add(-1)
	rc := http.NewResponseController(w)
	last := s.events.lastID()
	resume := r.Header.Get("Last-Event-ID")
	if resume == "" {
		resume = r.URL.Query().Get("last_event_id")
	}
	if resume != "" {
		n, err := strconv.ParseUint(resume, 10, 64)
		if err != nil {
			writeError(w, badRequest(fmt.Sprintf("Last-Event-ID %q: want an event id", resume)))
			return
		}
		last = n
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "retry: 1000\n: ckpt events, last id %d\n\n", s.events.lastID())
	if rc.Flush() != nil {
		return
	}
	tick := time.NewTicker(s.opts.Heartbeat)
	defer tick.Stop()
	for {
		evs, wake, lost := s.events.since(last)
		if lost {
			top := s.events.lastID()
			if len(evs) > 0 {
				top = evs[0].ID - 1
			}
			writeEvent(w, StreamEvent{ID: top, Event: ckpt.Event{Kind: EventResync, Message: "events were missed: read the state again"}, Source: "server"})
			last = top
		}
		for _, e := range evs {
			writeEvent(w, e)
			last = e.ID
		}
		if (lost || len(evs) > 0) && rc.Flush() != nil {
			return
		}
		select {
		case <-wake:
		case <-tick.C:
			fmt.Fprint(w, ": heartbeat\n\n")
			if rc.Flush() != nil {
				return
			}
		case <-r.Context().Done():
			return
		case <-s.closing:
			return
		}
	}
}

func writeEvent(w http.ResponseWriter, e StreamEvent) {
	data, _ := json.Marshal(e)
	fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.ID, e.Kind, data)
}
