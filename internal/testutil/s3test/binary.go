package s3test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/flock"
)

// Version is the release of the Versity S3 Gateway the tests run.
const Version = "v1.8.0"

// gatewayPackage is what go install builds for Binary.
const gatewayPackage = "github.com/versity/versitygw/cmd/versitygw"

// CacheDir is where Binary keeps the gateway: versitygw-v1.8.0 in
// ckpt-tools under the user's cache directory ($XDG_CACHE_HOME or
// ~/.cache), the place scripts/test installs it to.
func CacheDir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("versitygw cache directory: %w", err)
	}
	return filepath.Join(cache, "ckpt-tools", "versitygw-"+Version), nil
}

// Binary returns the path of the versitygw program. CKPT_VERSITYGW names
// it when set; otherwise it is versitygw in [CacheDir], which Binary
// installs there with go install when it is missing, under a file lock so
// that test packages running at once build it only once. In -short mode a
// missing binary is not installed: the test is skipped, saying so.
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("CKPT_VERSITYGW"); p != "" {
		if !isExecutable(p) {
			t.Fatalf("CKPT_VERSITYGW=%s is not an executable file: unset it to use the one in the cache, or install versitygw %s there", p, Version)
		}
		return p
	}
	dir, err := CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "versitygw")
	if isExecutable(bin) {
		return bin
	}
	if testing.Short() {
		t.Skipf("versitygw %s is not installed at %s: in the full run only (go test without -short installs it, as ./scripts/test does)", Version, bin)
	}
	if err := install(dir); err != nil {
		t.Fatal(err)
	}
	return bin
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// install builds versitygw into dir. It holds an flock on dir.lock while
// it does, builds into a temporary GOBIN beside dir and renames the
// program into place, so a concurrent Binary sees either no program or a
// whole one.
func install(dir string) error {
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("install versitygw: %w", err)
	}
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("install versitygw: %w", err)
	}
	defer lock.Close()
	if err := flock.Lock(lock); err != nil {
		return fmt.Errorf("install versitygw: lock %s: %w", lock.Name(), err)
	}
	defer flock.Unlock(lock) // closing the file unlocks it too
	bin := filepath.Join(dir, "versitygw")
	if isExecutable(bin) {
		return nil // another test package installed it while this one waited
	}
	gobin, err := os.MkdirTemp(parent, "versitygw-install-")
	if err != nil {
		return fmt.Errorf("install versitygw: %w", err)
	}
	defer os.RemoveAll(gobin)
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("install versitygw %s into %s: no go command on PATH: %w", Version, dir, err)
	}
	c := exec.Command(goCmd, "install", gatewayPackage+"@"+Version)
	c.Dir = parent
	c.Env = append(withoutVars(os.Environ(), "GOBIN", "GOFLAGS", "GOWORK"), "GOBIN="+gobin, "GOFLAGS=", "GOWORK=off")
	if out, err := c.CombinedOutput(); err != nil {
		return fmt.Errorf("install versitygw %s into %s: go install: %w\n%s\nrun scripts/test, or set CKPT_VERSITYGW to a versitygw %[1]s binary", Version, dir, err, out)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("install versitygw: %w", err)
	}
	if err := os.Rename(filepath.Join(gobin, "versitygw"), bin); err != nil {
		return fmt.Errorf("install versitygw: %w", err)
	}
	return nil
}

// withoutVars is env without the variables named.
func withoutVars(env []string, names ...string) []string {
	var out []string
next:
	for _, kv := range env {
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}
