package cli

import "testing"

// TestVersionString: the --version line names the commit, its time and a
// modified work tree when the build recorded them, else only the version.
func TestVersionString(t *testing.T) {
	for _, tc := range []struct {
		v    versionInfo
		want string
	}{
		{versionInfo{Version: "(devel)", Go: "go1.26", Platform: "linux/amd64"}, "ckpt (devel) go1.26 linux/amd64"},
		{versionInfo{Version: "v1.2.3", Revision: "0123456789abcdef0123", Time: "2026-01-02T03:04:05Z", Go: "go1.26", Platform: "darwin/arm64"},
			"ckpt v1.2.3 (0123456789ab, 2026-01-02T03:04:05Z) go1.26 darwin/arm64"},
		{versionInfo{Version: "(devel)", Revision: "abc", Modified: true, Go: "go1.26", Platform: "linux/amd64"},
			"ckpt (devel) (abc, modified) go1.26 linux/amd64"},
	} {
		if got := tc.v.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}
