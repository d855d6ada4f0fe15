//go:build linux

package watch

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// Two copies of the stat cache are two lineages of tokens: the cache of
// saves the watcher serves, and one a client that saves itself keeps
// (CKPT_WATCH_SERVE=0, or a save the watcher refused). The backstop full
// read one of them gets, MaxTrust after the last, says nothing about the
// other: what inotify cannot see and the other's saves missed is still
// missing there, so its next answer must be "full" too.
func TestTrustPerLineage(t *testing.T) {
	m := MaxTrust
	t.Cleanup(func() { MaxTrust = m })
	MaxTrust = 500 * time.Millisecond
	_, sock := setup(t)
	a := query(t, sock, "")
	if !a.Full {
		t.Fatal("the first answer is not full")
	}
	x := query(t, sock, a.Token) // the client's lineage
	if x.Full {
		t.Fatalf("x: full (%s)", x.Reason)
	}
	time.Sleep(MaxTrust + 100*time.Millisecond)
	s := query(t, sock, a.Token) // the served lineage: the backstop
	if !s.Full {
		t.Fatal("the answer MaxTrust after the last full one is not full")
	}
	if x2 := query(t, sock, x.Token); !x2.Full {
		t.Fatal("the other lineage, last read in full more than MaxTrust ago, was answered incrementally")
	}
	if s2 := query(t, sock, s.Token); s2.Full {
		t.Fatalf("the lineage just read in full: full (%s)", s2.Reason)
	}
}

// An idle check vouches for the cache it checked (its token's lineage)
// only.
func TestCheckedVouchesForItsLineage(t *testing.T) {
	m := MaxTrust
	t.Cleanup(func() { MaxTrust = m })
	MaxTrust = 600 * time.Millisecond
	got := make(chan Server, 1)
	_, sock := setupWith(t, Options{Serve: func(ctx context.Context, s Server, c *Call) (json.RawMessage, error) {
		select {
		case got <- s:
		default:
		}
		return json.RawMessage(`{}`), nil
	}})
	if _, err := Serve(context.Background(), sock, json.RawMessage(`{}`), nil, nil); err != nil {
		t.Fatal(err)
	}
	srv := <-got
	a := query(t, sock, "")
	read := time.Now()
	x := query(t, sock, a.Token) // a client's own lineage
	s := query(t, sock, a.Token) // the served lineage
	if x.Full || s.Full {
		t.Fatal("full right after a full answer")
	}
	if srv.Trust(s.Token).Before(read.Add(-time.Second)) {
		t.Fatalf("trust of the served lineage %v, read in full at %v", srv.Trust(s.Token), read)
	}
	time.Sleep(MaxTrust / 2)
	checked := time.Now()
	srv.Checked(s.Token, checked, true)
	time.Sleep(time.Until(read.Add(MaxTrust + 100*time.Millisecond)))
	if time.Since(checked) >= MaxTrust {
		t.Fatalf("too slow to tell: %v since the check", time.Since(checked))
	}
	if s2 := query(t, sock, s.Token); s2.Full {
		t.Fatalf("the checked lineage: full (%s)", s2.Reason)
	}
	if x2 := query(t, sock, x.Token); !x2.Full {
		t.Fatal("the lineage the check did not read was answered incrementally")
	}
	// A check that found a difference vouches for nothing.
	y := query(t, sock, "")
	srv.Checked(y.Token, time.Now().Add(time.Hour), false)
	if tr := srv.Trust(y.Token); tr.After(time.Now()) {
		t.Fatalf("a check that found a difference moved the trust to %v", tr)
	}
}
