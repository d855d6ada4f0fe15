package store

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
)

// A watcher polling DataVersion while the store is closed (a server whose
// watcher is still running when its repository is closed) must not leave
// a connection open: once Close has returned the store answers with an
// error, and no SQLite connection of it is left. Close releases verMu
// before it closes the pool, so a poll in between pins a new connection
// that nothing ever closes.
func TestAttackDataVersionRacingCloseLeavesNoConnection(t *testing.T) {
	ctx := context.Background()
	dir := openTest(t).Dir()
	for i := 0; i < 2000; i++ {
		s, err := OpenSQLite(ctx, dir, "/ws")
		if err != nil {
			t.Fatal(err)
		}
		var closed atomic.Bool
		var stale atomic.Int64
		var wg sync.WaitGroup
		start := make(chan struct{})
		for g := 0; g < 32; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for n := 0; n < 2000; n++ {
					was := closed.Load()
					_, err := s.DataVersion(ctx)
					if was && err == nil {
						stale.Add(1)
					}
					if was && n > 20 {
						return
					}
				}
			}()
		}
		close(start)
		s.Close()
		closed.Store(true)
		wg.Wait()
		_, err = s.DataVersion(ctx)
		s.verMu.Lock()
		leaked := s.ver != nil
		s.verMu.Unlock()
		if leaked || err == nil || stale.Load() > 0 {
			t.Fatalf("round %d: after Close the store still holds its data version connection (%v), "+
				"DataVersion after Close: err %v, %d answers after Close without an error", i, leaked, err, stale.Load())
		}
	}
}
