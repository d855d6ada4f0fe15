package testutil

import (
	"os"
	"testing"
)

// Long marks a test that belongs to the full run only: it kills ckpt at
// every step of an operation, drives a terminal, or repeats an operation
// thousands of times. In the everyday loop (go test -short) it is skipped,
// saying so; ./scripts/test runs it.
func Long(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s: in the full run only (go test without -short, as ./scripts/test does)", what)
	}
}

// Trials is how many random trials a property test runs for a default of
// n: a fifth of n (at least 2) in the everyday loop (go test -short), ten
// times n under CKPT_LONG_TESTS, n otherwise.
func Trials(n int) int {
	switch {
	case os.Getenv("CKPT_LONG_TESTS") != "":
		return n * 10
	case testing.Short():
		return max(2, n/5)
	}
	return n
}
