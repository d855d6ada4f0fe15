package ckpt

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// TestPropertyGitExport: random trees (symlinks, exec bits, binary and empty
// files, non-UTF-8 names, file/directory/symlink changes) saved on the git
// backend, several checkpoints each; for every exported commit, git
// ls-tree -r and git cat-file give back exactly the files of the
// checkpoint, with modes mapped to git's (100755 when any exec bit is set,
// else 100644; 120000 for symlinks), and git fsck --strict is clean.
func TestPropertyGitExport(t *testing.T) {
	testutil.NeedGit(t)
	ctx := context.Background()
	for i := 0; i < testutil.Trials(12); i++ {
		seed := uint64(i + 1)
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			ws := t.TempDir()
			st := treegen.Random(r, treegen.Options{Files: 10 + r.IntN(60), Weird: true})
			if err := treegen.Write(ws, st); err != nil {
				t.Fatal(err)
			}
			repo := openGitRepo(t, ws, Options{})
			for step := 0; step < 4; step++ {
				want := snapshot(t, ws)
				delete(want, ".git")
				for p, e := range want {
					switch {
					case strings.HasPrefix(p, ".git/"):
						delete(want, p)
					case e.Symlink:
					case e.Mode&0o111 != 0:
						e.Mode = 0o755
						want[p] = e
					default:
						e.Mode = 0o644
						want[p] = e
					}
				}
				res, err := repo.Save(ctx, SaveOptions{Message: fmt.Sprint("step ", step), AllowEmpty: true})
				if err != nil {
					t.Fatal(err)
				}
				if err := repo.GitSyncError(); err != nil {
					t.Fatal(err)
				}
				sha, err := repo.GitCommit(ctx, res.Checkpoint.ID)
				if err != nil {
					t.Fatal(err)
				}
				got := gitCommitState(t, ws, sha)
				if d := treegen.Diff(want, got); d != "" {
					t.Fatalf("seed %d step %d: commit %s differs from the checkpoint:\n%s", seed, step, sha, d)
				}
				// The very tree git itself writes for the workspace (the sandbox snapshot tools'
				// method: a temporary index, git add --all, write-tree).
				if ours, theirs := strings.TrimSpace(testutil.Git(t, ws, "rev-parse", sha+"^{tree}")), gitWriteTree(t, ws); ours != theirs {
					t.Fatalf("seed %d step %d: tree %s, git write-tree gives %s", seed, step, ours, theirs)
				}
				if st, err = treegen.Mutate(r, ws, st, 1+r.IntN(15), true); err != nil {
					t.Fatal(err)
				}
			}
			fsck(t, ws)
		})
	}
}

// gitWriteTree returns the tree git add --all + write-tree make of the
// workspace, with a temporary index.
func gitWriteTree(t *testing.T, dir string) string {
	t.Helper()
	idx := filepath.Join(t.TempDir(), "index")
	c := exec.Command("sh", "-c", "git add --all && git write-tree")
	c.Dir = dir
	c.Env = append(testutil.GitEnv(t), "GIT_INDEX_FILE="+idx)
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("git write-tree: %v: %s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// gitCommitState reads a commit's files with git ls-tree -r and git
// cat-file --batch, as treegen state (modes as git records them: 0755 for
// 100755, 0644 for 100644).
func gitCommitState(t *testing.T, dir, commit string) treegen.State {
	t.Helper()
	type item struct{ path, mode, oid string }
	var items []item
	for _, rec := range strings.Split(testutil.Git(t, dir, "ls-tree", "-r", "-z", "--full-tree", commit), "\x00") {
		if rec == "" {
			continue
		}
		meta, path, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 || f[1] != "blob" {
			t.Fatalf("unexpected ls-tree record %q", rec)
		}
		items = append(items, item{path, f[0], f[2]})
	}
	var in strings.Builder
	for _, it := range items {
		in.WriteString(it.oid + "\n")
	}
	c := testutil.GitCommand(t, dir, "cat-file", "--batch")
	c.Stdin = strings.NewReader(in.String())
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(out)
	st := treegen.State{}
	for _, it := range items {
		hdr, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(hdr)
		if len(f) != 3 || f[0] != it.oid {
			t.Fatalf("cat-file header %q for %s", hdr, it.oid)
		}
		n, _ := strconv.Atoi(f[2])
		data := make([]byte, n+1)
		if _, err := io.ReadFull(br, data); err != nil {
			t.Fatal(err)
		}
		e := treegen.Entry{Data: string(data[:n])}
		switch it.mode {
		case "100755":
			e.Mode = 0o755
		case "100644":
			e.Mode = 0o644
		case "120000":
			e.Symlink = true
		default:
			t.Fatalf("mode %s for %q", it.mode, it.path)
		}
		st[it.path] = e
	}
	if err := c.Wait(); err != nil {
		t.Fatal(err)
	}
	return st
}
