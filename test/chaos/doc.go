// Package chaos is ckpt's chaos harness: random operations × random
// concurrent changes to the workspace × kill -9 at random points, with the
// workspace, the store and everything around them checked after every
// round.
//
// Each round first changes the workspace while nothing runs (so there is
// something to save or lose), then runs one operation through the ckpt CLI
// as a child process — save, restore REV, restore REV -- PATH..., undo,
// redo, switch (and branch), gc, turn begin/end and session new, rewind
// (--code, --both, --exact, --keep-user-edits, --conversation), ckpt run (a shell
// command changing the workspace, failing at times so ckpt reverts it),
// runs revert, watch on and off. In about a third of the rounds a mutator
// races the operation: edits in place and by rename, new files, renames of
// files and directories, file↔directory↔symlink changes, hard links
// (inside, and to a file outside the workspace), directories swapped for
// symlinks to a sentinel directory outside and back, exec bits, and edits
// of ignored files; it never writes through a symlink (openat2 with
// RESOLVE_NO_SYMLINKS), so a change outside can only be ckpt's. About a
// third of the rounds are killed with SIGKILL, at a random failpoint
// (internal/failpoint: restore/staged, restore/before-change,
// restore/change, restore/before-replace, store/before-commit,
// scan/read-dir, revert/before-change; kill@N) or after a random delay,
// and some fail at an injected error; a killed round runs `ckpt recover`
// (itself killed at times first).
//
// After every round:
//
//   - no concurrent change: the workspace (what a checkpoint captures) is
//     exactly the state before the operation or a recorded checkpoint, and
//     if it is not the state before, that state is itself recorded; after a
//     successful operation HEAD equals the workspace, and a restore's
//     workspace equals its target (a partial one: the paths laid over the
//     state before);
//   - concurrent changes: every content the workspace held before and every
//     content the mutator wrote (and did not itself overwrite or delete) is
//     on disk or in a checkpoint — nothing the user wrote is destroyed
//     unseen;
//   - ignored files are exactly as the mutator left them, nothing outside
//     the workspace changed (the sentinel directory, byte for byte with
//     modes and mtimes, and the workspace's parent), no ckpt temporary
//     entry is left, `ckpt fsck` is clean, and no operation exits 3 (but a
//     run's revert that no longer applies, which changes nothing, as
//     docs/runs.md says).
//
// Every 25 rounds, and at the end for every checkpoint still listed, each
// checkpoint not yet checked is restored and the workspace compared with
// its manifest, then the state before is restored and compared. Where a
// directory holds ignored files and a checkpoint has a file there, the
// restore keeps the directory by design; those paths are excused.
//
// The CI runs 200 rounds (20 with -short); a failure names the seed and
// the round. The operations, their interruptions and the mutator's choices
// follow the seed, but timings do not, so a raced round may need a few
// runs to fail again:
//
//	go test ./test/chaos -run TestChaos -chaos.seed=S -chaos.rounds=N
//
// The long run (docs/guarantees.md reports its counts):
//
//	go test ./test/chaos -run TestChaos -v -timeout 0 -chaos.rounds=3000 -chaos.maxfail=1000
//
// found_test.go holds each defect the harness found as a minimal,
// deterministic reproduction.
package chaos
