package session

import (
	"testing"
	"time"
)

// TestUndoneTurns: a code rewind to turn n undoes turn n and later ones,
// and the turns conversation rewinds removed that began at or after turn
// n and had ended, oldest first; earlier ones, and one removed while in
// progress, stay.
func TestUndoneTurns(t *testing.T) {
	at := func(min int) time.Time { return time.Date(2026, 1, 1, 0, min, 0, 0, time.UTC) }
	end := ID{1}
	turn := func(n, min int, ended bool) *Turn {
		tr := &Turn{N: n, Started: at(min)}
		if ended {
			tr.End = &end
		}
		return tr
	}
	t1, t2, t3 := turn(1, 0, true), turn(2, 10, true), turn(3, 30, false)
	old, removed, open := turn(2, 5, true), turn(2, 20, true), turn(3, 25, false)
	s := &Session{Turns: []*Turn{t1, t2, t3}, Rewound: []*Turn{old, removed, open}}
	got := undoneTurns(s, 2)
	want := []*Turn{t2, removed, t3}
	if len(got) != len(want) {
		t.Fatalf("got %d turns, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("turn %d: got the one started %v, want %v", i, got[i].Started, want[i].Started)
		}
	}
	if got := undoneTurns(s, 1); len(got) != 5 {
		t.Errorf("rewind to turn 1 undoes %d turns, want 5 (three, and two removed ones that ended)", len(got))
	}
}
