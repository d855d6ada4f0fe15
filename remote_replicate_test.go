package ckpt

import (
	"context"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// TestReplicateContinuous: with a continuous remote, every new checkpoint
// reaches the remote without a push command; a remote without the switch
// gets nothing.
func TestReplicateContinuous(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ws := t.TempDir()
	testutil.WriteFiles(t, ws, map[string]string{"a.txt": "1\n"})
	r := openTestRepo(t, ws)
	cont, manual := fileRemote(t), fileRemote(t)
	if _, err := r.AddRemote(ctx, RemoteConfig{Name: "cont", URL: cont, Continuous: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.AddRemote(ctx, RemoteConfig{Name: "manual", URL: manual}); err != nil {
		t.Fatal(err)
	}
	pushed := make(chan *PushResult, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Replicate(ctx, ReplicateOptions{Interval: 20 * time.Millisecond, Log: func(s string) { t.Log(s) },
			Pushed: func(res *PushResult, err error) {
				if err != nil {
					t.Errorf("replicated push: %v", err)
					return
				}
				pushed <- res
			}})
	}()
	other := openTestRepo(t, t.TempDir())
	if _, err := other.AddRemote(ctx, RemoteConfig{Name: "cont", URL: cont}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		testutil.WriteFiles(t, ws, map[string]string{"a.txt": string(rune('a'+i)) + "\n"})
		sr, err := r.Save(ctx, SaveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for {
			var res *PushResult
			select {
			case res = <-pushed:
			case <-time.After(time.Minute):
				t.Fatalf("save %d: no push within a minute", i)
			}
			if res.Checkpoints > 0 {
				break
			}
		}
		t.Logf("save %d reached the remote after %v", i, time.Since(start))
		if _, err := other.Pull(ctx, "cont"); err != nil {
			t.Fatal(err)
		}
		got, err := other.Resolve(ctx, "cont/main")
		if err != nil || got != sr.Checkpoint.ID {
			t.Fatalf("save %d: the remote's main is %s (%v), want %s", i, got.Short(), err, sr.Checkpoint.ID.Short())
		}
	}
	cancel()
	<-done
	other2 := openTestRepo(t, t.TempDir())
	if _, err := other2.AddRemote(context.Background(), RemoteConfig{Name: "manual", URL: manual}); err != nil {
		t.Fatal(err)
	}
	if _, err := other2.Pull(context.Background(), "manual"); err == nil {
		t.Error("the remote without --continuous was pushed to")
	}
}
