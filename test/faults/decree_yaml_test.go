//go:build unix

package faults

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Decree's messages and config.yml are files an agent can write. Each is
// bounded before it is read (1 MiB, front matter 64 KiB) and its YAML before
// it is decoded (1 MiB with aliases expanded, at most 100 aliases): a 1 MB
// scalar behind an anchor, used a hundred times, once made ckpt process
// decode 100 MB, write it out twice (message.md, inbox/done) and peak at
// 1 GB of memory.

// aliasBomb is a message whose front matter uses a scalar of size bytes, behind
// an anchor, n times.
func aliasBomb(size, n int) string {
	return "---\nbig: &a " + strings.Repeat("x", size) + "\nlist: [" +
		strings.TrimSuffix(strings.Repeat("*a,", n), ",") + "]\n---\nbody\n"
}

// TestDecreeMessageLimits runs ckpt process on an inbox holding an alias
// bomb, a message over the size limit and a good message: the bad ones are
// reported by name and left untouched, nothing is written for them, the
// good one runs, and ckpt's memory stays small.
func TestDecreeMessageLimits(t *testing.T) {
	e := newEnv(t)
	bad := map[string]string{
		"0-bomb.md":    aliasBomb(1000*1000, 100),
		"1-bomb.md":    aliasBomb(30*1000, 100),
		"4-expands.md": aliasBomb(1000, 100),
		"2-large.md":   "---\nroutine: develop\n---\n" + strings.Repeat("a line of a very long message\n", 40000),
		"3-laughs.md": "---\na: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n" +
			"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n---\n",
	}
	files := map[string]string{
		".decree/routines/develop.sh":       "#!/usr/bin/env bash\necho ran >> ran.txt\n",
		".decree/inbox/20260101000000-0.md": "A good one.\n",
	}
	for name, text := range bad {
		files[".decree/inbox/"+name] = text
	}
	e.Write(files)
	code, out, errs, rss := e.runUsage("process")
	if code != 1 {
		t.Fatalf("ckpt process: exit %d, want 1\nstdout: %s\nstderr: %.2000s", code, out, errs)
	}
	for name, want := range map[string]string{
		"0-bomb.md":    "its front matter is larger than the 64 KiB limit",
		"1-bomb.md":    "front matter refused: it is larger than 1 MiB with its aliases expanded",
		"2-large.md":   "it is larger than the 1 MiB limit for messages",
		"3-laughs.md":  "front matter refused: it expands more than 100 aliases",
		"4-expands.md": "front matter refused: written out with its aliases expanded, it would be larger than the 64 KiB limit",
	} {
		if !strings.Contains(errs, "message "+name+": "+want) {
			t.Errorf("stderr does not say %q about %s:\n%.2000s", want, name, errs)
		}
		if got := e.Read(".decree/inbox/" + name); got != bad[name] {
			t.Errorf("%s was changed (%d bytes, was %d)", name, len(got), len(bad[name]))
		}
	}
	if !strings.Contains(out, "20260101000000-0 done") || e.Read("ran.txt") != "ran\n" {
		t.Errorf("the good message did not run:\n%s%.2000s", out, errs)
	}
	runs, _ := os.ReadDir(filepath.Join(e.WS, ".decree", "runs"))
	if len(runs) != 1 {
		t.Errorf("run directories: %d, want 1 (the good message's)", len(runs))
	}
	if rss > 200<<20 {
		t.Errorf("ckpt process peaked at %d MiB of memory", rss>>20)
	}
	t.Logf("peak memory %d MiB", rss>>20)
}

// TestDecreeConfigLimits: config.yml is bounded the same way; ckpt run and
// ckpt process refuse it, naming the file, before running anything.
func TestDecreeConfigLimits(t *testing.T) {
	for name, cfg := range map[string]string{
		"bomb":    "ai: &a " + strings.Repeat("x", 100*1000) + "\ncommands: [" + strings.TrimSuffix(strings.Repeat("*a,", 50), ",") + "]\n",
		"large":   "ai: " + strings.Repeat("x", 2<<20) + "\n",
		"retries": "max_retries: 1000000\n",
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.Write(map[string]string{".decree/config.yml": cfg})
			code, out, errs, rss := e.runUsage("run", "--", "sh", "-c", "echo ran > ran.txt")
			if code != 125 || !strings.Contains(errs, ".decree/config.yml") {
				t.Fatalf("ckpt run: exit %d, want 125 (ckpt's own error) naming config.yml\nstdout: %s\nstderr: %.2000s", code, out, errs)
			}
			if e.Read("ran.txt") != "<absent>" {
				t.Fatal("the command ran")
			}
			if rss > 200<<20 {
				t.Errorf("ckpt run peaked at %d MiB of memory", rss>>20)
			}
		})
	}
}
