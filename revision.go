package ckpt

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// LastRevision names the newest checkpoint of any kind — the first row of
// `ckpt list`, a partial one included — whatever HEAD is: what CodeBuddy's
// rewindToLast and restoreLast restore. '@' cannot start a ref name.
const LastRevision = "@last"

// refNamespaces are searched, in order, for a bare name.

// Resolve returns the checkpoint a revision names: a full id or a unique
// prefix of at least 4 hex digits, HEAD, @last ([LastRevision]), a
// snapshot, tag or branch name
// (bare, or qualified as snapshots/NAME, tags/NAME, branches/NAME), each
// optionally followed by ~N (N parents back, first parent) or ^.
func (r *Repo) Resolve(ctx context.Context, rev string) (ID, error) {
	base, steps, err := splitAncestry(rev)
	if err != nil {
		return ID{}, err
	}
	id, err := r.resolveBase(ctx, rev, base)
	if err != nil {
		return ID{}, err
	}
	for i := 0; i < steps; i++ {
		rec, err := r.st.Checkpoint(ctx, id)
		if err != nil {
			return ID{}, err
		}
		if len(rec.Parents) == 0 {
			return ID{}, &RevisionError{Rev: rev, Reason: fmt.Sprintf("history has only %d checkpoint(s) before %s", i, base)}
		}
		id = rec.Parents[0]
	}
	return id, nil
}

func splitAncestry(rev string) (string, int, error) {
	if rev == "" {
		return "", 0, &RevisionError{Rev: rev, Reason: "empty revision"}
	}
	steps := 0
	for {
		if strings.HasSuffix(rev, "^") {
			rev = rev[:len(rev)-1]
			steps++
			continue
		}
		i := strings.LastIndexByte(rev, '~')
		if i < 0 {
			break
		}
		num := rev[i+1:]
		n := 1
		if num != "" {
			v, err := strconv.Atoi(num)
			if err != nil || v < 0 {
				break // not an ancestry suffix; treat as part of a name
			}
			n = v
		}
		steps += n
		rev = rev[:i]
	}
	if rev == "" {
		return "", 0, &RevisionError{Rev: rev, Reason: "empty revision"}
	}
	return rev, steps, nil
}

