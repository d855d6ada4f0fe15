package ckpt

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// ReplicateOptions configure [Repo.Replicate].
type ReplicateOptions struct {
	// Interval between looks at the store (0: 1s).
	Interval time.Duration
	// Log receives what replication does and what goes wrong.
	Log func(string)
	// Pushed, if set, is called after each push with its result.
	Pushed func(*PushResult, error)
}

// replica is what Replicate knows of one remote.
type replica struct {
	pushed  string // the store state last pushed (or refused)
	backoff time.Duration
	next    time.Time
}

// Replicate pushes the store to every remote set up with Continuous, within
// about Interval of each change (a new checkpoint, a moved ref), until ctx
// is done. It runs beside the watcher, in its process: a push takes no lock
// of the store, so saves never wait for it. A failed push is tried again
// with a growing delay (at most a minute); a refused ref is said once and
// not tried again until the store changes.
func (r *Repo) Replicate(ctx context.Context, opts ReplicateOptions) error {
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	logf := func(format string, a ...any) {
		if opts.Log != nil {
			opts.Log(fmt.Sprintf(format, a...))
		}
	}
	states := map[string]*replica{}
	tick := time.NewTicker(opts.Interval)
	defer tick.Stop()
	for {
		r.replicateOnce(ctx, states, opts, logf)
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

func (r *Repo) replicateOnce(ctx context.Context, states map[string]*replica, opts ReplicateOptions, logf func(string, ...any)) {
	all, err := r.Remotes(ctx)
	if err != nil {
		logf("replicate: %v", err)
		return
	}
	var cur string
	for _, rc := range all {
		if !rc.Continuous {
			continue
		}
		st := states[rc.Name]
		if st == nil {
			st = &replica{}
			states[rc.Name] = st
		}
		if cur == "" {
			if cur, err = r.storeState(ctx); err != nil {
				logf("replicate: %v", err)
				return
			}
		}
		now := time.Now()
		if cur == st.pushed || now.Before(st.next) {
			continue
		}
		res, err := r.Push(ctx, rc.Name, PushOptions{})
		if opts.Pushed != nil {
			opts.Pushed(res, err)
		}
		var rej *PushRejectedError
		switch {
		case err == nil:
			st.pushed, st.backoff, st.next = cur, 0, time.Time{}
			if res.Objects > 0 {
				logf("pushed %d checkpoint(s), %d object(s), %s to %s", res.Checkpoints, res.Objects, HumanSize(res.Bytes), rc.Name)
			}
		case errors.As(err, &rej):
			st.pushed, st.backoff, st.next = cur, 0, time.Time{}
			logf("push to %s: %v (%s)", rc.Name, err, rej.Hint())
		case ctx.Err() != nil:
			return
		default:
			st.backoff = min(max(2*st.backoff, 2*time.Second), time.Minute)
			st.next = now.Add(st.backoff)
			msg := err.Error()
			if h := Hint(err); h != "" {
				msg += " (" + h + ")"
			}
			logf("push to %s failed, trying again in %s: %s", rc.Name, st.backoff, msg)
		}
	}
}

// storeState is a token that changes whenever a push could send something
// new: a ref moved, or a new checkpoint.
func (r *Repo) storeState(ctx context.Context) (string, error) {
	refs, err := r.st.Refs(ctx, "")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, ref := range refs {
		if !strings.HasPrefix(ref.Name, remoteRefPrefix) {
			fmt.Fprintf(&b, "%s=%s>%s;", ref.Name, ref.ID, ref.Symbolic)
		}
	}
	recs, err := r.st.Checkpoints(ctx, store.ListFilter{Limit: 1})
	if err != nil {
		return "", err
	}
	if len(recs) > 0 {
		b.WriteString(recs[0].ID.String())
	}
	if rows, err := r.sessions().SessionList(ctx); err == nil && len(rows) > 0 {
		fmt.Fprintf(&b, ";session %s %d", rows[0].ID, rows[0].Updated.UnixNano())
	}
	return b.String(), nil
}
