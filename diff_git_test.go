package ckpt

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// gitView returns st as git apply leaves it: git records and restores only
// the owner's execute bit (new files get 0666 or 0777 less the umask).
func gitView(st treegen.State) treegen.State {
	out := treegen.State{}
	for p, e := range st {
		if !e.Symlink {
			if e.Mode&0o100 != 0 {
				e.Mode = 0o755
			} else {
				e.Mode = 0o644
			}
		}
		out[p] = e
	}
	return out
}

// applyTool runs git apply or patch in dir; the environment keeps git from
// finding a repository above dir.
func applyTool(t *testing.T, dir, name string, args ...string) (string, error) {
	c := exec.Command(name, args...)
	c.Dir = dir
	c.Env = append(testutil.GitEnv(t), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
	out, err := c.CombinedOutput()
	return string(out), err
}

// TestDiffAppliesWithGit is the differential test of ckpt diff against git
// apply: random trees (binary, empty and non-UTF-8 files, exec bits, odd
// permissions, symlinks, non-UTF-8 and unusual names, file <-> directory
// <-> symlink changes) are saved as checkpoints A and B; "ckpt diff A B"
// applied with git apply to a copy of A gives exactly B, and with git
// apply -R to a copy of B gives A (git apply --check agrees first). patch
// -p1 applies the text-only diffs and fails, never silently, on git binary
// patches.
func TestDiffAppliesWithGit(t *testing.T) {
	testutil.NeedGit(t)
	_, patchErr := exec.LookPath("patch")
	ctx := context.Background()
	binaries := 0
	for i := 0; i < testutil.Trials(30); i++ {
		seed := uint64(i + 1)
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 0xd1ff))
			ws := filepath.Join(t.TempDir(), "ws")
			stA := treegen.Random(r, treegen.Options{Files: 5 + r.IntN(40), Weird: true})
			if err := treegen.Write(ws, stA); err != nil {
				t.Fatal(err)
			}
			repo, err := Open(ctx, ws, Options{Store: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer repo.Close()
			a := mustSave(t, repo, "A")
			stB, err := treegen.Mutate(r, ws, stA, 1+r.IntN(20), true)
			if err != nil {
				t.Fatal(err)
			}
			b, err := repo.Save(ctx, SaveOptions{Message: "B", AllowEmpty: true})
			if err != nil {
				t.Fatal(err)
			}
			d, err := repo.Diff(ctx, DiffOptions{From: a.ID.String(), To: b.Checkpoint.ID.String()})
			if err != nil {
				t.Fatal(err)
			}
			var patch bytes.Buffer
			if err := d.WritePatch(ctx, &patch); err != nil {
				t.Fatal(err)
			}
			patchFile := filepath.Join(t.TempDir(), "changes.diff")
			if err := os.WriteFile(patchFile, patch.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			hasBinary := bytes.Contains(patch.Bytes(), []byte("\nGIT binary patch\n"))
			if hasBinary {
				binaries++
			}
			for _, dir := range []struct {
				name     string
				from, to treegen.State
				args     []string
			}{
				{"forward", stA, stB, nil},
				{"reverse", stB, stA, []string{"-R"}},
			} {
				copyDir := filepath.Join(t.TempDir(), dir.name)
				if err := treegen.Write(copyDir, dir.from); err != nil {
					t.Fatal(err)
				}
				check := append(append([]string{"apply", "--check"}, dir.args...), patchFile)
				if out, err := applyTool(t, copyDir, "git", check...); err != nil {
					t.Fatalf("git %s: %v\n%s\ndiff:\n%s", strings.Join(check, " "), err, out, patch.Bytes())
				}
				apply := append(append([]string{"apply"}, dir.args...), patchFile)
				if out, err := applyTool(t, copyDir, "git", apply...); err != nil {
					t.Fatalf("git %s: %v\n%s\ndiff:\n%s", strings.Join(apply, " "), err, out, patch.Bytes())
				}
				got, err := treegen.Snapshot(copyDir, nil)
				if err != nil {
					t.Fatal(err)
				}
				if diff := treegen.Diff(gitView(dir.to), gitView(got)); diff != "" {
					t.Fatalf("git %s gave a different tree:\n%s\ndiff:\n%s", strings.Join(apply, " "), diff, patch.Bytes())
				}
			}
			if patchErr != nil || !hasBinary {
				return
			}
			// patch(1) cannot apply git binary patches: it must fail (it
			// says "git binary diffs are not supported"), not succeed
			// having skipped them.
			copyDir := filepath.Join(t.TempDir(), "patch")
			if err := treegen.Write(copyDir, stA); err != nil {
				t.Fatal(err)
			}
			out, err := applyTool(t, copyDir, "patch", "-p1", "-f", "--no-backup-if-mismatch", "-i", patchFile)
			if err == nil {
				t.Errorf("patch -p1 on a diff with binary files: %v, output:\n%s\ndiff:\n%s", err, out, patch.Bytes())
			}
		})
	}
	if binaries == 0 {
		t.Error("no diff had a binary file")
	}
}
