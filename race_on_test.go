//go:build race

package ckpt

// raceEnabled: the tests run under the race detector, many times slower;
// long-life tests shorten themselves (scripts/test runs them in full
// without it).
const raceEnabled = true