func (r *Repo) resolveBase(ctx context.Context, full, base string) (ID, error) {
	if base == "HEAD" || base == "@" {
		ref, err := r.st.Ref(ctx, headName)
		if errors.Is(err, store.ErrNotFound) {
			if recs, lerr := r.st.Checkpoints(ctx, store.ListFilter{Limit: 1}); lerr == nil && len(recs) > 0 {
				// Only partial checkpoints (an edit tool's `ckpt save
				// PATH`): they do not move HEAD, but they are there.
				return ID{}, withHint(&RevisionError{Rev: full, Reason: "no whole-workspace checkpoint yet (only partial ones, which do not move HEAD)"},
					"`ckpt restore "+LastRevision+"` restores the newest checkpoint of any kind; `ckpt list` shows them; `ckpt save` records the whole workspace")
			}
			return ID{}, withHint(&RevisionError{Rev: full, Reason: "no checkpoints yet"}, "run `ckpt save` to record the first checkpoint")
		}
		return ref.ID, err
	}
	if base == LastRevision {
		recs, err := r.st.Checkpoints(ctx, store.ListFilter{Limit: 1})
		if err != nil {
			return ID{}, err
		}
		if len(recs) == 0 {
			return ID{}, withHint(&RevisionError{Rev: full, Reason: "no checkpoints yet"}, "run `ckpt save` to record the first checkpoint")
		}
		return recs[0].ID, nil
	}
	for _, ns := range refNamespaces {
		if strings.HasPrefix(base, ns) {
			ref, err := r.st.Ref(ctx, base)
			if errors.Is(err, store.ErrNotFound) {
				return ID{}, &RevisionError{Rev: full, Reason: "no " + strings.TrimSuffix(ns, "s/") + " named " + strings.TrimPrefix(base, ns)}
			}
			return ref.ID, err
		}
	}
	if strings.HasPrefix(base, remoteRefPrefix) {
		ref, err := r.st.Ref(ctx, base)
		if errors.Is(err, store.ErrNotFound) {
			return ID{}, &RevisionError{Rev: full, Reason: "no remote-tracking ref named " + base}
		}
		return ref.ID, err
	}
	var found []store.Ref
	for _, ns := range refNamespaces {
		ref, err := r.st.Ref(ctx, ns+base)
		if err == nil {
			found = append(found, ref)
		} else if !errors.Is(err, store.ErrNotFound) {
			return ID{}, err
		}
	}
	if len(found) > 0 && isHex(base) && len(base) >= 4 {
		// A name that is also a checkpoint id prefix (a snapshot "cafe"):
		// which one is meant is not ours to guess.
		ids, err := r.st.FindCheckpoints(ctx, strings.ToLower(base), 5)
		if err != nil {
			return ID{}, err
		}
		for _, id := range ids {
			if id != found[0].ID || len(found) > 1 {
				names := []string{}
				for _, f := range found {
					names = append(names, f.Name)
				}
				for _, id := range ids {
					names = append(names, id.Short())
				}
				return ID{}, &RevisionError{Rev: full, Reason: "it names a ref and is the start of a checkpoint id", Candidates: names, Ambiguous: true}
			}
		}
	}
	if len(found) == 0 {
		// NAME/x: what remote NAME's x was at the last push or pull.
		if remote, rest, ok := strings.Cut(base, "/"); ok && rest != "" {
			for _, ns := range refNamespaces {
				ref, err := r.st.Ref(ctx, remoteRefPrefix+remote+"/"+ns+rest)
				if err == nil {
					found = append(found, ref)
				} else if !errors.Is(err, store.ErrNotFound) {
					return ID{}, err
				}
			}
		}
	}
	if len(found) == 1 {
		return found[0].ID, nil
	}
	if len(found) > 1 {
		same := true
		for _, f := range found[1:] {
			same = same && f.ID == found[0].ID
		}
		if same {
			return found[0].ID, nil
		}
		var names []string
		for _, f := range found {
			names = append(names, f.Name)
		}
		return ID{}, &RevisionError{Rev: full, Reason: "several refs have that name", Candidates: names, Ambiguous: true}
	}
	if isHex(base) && len(base) >= 4 {
		ids, err := r.st.FindCheckpoints(ctx, strings.ToLower(base), 5)
		if err != nil {
			return ID{}, err
		}
		switch len(ids) {
		case 1:
			return ids[0], nil
		case 0:
		default:
			var c []string
			for _, id := range ids {
				c = append(c, id.Short())
			}
			return ID{}, &RevisionError{Rev: full, Reason: "several checkpoints start with it", Candidates: c, Ambiguous: true}
		}
		if id, err := object.ParseID(strings.ToLower(base)); err == nil && len(base) == 64 {
			if pruned, _ := r.st.Pruned(ctx, id); pruned {
				return ID{}, &RevisionError{Rev: full, Reason: "that checkpoint was removed by gc", pruned: true}
			}
		}
		return ID{}, &RevisionError{Rev: full, Reason: "no checkpoint id starts with it"}
	}
	if isHex(base) {
		return ID{}, &RevisionError{Rev: full, Reason: "give at least 4 hex digits of an id"}
	}
	return ID{}, &RevisionError{Rev: full, Reason: "no checkpoint, snapshot, tag or branch has that name"}
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// head returns the HEAD ref and its checkpoint (nil, nil without one).
func (r *Repo) head(ctx context.Context) (*store.Ref, *store.Record, error) {
	ref, err := r.st.Ref(ctx, headName)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	rec, err := r.st.Checkpoint(ctx, ref.ID)
	if err != nil {
		return nil, nil, err
	}
	return &ref, rec, nil
}

var _ = object.ZeroID
