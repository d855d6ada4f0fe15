//go:build race

package cli

// raceEnabled: the tests run with the race detector, so binaries they
// build for end-to-end tests are built with it too (and reuse its cache).
const raceEnabled = true
