package ckpt

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/remote"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	"github.com/seed1cedbf7c/ckpt/internal/testutil/s3test"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// s3Remote starts a real S3 server with a bucket, sets the AWS
// environment for it, and returns the server and the URL of a remote in
// the bucket (through endpoint, when not empty: a proxy).
func s3Remote(t *testing.T, endpoint string) (*s3test.Server, string) {
	t.Helper()
	srv := s3test.Start(t)
	srv.CreateBucket(t, "ckpt-test")
	setS3Env(t, srv)
	if endpoint == "" {
		endpoint = srv.Endpoint
	}
	return srv, "s3://ckpt-test/team/project?endpoint=" + url.QueryEscape(endpoint)
}

func setS3Env(t *testing.T, srv *s3test.Server) {
	t.Helper()
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
}

// randomWorkspace writes a random tree (symlinks, exec bits, binary and
// empty files, non-UTF-8 names) and opens a store for it.
func randomWorkspace(t *testing.T, seed uint64, files int) (*Repo, string, *rand.Rand) {
	t.Helper()
	rnd := rand.New(rand.NewPCG(seed, 99))
	ws := t.TempDir()
	if err := treegen.Write(ws, treegen.Random(rnd, treegen.Options{Files: files, Weird: true})); err != nil {
		t.Fatal(err)
	}
	return openTestRepo(t, ws), ws, rnd
}

// cloneEquals clones url and checks the clone is exactly want.
func cloneEquals(t *testing.T, url string, want treegen.State, opts CloneOptions) *Repo {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "clone")
	opts.Open = Options{Store: t.TempDir()}
	c, _, err := Clone(context.Background(), url, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if d := treegen.Diff(want, snapshot(t, dir)); d != "" {
		t.Fatalf("the clone differs from the pushed checkpoint:\n%s", d)
	}
	return c
}

