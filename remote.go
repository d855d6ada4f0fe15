package ckpt

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed1cedbf7c/ckpt/internal/remote"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// # Remotes
//
// A remote keeps checkpoints somewhere that outlives the machine: an
// S3-compatible bucket or a directory. Push uploads what the remote lacks
// (packs of objects, an index per pack), then moves the remote's refs with
// conditional writes; pull downloads what the store lacks and records the
// remote's refs as remote-tracking refs (remotes/NAME/...), which
// revisions name as NAME/x. See docs/formats.md ("Remotes").
//
// What a remote receives is the store's history with two things taken out
// (see pushView): ignored files a checkpoint holds (meta tracked-ignored),
// and, unless the remote is set up with sessions, the prompt text turn
// checkpoints carry in their messages. Every message is redacted of
// secrets. A checkpoint changed this way gets another id on the remote;
// the store remembers the pairs, so its own pushes and pulls line up.

const (
	remoteRefPrefix = "remotes/"
	metaRemotes     = "remotes"
	metaRemoteKey   = "remote-key:"
)

// RemoteConfig is a configured remote.
type RemoteConfig struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	// Recipients are the age public keys (or files of them) a new remote
	// is encrypted to; empty: not encrypted.
	Recipients []string `json:"recipients,omitempty"`
	// Identities are age identity files that open an encrypted remote's
	// key (the store remembers the key once opened).
	Identities []string `json:"identities,omitempty"`
	// WithSessions pushes turn checkpoints' prompt text (redacted).
	WithSessions bool `json:"with_sessions,omitempty"`
	// Continuous pushes every checkpoint in the background (ckpt watch).
	Continuous bool `json:"continuous,omitempty"`
}

func (r *Repo) checkRemoteBackend() error {
	if r.git != nil {
		return withHint(errors.New("remotes need ckpt's own store; this workspace uses the git backend"),
			"the git backend's checkpoints are git commits under "+r.cfg.GitRefPrefix+": push them with git push")
	}
	return nil
}

