package ckpt

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// fileRemote returns a file:// URL of a new directory.
func fileRemote(t *testing.T) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), "remote")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return "file://" + d
}

func openTestRepo(t *testing.T, ws string) *Repo {
	t.Helper()
	r, err := Open(context.Background(), ws, Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestPropertyRemoteRoundTrip: on random trees (symlinks, exec bits,
// binary and empty files, non-UTF-8 names) and random histories, a clone
// into an empty directory is exactly the pushed checkpoint, and a second
// push after more changes uploads only what changed.
func TestPropertyRemoteRoundTrip(t *testing.T) {
	ctx := context.Background()
	for i := 0; i < testutil.Trials(20); i++ {
		seed := uint64(i + 1)
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(seed, 17))
			ws := t.TempDir()
			st := treegen.Random(rnd, treegen.Options{Files: 10 + rnd.IntN(60), Weird: true})
			if err := treegen.Write(ws, st); err != nil {
				t.Fatal(err)
			}
			r := openTestRepo(t, ws)
			url := fileRemote(t)
			if _, err := r.AddRemote(ctx, RemoteConfig{Name: "origin", URL: url}); err != nil {
				t.Fatal(err)
			}
			for round := 0; round < 3; round++ {
				sr, err := r.Save(ctx, SaveOptions{Message: fmt.Sprint("round ", round)})
				if err != nil {
					t.Fatal(err)
				}
				want := snapshot(t, ws)
				pr, err := r.Push(ctx, "", PushOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if round > 0 && sr.Created && pr.Checkpoints != 1 {
					t.Errorf("round %d pushed %d checkpoints, want 1", round, pr.Checkpoints)
				}
				dir := filepath.Join(t.TempDir(), "clone")
				c, res, err := Clone(ctx, url, dir, CloneOptions{Open: Options{Store: t.TempDir()}})
				if err != nil {
					t.Fatal(err)
				}
				got := snapshot(t, dir)
				if d := treegen.Diff(want, got); d != "" {
					t.Fatalf("round %d: clone differs from the pushed checkpoint:\n%s", round, d)
				}
				if res.Rev != "main" {
					t.Errorf("clone restored %q, want main", res.Rev)
				}
				h, err := c.Resolve(ctx, "HEAD")
				if err != nil {
					t.Fatal(err)
				}
				o, _ := r.Resolve(ctx, "HEAD")
				if h != o {
					t.Errorf("clone HEAD %s, original %s", h.Short(), o.Short())
				}
				c.Close()
				if _, err := treegen.Mutate(rnd, ws, snapshotState(t, ws), 1+rnd.IntN(10), true); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func snapshotState(t *testing.T, dir string) treegen.State { return snapshot(t, dir) }

// TestRemotePushUpToDate: a second push with nothing new uploads nothing.
func TestRemotePushUpToDate(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	testutil.WriteFiles(t, ws, map[string]string{"a.txt": "a\n", "d/b.txt": "b\n"})
	r := openTestRepo(t, ws)
	url := fileRemote(t)
	if _, err := r.AddRemote(ctx, RemoteConfig{Name: "origin", URL: url}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Save(ctx, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Push(ctx, "origin", PushOptions{}); err != nil {
		t.Fatal(err)
	}
	pr, err := r.Push(ctx, "origin", PushOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pr.Bytes != 0 || pr.Objects != 0 {
		t.Errorf("second push uploaded %d objects, %d bytes", pr.Objects, pr.Bytes)
	}
	for _, ref := range pr.Refs {
		if ref.Status != "up-to-date" {
			t.Errorf("%s: %s", ref.Name, ref.Status)
		}
	}
	if _, err := r.Resolve(ctx, "origin/main"); err != nil {
		t.Errorf("origin/main: %v", err)
	}
	_ = errors.New
}

// ageIdentity writes a new age identity file and returns it with its
// recipient.
func ageIdentity(t *testing.T) (string, []string) {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "key.txt")
	if err := os.WriteFile(p, []byte("# test key\n"+id.String()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p, []string{id.Recipient().String()}
}

// TestRemoteIdentityFromEnv: CKPT_AGE_IDENTITY may hold the secret key
// itself (as a sandbox's secret store hands it over) or name its file.
func TestRemoteIdentityFromEnv(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	testutil.WriteFiles(t, ws, map[string]string{"a.txt": "a\n"})
	r := openTestRepo(t, ws)
	idFile, recipients := ageIdentity(t)
	url := fileRemote(t)
	if _, err := r.AddRemote(ctx, RemoteConfig{Name: "origin", URL: url, Recipients: recipients}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Save(ctx, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Push(ctx, "", PushOptions{}); err != nil {
		t.Fatal(err)
	}
	want := snapshot(t, ws)
	data, err := os.ReadFile(idFile)
	if err != nil {
		t.Fatal(err)
	}
	var key string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "AGE-SECRET-KEY-") {
			key = line
		}
	}
	for _, v := range []string{key, idFile} {
		t.Setenv("CKPT_AGE_IDENTITY", v)
		cloneEquals(t, url, want, CloneOptions{})
	}
}
