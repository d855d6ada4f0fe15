// Package attack is an adversarial review of ckpt's hardening: races with
// a second ckpt process or with edits while ckpt writes, hostile file names
// and store content, and kill -9 at every step. Each test either
// reproduces a defect (and fails until it is fixed) or holds an attack that
// failed, as a regression test. Races are opened with failpoints
// (internal/failpoint) rather than sleeps.
package attack
