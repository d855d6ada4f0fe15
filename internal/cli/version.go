package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// versionInfo is what ckpt version reports, from the binary's build
// information.
type versionInfo struct {
	// Version is the module version: a release tag, or "(devel)" for a
	// build from a work tree.
	Version string `json:"version"`
	// Revision, Time and Modified describe the VCS commit built from,
	// when the build recorded it.
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

func buildVersion() versionInfo {
	v := versionInfo{Version: "(devel)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// String is the one line ckpt --version prints.
func (v versionInfo) String() string {
	s := "ckpt " + v.Version
	if v.Revision != "" {
		rev := v.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		s += " (" + rev
		if v.Time != "" {
			s += ", " + v.Time
		}
		if v.Modified {
			s += ", modified"
		}
		s += ")"
	}
	return s + " " + v.Go + " " + v.Platform
}

func newVersionCmd(e *env) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "version",
		Short: "Print ckpt's version",
		Long: `Version prints ckpt's module version (a release, or "(devel)" for a build
from a work tree), the commit it was built from when the build recorded it
(its time, and "modified" for uncommitted changes), the Go version and the
platform. ckpt --version prints the same line.`,
		Example: "  ckpt version\n  ckpt version --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			v := buildVersion()
			return e.result(asJSON, v, v.Version, func() { e.printf("%s\n", v) })
		},
	}
	jsonFlag(c, &asJSON, "")
	return c
}

// setVersion makes ckpt --version print what ckpt version does.
func setVersion(root *cobra.Command) {
	root.Version = buildVersion().Version
	root.SetVersionTemplate(fmt.Sprintf("%s\n", buildVersion()))
	root.InitDefaultVersionFlag()
	if f := root.Flags().Lookup("version"); f != nil {
		f.Usage = "print ckpt's version (ckpt version --json for more)"
	}
}
