//go:build race

package store

// raceEnabled: the tests run under the race detector, many times slower;
// tests of many rounds shorten themselves (scripts/test runs them in full
// without it).
const raceEnabled = true
