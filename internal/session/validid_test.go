package session

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// ValidID accepts exactly what the expression it replaced accepted.
func TestValidIDMatchesExpression(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "aZ09._-/ é\x00\n"
	check := func(id string) {
		if got, want := ValidID(id), re.MatchString(id); got != want {
			t.Fatalf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
	for _, id := range []string{"", "a", "-a", ".a", "_a", "a-", strings.Repeat("a", 128), strings.Repeat("a", 129), "a\n", "\xff"} {
		check(id)
	}
	for range 20000 {
		n := r.IntN(131)
		var b strings.Builder
		for range n {
			if r.IntN(8) == 0 {
				b.WriteByte(alphabet[r.IntN(len(alphabet))])
			} else {
				b.WriteByte("abcXYZ019"[r.IntN(9)])
			}
		}
		check(b.String())
	}
}
