package testutil

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Absent is what ReadFile returns for a path that does not exist.
const Absent = "<absent>"

// WriteFile writes content to path (mode 0o644), making its parents.
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// WriteFiles creates or replaces files below dir: each key is a
// slash-separated path relative to dir, each value its content.
func WriteFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		WriteFile(t, filepath.Join(dir, filepath.FromSlash(p)), c)
	}
}

// ReadFile returns the content of the file at the slash-separated path rel
// below dir; Absent when there is none (a parent missing or not a
// directory), "<a directory>" for a directory.
func ReadFile(t testing.TB, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	switch {
	case errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return Absent
	case errors.Is(err, syscall.EISDIR):
		return "<a directory>"
	case err != nil:
		t.Fatal(err)
	}
	return string(b)
}

// TempDir is t.TempDir with symlinks resolved, for tests that compare the
// paths ckpt reports with their own.
func TempDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
