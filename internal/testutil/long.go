package testutil

import "testing"

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