// TestRemoteS3RoundTrip: push to a real S3 server and clone back, plain
// and encrypted; the encrypted remote shows no path, content or ref name.
func TestRemoteS3RoundTrip(t *testing.T) {
	for _, encrypted := range []bool{false, true} {
		t.Run(fmt.Sprint("encrypted=", encrypted), func(t *testing.T) {
			ctx := context.Background()
			srv, url := s3Remote(t, "")
			r, ws, rnd := randomWorkspace(t, 7, 60)
			testutil.WriteFiles(t, ws, map[string]string{"secret-plan.txt": "the launch code is swordfish\n"})
			rc := RemoteConfig{Name: "origin", URL: url}
			var idFile string
			if encrypted {
				idFile, rc.Recipients = ageIdentity(t)
			}
			if _, err := r.AddRemote(ctx, rc); err != nil {
				t.Fatal(err)
			}
			for round := 0; round < 2; round++ {
				if _, err := r.Save(ctx, SaveOptions{Message: "round"}); err != nil {
					t.Fatal(err)
				}
				if _, err := r.CreateTag(ctx, fmt.Sprint("release-", round), "", false); err != nil {
					t.Fatal(err)
				}
				if _, err := r.Push(ctx, "", PushOptions{}); err != nil {
					t.Fatal(err)
				}
				want := snapshot(t, ws)
				opts := CloneOptions{}
				if encrypted {
					opts.Identities = []string{idFile}
				}
				cloneEquals(t, url, want, opts)
				if _, err := treegen.Mutate(rnd, ws, want, 5, true); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := r.FsckRemote(ctx, "origin", RemoteFsckOptions{}); err != nil {
				t.Fatal(err)
			}
			if encrypted {
				// Nothing readable in the bucket: no ref name, no path, no
				// content (packs are compressed too, so look for the
				// names in the keys and the raw bytes).
				data := bucketBytes(t, srv)
				for _, s := range []string{"release-0", "branches", "secret-plan", "swordfish", "main"} {
					if strings.Contains(data, s) {
						t.Errorf("the encrypted remote shows %q", s)
					}
				}
				// Without the identity it does not open.
				dir := filepath.Join(t.TempDir(), "c")
				_, _, err := Clone(ctx, url, dir, CloneOptions{Open: Options{Store: t.TempDir()}})
				var ke *remote.KeyError
				if !errors.As(err, &ke) {
					t.Fatalf("clone without the identity: %v, want a KeyError", err)
				}
			}
		})
	}
}

// bucketBytes returns every key and object of the test bucket, joined.
func bucketBytes(t *testing.T, srv *s3test.Server) string {
	t.Helper()
	be, err := remote.NewS3(remote.S3Config{Bucket: "ckpt-test", Endpoint: srv.Endpoint, Region: srv.Region})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ents, err := be.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range ents {
		data, _, err := be.Get(ctx, e.Key)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(e.Key + "\n")
		b.Write(data)
	}
	return b.String()
}

// proxiedRemote starts a real S3 server behind a fault proxy and a random
// workspace with its first checkpoint and the remote origin added; it
// returns them with the checkpoint's state.
func proxiedRemote(t *testing.T, prefix string, seed uint64, files int) (*s3test.Server, *s3test.FaultProxy, string, *Repo, string, treegen.State) {
	t.Helper()
	ctx := context.Background()
	srv := s3test.Start(t)
	srv.CreateBucket(t, "ckpt-test")
	setS3Env(t, srv)
	proxy := s3test.NewFaultProxy(t, srv.Endpoint)
	u := "s3://ckpt-test/" + prefix + "?endpoint=" + url.QueryEscape(proxy.URL())
	r, ws, _ := randomWorkspace(t, seed, files)
	if _, err := r.AddRemote(ctx, RemoteConfig{Name: "origin", URL: u}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Save(ctx, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	return srv, proxy, u, r, ws, snapshot(t, ws)
}

// TestRemoteS3Faults: through a proxy that resets connections, answers
// 500 and 503, truncates and slows responses, push and clone still give
// the exact checkpoint, with a bounded number of retries.
func TestRemoteS3Faults(t *testing.T) {
	ctx := context.Background()
	_, proxy, url, r, ws, want := proxiedRemote(t, "team/project", 11, 80)
	proxy.Set(
		s3test.Fault{Kind: s3test.Status, Status: 503, Limit: 2, Match: func(r *http.Request) bool { return r.Method == "PUT" }},
		s3test.Fault{Kind: s3test.Status, Status: 503, Probability: 0.1, Seed: 1},
		s3test.Fault{Kind: s3test.Status, Status: 500, Probability: 0.1, Seed: 2},
		s3test.Fault{Kind: s3test.ResetRequest, Probability: 0.05, Seed: 3},
		s3test.Fault{Kind: s3test.LoseResponse, Probability: 0.05, Seed: 4},
		s3test.Fault{Kind: s3test.ResetResponse, Probability: 0.05, Seed: 5},
		s3test.Fault{Kind: s3test.Truncate, Probability: 0.1, Seed: 6, Match: func(r *http.Request) bool { return r.Method == "GET" }},
		s3test.Fault{Kind: s3test.Pass, Delay: 50e6, Probability: 0.05, Seed: 7},
	)
	pr, err := r.Push(ctx, "", PushOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cloneEquals(t, url, want, CloneOptions{})
	if proxy.Injected() == 0 || pr.Retries == 0 {
		t.Fatalf("the proxy injected %d faults, the push retried %d times: the test tested nothing", proxy.Injected(), pr.Retries)
	}
	t.Logf("%d requests, %d faults, push retried %d", proxy.Requests(), proxy.Injected(), pr.Retries)
	proxy.Set()
	if _, err := r.FsckRemote(ctx, "origin", RemoteFsckOptions{}); err != nil {
		t.Fatal(err)
	}

	// A server that always fails: the push gives up after a bounded
	// number of attempts, naming the remote.
	proxy.Set(s3test.Fault{Kind: s3test.Status, Status: 503})
	before := proxy.Requests()
	testutil.WriteFiles(t, ws, map[string]string{"new.txt": "new\n"})
	if _, err := r.Save(ctx, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = r.Push(ctx, "", PushOptions{})
	if err == nil {
		t.Fatal("push through a failing server succeeded")
	}
	if n := proxy.Requests() - before; n > 6*4 {
		t.Errorf("push made %d requests against a failing server, want at most a few per operation", n)
	}
	if !strings.Contains(err.Error(), "s3://ckpt-test/team/project") {
		t.Errorf("error does not name the remote: %v", err)
	}
}

// TestRemoteS3KilledMidPush: the server is killed while a push uploads
// its packs. The push fails; no ref moved, so no partial checkpoint is
// visible; after a restart the next push completes and the remote checks
// clean.
func TestRemoteS3KilledMidPush(t *testing.T) {
	ctx := context.Background()
	old := remote.PackSize
	remote.PackSize = 16 << 10 // many packs
	t.Cleanup(func() { remote.PackSize = old })
	srv, proxy, url, r, _, want := proxiedRemote(t, "p", 23, 150)
	var packs atomic.Int32
	var once sync.Once
	proxy.Set(s3test.Fault{Kind: s3test.Pass, Match: func(req *http.Request) bool {
		if req.Method == "PUT" && strings.Contains(req.URL.Path, "/packs/") && packs.Add(1) == 3 {
			once.Do(srv.Stop)
		}
		return false
	}})
	if _, err := r.Push(ctx, "", PushOptions{}); err == nil {
		t.Fatal("push succeeded with the server killed")
	}
	srv.Restart(t)
	proxy.Set()
	// Nothing is visible: another store sees no ref.
	other := openTestRepo(t, t.TempDir())
	if _, err := other.AddRemote(ctx, RemoteConfig{Name: "origin", URL: url}); err != nil {
		t.Fatal(err)
	}
	pr, err := other.Pull(ctx, "origin")
	if err != nil {
		t.Fatal(err)
	}
	if len(pr.Refs) != 0 || pr.Checkpoints != 0 {
		t.Fatalf("after a push cut short, a pull saw %+v", pr)
	}
	res, err := r.Push(ctx, "", PushOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("resumed push: %d objects, %d bytes", res.Objects, res.Bytes)
	if _, err := r.FsckRemote(ctx, "origin", RemoteFsckOptions{}); err != nil {
		t.Fatal(err)
	}
	cloneEquals(t, url, want, CloneOptions{})
}

// TestRemoteConcurrentPushers: two stores push different checkpoints to
// one remote at once, round after round: every ref each pushed is there,
// and the remote checks clean. Pushed to the same branch at once, one
// wins and the other is refused, never lost silently.
func TestRemoteConcurrentPushers(t *testing.T) {
	for _, kind := range []string{"file", "s3"} {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			var url string
			if kind == "file" {
				url = fileRemote(t)
			} else {
				_, url = s3Remote(t, "")
			}
			var repos [2]*Repo
			var wss [2]string
			for i := range repos {
				ws := t.TempDir()
				testutil.WriteFiles(t, ws, map[string]string{"common.txt": "same\n"})
				repos[i], wss[i] = openTestRepo(t, ws), ws
				if _, err := repos[i].AddRemote(ctx, RemoteConfig{Name: "origin", URL: url}); err != nil {
					t.Fatal(err)
				}
			}
			rounds := testutil.Trials(100)
			for round := 0; round < rounds; round++ {
				var wg sync.WaitGroup
				errs := make([]error, 2)
				for i, r := range repos {
					wg.Add(1)
					go func() {
						defer wg.Done()
						testutil.WriteFiles(t, wss[i], map[string]string{fmt.Sprintf("f%d.txt", i): fmt.Sprint(round, "\n")})
						if _, err := r.Save(ctx, SaveOptions{}); err != nil {
							errs[i] = err
							return
						}
						tag := fmt.Sprintf("s%d-r%d", i, round)
						if _, err := r.CreateTag(ctx, tag, "", false); err != nil {
							errs[i] = err
							return
						}
						_, errs[i] = r.Push(ctx, "origin", PushOptions{Revs: []string{tag}})
					}()
				}
				wg.Wait()
				for _, err := range errs {
					if err != nil {
						t.Fatalf("round %d: %v", round, err)
					}
				}
			}
			// Every tag is there, at the checkpoint its store tagged.
			pr, err := repos[0].Pull(ctx, "origin")
			if err != nil {
				t.Fatal(err)
			}
			tags := 0
			for _, ref := range pr.Refs {
				if strings.HasPrefix(ref.Name, "tags/") {
					tags++
				}
			}
			if tags != 2*rounds {
				t.Errorf("remote has %d tags, want %d", tags, 2*rounds)
			}
			for i, r := range repos {
				for round := 0; round < rounds; round++ {
					name := fmt.Sprintf("s%d-r%d", i, round)
					want, _ := r.Resolve(ctx, name)
					got, err := repos[0].Resolve(ctx, "origin/"+name)
					if err != nil || got != want {
						t.Errorf("origin/%s = %s, %v; want %s", name, got.Short(), err, want.Short())
					}
				}
			}
			if _, err := repos[0].FsckRemote(ctx, "origin", RemoteFsckOptions{}); err != nil {
				t.Fatal(err)
			}
			// The same branch from both at once: exactly one moves it.
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, r := range repos {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = r.Push(ctx, "origin", PushOptions{Revs: []string{"main"}})
				}()
			}
			wg.Wait()
			var rejected int
			for _, err := range errs {
				var pe *PushRejectedError
				switch {
				case err == nil:
				case errors.As(err, &pe):
					rejected++
				default:
					t.Fatal(err)
				}
			}
			if rejected != 1 {
				t.Errorf("%d of two concurrent pushes of main were refused, want 1 (errors %v)", rejected, errs)
			}
		})
	}
}

// TestRemoteS3BadInput: a missing bucket, wrong keys and no keys give
// errors that say what to do, and never show a secret.
func TestRemoteS3BadInput(t *testing.T) {
	ctx := context.Background()
	srv, _ := s3Remote(t, "")
	r := openTestRepo(t, t.TempDir())
	if _, err := r.Save(ctx, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	add := func(name, url string) {
		if _, err := r.AddRemote(ctx, RemoteConfig{Name: name, URL: url}); err != nil {
			t.Fatal(err)
		}
	}
	ep := "?endpoint=" + url.QueryEscape(srv.Endpoint)
	add("nobucket", "s3://no-such-bucket/p"+ep)
	_, err := r.Push(ctx, "nobucket", PushOptions{})
	var be *remote.BucketError
	if !errors.As(err, &be) || !strings.Contains(Hint(err), "create the bucket") {
		t.Errorf("push to a missing bucket: %v (hint %q)", err, Hint(err))
	}
	add("origin", "s3://ckpt-test/p"+ep)
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret-value-12345")
	_, err = r.Push(ctx, "origin", PushOptions{})
	var ae *remote.AccessError
	if !errors.As(err, &ae) || Hint(err) == "" {
		t.Errorf("push with a wrong secret: %v", err)
	}
	if err != nil && strings.Contains(err.Error()+Hint(err), "wrong-secret-value") {
		t.Errorf("the error shows the secret: %v", err)
	}
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	t.Setenv("AWS_REGION", "eu-west-9")
	_, err = r.Push(ctx, "origin", PushOptions{})
	var re *remote.RegionError
	if !errors.As(err, &re) || !strings.Contains(Hint(err), "AWS_REGION") || !strings.Contains(err.Error(), "eu-west-9") {
		t.Errorf("push with a wrong region: %v (hint %q)", err, Hint(err))
	}
	t.Setenv("AWS_REGION", srv.Region)
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	_, err = r.Push(ctx, "origin", PushOptions{})
	var ne *remote.NoCredentialsError
	if !errors.As(err, &ne) || !strings.Contains(Hint(err), "AWS_ACCESS_KEY_ID") {
		t.Errorf("push without credentials: %v", err)
	}
	for _, bad := range []string{"s3://", "s3://Bad_Bucket/x", "s3://b/../x", "http://example.com/x", "relative/path",
		"s3://user:hunter2@bucket/x", "s3://bucket/p?endpoint=ftp://x", "s3://bucket/p?color=red"} {
		_, err := r.AddRemote(ctx, RemoteConfig{Name: "bad", URL: bad})
		var ue *remote.URLError
		if !errors.As(err, &ue) {
			t.Errorf("AddRemote(%q): %v, want a URLError", bad, err)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}
