package run

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// hexID accepts exactly what ^[0-9a-f]{64}$ does.
func TestHexIDMatchesExpression(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{64}$`)
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "0123456789abcdefABCDEFg-\n\x00é"
	for i := range 20000 {
		n := 64
		if i%3 == 0 {
			n = rng.IntN(70)
		}
		b := make([]byte, n)
		for j := range b {
			if rng.IntN(40) == 0 {
				b[j] = alphabet[rng.IntN(len(alphabet))]
			} else {
				b[j] = "0123456789abcdef"[rng.IntN(16)]
			}
		}
		if s := string(b); hexID(s) != re.MatchString(s) {
			t.Fatalf("hexID(%q) = %v, the expression says %v", s, hexID(s), re.MatchString(s))
		}
	}
}