// Remotes lists the configured remotes, by name.
func (r *Repo) Remotes(ctx context.Context) ([]RemoteConfig, error) {
	v, err := r.st.Meta(ctx, metaRemotes)
	if err != nil || v == "" {
		return []RemoteConfig{}, err
	}
	var out []RemoteConfig
	if err := json.Unmarshal([]byte(v), &out); err != nil {
		return nil, fmt.Errorf("the store's list of remotes does not decode: %w", err)
	}
	slices.SortFunc(out, func(a, b RemoteConfig) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// validRemoteName: a ref-name component (no '/').
func validRemoteName(name string) error {
	if err := ValidRefName("remote", name); err != nil {
		return err
	}
	if strings.Contains(name, "/") {
		return &NameError{Kind: "remote", Name: name, Reason: "'/' is not allowed in a remote's name"}
	}
	return nil
}

// AddRemote configures a remote. It checks the URL but does not contact
// the remote (the first push does).
func (r *Repo) AddRemote(ctx context.Context, rc RemoteConfig) (*RemoteConfig, error) {
	if err := r.checkRemoteBackend(); err != nil {
		return nil, err
	}
	if err := validRemoteName(rc.Name); err != nil {
		return nil, err
	}
	loc, err := remote.ParseURL(rc.URL)
	if err != nil {
		return nil, err
	}
	rc.URL = loc.String()
	if _, err := remote.ParseRecipients(rc.Recipients); err != nil {
		return nil, err
	}
	if _, err := remote.ParseIdentities(rc.Identities); err != nil {
		return nil, err
	}
	for i, p := range rc.Identities {
		if rc.Identities[i], err = filepath.Abs(p); err != nil {
			return nil, err
		}
	}
	unlock, err := r.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	all, err := r.Remotes(ctx)
	if err != nil {
		return nil, err
	}
	for _, o := range all {
		if o.Name == rc.Name {
			return nil, &RemoteError{Name: rc.Name, Reason: "already exists (" + o.URL + ")", hint: "ckpt remote remove " + rc.Name + " first, or pick another name"}
		}
	}
	all = append(all, rc)
	if err := r.writeRemotes(ctx, all, nil); err != nil {
		return nil, err
	}
	return &rc, nil
}

func (r *Repo) writeRemotes(ctx context.Context, all []RemoteConfig, also func(store.Tx) error) error {
	data, _ := json.Marshal(all)
	return r.st.Update(ctx, func(tx store.Tx) error {
		if err := tx.SetMeta(metaRemotes, string(data)); err != nil {
			return err
		}
		if also != nil {
			return also(tx)
		}
		return nil
	})
}

// RemoveRemote forgets a remote, its remote-tracking refs and its cache.
// The remote itself is untouched.
func (r *Repo) RemoveRemote(ctx context.Context, name string) error {
	unlock, err := r.begin(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	all, err := r.Remotes(ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(all, func(rc RemoteConfig) bool { return rc.Name == name })
	if i < 0 {
		return r.unknownRemote(name, all)
	}
	all = slices.Delete(all, i, i+1)
	refs, err := r.st.Refs(ctx, remoteRefPrefix+name+"/")
	if err != nil {
		return err
	}
	err = r.writeRemotes(ctx, all, func(tx store.Tx) error {
		for _, ref := range refs {
			if err := tx.DeleteRef(ref.Name); err != nil {
				return err
			}
		}
		return tx.SetMeta(metaRemoteKey+name, "")
	})
	if err != nil {
		return err
	}
	if d := r.remoteCacheDir(name); d != "" {
		os.RemoveAll(d)
	}
	return nil
}

func (r *Repo) unknownRemote(name string, all []RemoteConfig) error {
	if len(all) == 0 {
		return &RemoteError{Name: name, Reason: "no such remote", hint: "add one: ckpt remote add origin s3://BUCKET/PREFIX (or file:///PATH)"}
	}
	var names []string
	for _, rc := range all {
		names = append(names, rc.Name)
	}
	return &RemoteError{Name: name, Reason: "no such remote", hint: "configured: " + strings.Join(names, ", ")}
}

// remoteConfig finds a remote by name; "" means the only one, or origin.
func (r *Repo) remoteConfig(ctx context.Context, name string) (RemoteConfig, error) {
	if err := r.checkRemoteBackend(); err != nil {
		return RemoteConfig{}, err
	}
	all, err := r.Remotes(ctx)
	if err != nil {
		return RemoteConfig{}, err
	}
	if name == "" {
		if len(all) == 1 {
			return all[0], nil
		}
		name = "origin"
	}
	for _, rc := range all {
		if rc.Name == name {
			return rc, nil
		}
	}
	if len(all) > 1 && name == "origin" {
		return RemoteConfig{}, &RemoteError{Reason: "several remotes and none is named origin", hint: "name one: ckpt push NAME"}
	}
	return RemoteConfig{}, r.unknownRemote(name, all)
}

func (r *Repo) remoteCacheDir(name string) string {
	if r.storeDir == "" {
		return ""
	}
	return filepath.Join(r.storeDir, "remotes", name)
}

// openRemote opens a configured remote; create makes it if it holds
// nothing yet (a push).
func (r *Repo) openRemote(ctx context.Context, rc RemoteConfig, create bool) (*remote.Remote, *remote.Retry, error) {
	loc, err := remote.ParseURL(rc.URL)
	if err != nil {
		return nil, nil, err
	}
	be, err := remote.NewBackend(loc)
	if err != nil {
		return nil, nil, err
	}
	o := remote.Options{Create: create, CacheDir: r.remoteCacheDir(rc.Name)}
	if o.Recipients, err = remote.ParseRecipients(rc.Recipients); err != nil {
		return nil, nil, err
	}
	if o.Identities, err = remote.ParseIdentities(rc.Identities); err != nil {
		return nil, nil, err
	}
	if env := os.Getenv("CKPT_AGE_IDENTITY"); env != "" {
		ids, err := remote.ParseIdentityEnv(env)
		if err != nil {
			return nil, nil, err
		}
		o.Identities = append(o.Identities, ids...)
	}
	if v, _ := r.st.Meta(ctx, metaRemoteKey+rc.Name); v != "" {
		o.Key, _ = base64.StdEncoding.DecodeString(v)
	}
	rm, err := remote.Open(ctx, be, o)
	if err != nil {
		return nil, nil, err
	}
	if k := rm.Key(); k != nil && base64.StdEncoding.EncodeToString(k) != base64.StdEncoding.EncodeToString(o.Key) {
		// Remember the key, so pushes need no identity: the store holds
		// everything the key protects anyway.
		r.st.Update(ctx, func(tx store.Tx) error {
			return tx.SetMeta(metaRemoteKey+rc.Name, base64.StdEncoding.EncodeToString(k))
		})
	}
	return rm, be, nil
}
