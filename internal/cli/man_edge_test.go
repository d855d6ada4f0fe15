package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// badRequests returns the lines of a page that roff would take for a
// request other than the macros manPage writes.
func badRequests(page string) []string {
	var bad []string
	for _, l := range strings.Split(page, "\n") {
		if !strings.HasPrefix(l, ".") && !strings.HasPrefix(l, "'") {
			continue
		}
		switch strings.Fields(l + " x")[0] {
		case ".nh", ".TH", ".SH", ".PP", ".RS", ".RE", ".nf", ".fi", ".TP":
		default:
			bad = append(bad, l)
		}
	}
	return bad
}

// A flag's usage of more than one line: each line is text, even one
// starting with a period or an apostrophe (roff would take it for a
// request and drop it).
func TestManFlagUsageLines(t *testing.T) {
	c := &cobra.Command{Use: "sub", Short: "s", Run: func(*cobra.Command, []string) {}}
	c.Flags().String("name", "", "the name;\n'quoted' names and\n.dotted ones too")
	page := string(manPage(c, time.Unix(0, 0), "ckpt v1"))
	if bad := badRequests(page); len(bad) > 0 {
		t.Errorf("lines taken for requests: %q\n%s", bad, page)
	}
}
