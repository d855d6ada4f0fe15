//go:build linux

package chaos

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/cli"
)

var (
	flagRounds  = flag.Int("chaos.rounds", 0, "rounds of TestChaos (0: 200, or 20 with -short)")
	flagSeed    = flag.Uint64("chaos.seed", 1, "random seed of TestChaos")
	flagMaxFail = flag.Int("chaos.maxfail", 5, "stop TestChaos after this many inconsistent rounds")
)

// asCLI in the environment makes the test binary act as the ckpt command
// whatever its name: `ckpt watch -d` starts the watcher by running its
// own executable (this test binary) again, and it must run the CLI, not
// the tests.
const asCLI = "CKPT_CHAOS_AS_CLI"

// TestMain lets the test binary act as the ckpt command: invoked under the
// name "ckpt" (a symlink made by newEnv), or with $CKPT_CHAOS_AS_CLI set,
// it runs the CLI.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "ckpt" || os.Getenv(asCLI) == "1" {
		os.Exit(cli.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
