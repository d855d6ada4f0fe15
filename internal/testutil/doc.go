// Package testutil holds the helpers ckpt's tests share: a tree of files
// on disk, the real git in a clean environment, a settable clock, the
// ckpt command as a child process, and golden files.
//
// It is for tests only, and imports no ckpt package: the root package's
// own tests use it too, so an import of the root here would be a cycle.
// TestLayers leaves it out of the layer rules.
package testutil
