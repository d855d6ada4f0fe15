package gitmirror

import (
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
)

// refNameEdges are names at the edges of git's rules.
var refNameEdges = []string{
	"refs/ckpt/snapshots/a", "refs/ckpt/snapshots/a.", "refs/ckpt/snapshots/a.lock",
	"refs/ckpt/snapshots/a.lock/b", "refs/ckpt/snapshots/a..b", "refs/ckpt/snapshots/.a",
	"refs/ckpt/snapshots/a/.b", "refs/ckpt/snapshots/a./b", "refs/ckpt/snapshots/-a",
	"refs/ckpt/snapshots/a@{b", "refs/ckpt/snapshots/a@b", "refs/ckpt/snapshots/@",
	"refs/ckpt/snapshots/a{b", "refs/ckpt/snapshots/HEAD", "refs/ckpt/snapshots/a~1",
	"refs/ckpt/snapshots/a^", "refs/ckpt/snapshots/a:b", "refs/ckpt/snapshots/a?b",
	"refs/ckpt/snapshots/a*b", "refs/ckpt/snapshots/a[b", "refs/ckpt/snapshots/a\\b",
	"refs/ckpt/snapshots/a b", "refs/ckpt/snapshots/a\tb", "refs/ckpt/snapshots/a\x01b",
	"refs/ckpt/snapshots/a\x7fb", "refs/ckpt/snapshots/caf\xc3\xa9", "refs/ckpt/snapshots/\xff",
	"refs/ckpt/snapshots/a//b", "refs/ckpt/snapshots/", "/refs/ckpt/x", "refs/ckpt/x/",
	"@", "a", "refs", "refs/.lock", "refs/a.lock.b", "refs/..", "refs/.", "refs/a/..b",
	"refs/a.b.", "refs/a/b.lock.", "refs/ckpt/snapshots/a-", "refs/ckpt/snapshots/_",
	"refs/ckpt/snapshots/@{", "refs/ckpt/snapshots/{@", "refs/@/x", "refs/x/@",
	"refs/ckpt/snapshots/" + strings.Repeat("a", 300),
}

// randRefName returns a random ref name built from the characters and
// pieces git's rules are about.
func randRefName(r *rand.Rand) string {
	pieces := []string{"a", "b", "Z", "0", "9", "_", "-", ".", ".", "/", "/", "@", "{", "}",
		"~", "^", ":", "?", "*", "[", "]", "\\", " ", "\t", "\x01", "\x1f", "\x7f",
		"\xc3\xa9", "\xff", "\xe6\x97\xa5", "lock", ".lock", "..", "@{", "HEAD", "refs/"}
	var b strings.Builder
	if r.IntN(3) > 0 {
		b.WriteString([]string{"refs/ckpt/snapshots/", "refs/ckpt/tags/", "refs/sandbox/snapshots/", "refs/"}[r.IntN(4)])
	}
	for range 1 + r.IntN(8) {
		if r.IntN(2) == 0 {
			b.WriteString(pieces[r.IntN(4)]) // plain characters are common
		} else {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
	}
	return b.String()
}

// TestCheckRefFormatAgainstGit compares CheckRefFormat with git
// check-ref-format on edge cases and random names.
func TestCheckRefFormatAgainstGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	r := rand.New(rand.NewPCG(2025, 11))
	names := append([]string{}, refNameEdges...)
	n := 3000
	if testing.Short() {
		n = 600
	}
	for range n {
		names = append(names, randRefName(r))
	}
	for _, name := range names {
		err := exec.Command("git", "check-ref-format", name).Run()
		if _, isExit := err.(*exec.ExitError); err != nil && !isExit {
			t.Fatal(err)
		}
		gitOK := err == nil
		ours := CheckRefFormat(name)
		if (ours == nil) != gitOK {
			t.Errorf("CheckRefFormat(%q) = %v, git check-ref-format accepts it: %v", name, ours, gitOK)
		}
	}
}

func TestCheckRefFormatReasons(t *testing.T) {
	for name, want := range map[string]string{
		"refs/ckpt/snapshots/a.":     `ends with "."`,
		"refs/ckpt/snapshots/a.lock": `".lock"`,
		"refs/ckpt/snapshots/a..b":   `".."`,
		"refs/ckpt/snapshots/a@{b":   `"@{"`,
		"refs/ckpt/snapshots/a b":    `' '`,
		"refs/ckpt/snapshots/.a":     `starts with "."`,
		"refs/ckpt//snapshots":       "empty component",
		"refs/ckpt/snapshots/a\x00b": `'\x00'`,
		"refs/ckpt/snapshots/a\x7fb": `'\x7f'`,
		"x":                          "one component",
	} {
		err := CheckRefFormat(name)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckRefFormat(%q) = %v, want an error mentioning %s", name, err, want)
		}
	}
}
