package testutil

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// UpdateEnv is the environment variable that, set to 1, makes Golden
// rewrite golden files instead of comparing with them, like -update.
const UpdateEnv = "CKPT_UPDATE_GOLDEN"

func init() {
	// A test dependency may register -update as well (teatest's golden
	// package did, initialized first); one flag then serves both.
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files (or set "+UpdateEnv+"=1)")
	}
}

// Updating reports whether golden files are to be rewritten: go test
// -update, or CKPT_UPDATE_GOLDEN=1 (which also works for go test ./...).
func Updating() bool {
	if os.Getenv(UpdateEnv) == "1" {
		return true
	}
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// Golden compares got with the golden file at path, or rewrites the file
// when Updating. A difference fails the test with got and want.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if Updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test with -update, or %s=1, to create it)", err, UpdateEnv)
	}
	if string(got) != string(want) {
		t.Errorf("%s changed (run go test with -update, or %s=1, if intended):\ngot:\n%s\nwant:\n%s", path, UpdateEnv, got, want)
	}
}
