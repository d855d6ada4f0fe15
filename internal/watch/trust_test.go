//go:build linux

package watch

import (
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
