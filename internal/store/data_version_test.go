package store

import (
	"context"
	"testing"
)

// DataVersion changes with every commit, made through this store or
// another handle of the same database (another process is another
// connection alike), and stays while nothing is committed.
func TestDataVersionSeesEveryCommit(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	other := openAgain(t, s)
	version := func() int64 {
		t.Helper()
		v, err := s.DataVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	setMeta := func(s *SQLite, v string) {
		t.Helper()
		if err := s.Update(ctx, func(tx Tx) error { return tx.SetMeta("k", v) }); err != nil {
			t.Fatal(err)
		}
	}
	last := version()
	for i, step := range []struct {
		name    string
		do      func()
		changes bool
	}{
		{"nothing", func() {}, false},
		{"a read", func() { s.Meta(ctx, "k"); other.Meta(ctx, "k") }, false},
		{"a commit of another handle", func() { setMeta(other, "1") }, true},
		{"a commit of this store", func() { setMeta(s, "2") }, true},
		{"two commits of another handle", func() { setMeta(other, "3"); setMeta(other, "4") }, true},
		{"a rolled back update", func() {
			s.Update(ctx, func(tx Tx) error { tx.SetMeta("k", "5"); return context.Canceled })
		}, false},
	} {
		step.do()
		v := version()
		if (v != last) != step.changes {
			t.Errorf("step %d, %s: data version %d after %d", i, step.name, v, last)
		}
		last = v
	}
	// A closed store answers with an error, not a stale number.
	s.Close()
	if _, err := s.DataVersion(ctx); err == nil {
		t.Error("the data version of a closed store read without an error")
	}
}
