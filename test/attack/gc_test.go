package attack

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"
)

// gc killed at random moments (its sweep is one transaction that the
// store/before-commit failpoint does not reach, then compaction), then the
// next command: fsck is clean and every checkpoint still listed restores
// exactly — kept objects stored as deltas against removed ones were
// rewritten in the same transaction. A second gc then finishes the job.
// This attack held.
func TestGCKilledAtRandom(t *testing.T) {
	setup := func(e *env) {
		big := strings.Repeat("line of a large file that changes a little each time\n", 2000)
		for i := range 8 {
			e.Write(map[string]string{"big.txt": big + fmt.Sprintf("version %d\n", i), fmt.Sprintf("f%d.txt", i): "x\n"})
			e.Must("save", "-q", "-m", fmt.Sprintf("v%d", i))
		}
		e.Must("tag", "keepme", "HEAD~5")
	}
	rounds := 12
	if testing.Short() {
		rounds = 3
	}
	rng := rand.New(rand.NewPCG(11, 12))
	killed := 0
	for round := range rounds {
		e := newEnv(t)
		setup(e)
		c := e.Cmd("gc", "--keep", "2", "--max-age", "0", "--max-size", "0")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(40000)) * time.Microsecond)
		c.Process.Signal(syscall.SIGKILL)
		if err := c.Wait(); err != nil {
			killed++
		}
		what := fmt.Sprintf("round %d", round)
		if code, out, errs := e.Run("fsck"); code != 0 {
			t.Fatalf("%s: fsck after a killed gc: exit %d\n%s%s", what, code, out, errs)
		}
		checkEveryCheckpoint(t, e, what)
		e.Must("gc", "--keep", "2", "--max-age", "0", "--max-size", "0")
		if code, out, errs := e.Run("fsck"); code != 0 {
			t.Fatalf("%s: fsck after gc again: exit %d\n%s%s", what, code, out, errs)
		}
		if !testing.Short() {
			checkEveryCheckpoint(t, e, what+", gc again")
		}
	}
	t.Logf("%d of %d gc runs killed", killed, rounds)
}
