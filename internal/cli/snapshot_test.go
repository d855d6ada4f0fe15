package cli

import (
	"regexp"

	"github.com/rogpeppe/go-internal/testscript"
)

// envmatch NAME REGEXP: set $NAME to the first group REGEXP (multi-line
// mode) matches in the last command's stdout.
func cmdEnvMatch(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: envmatch NAME REGEXP")
	}
	re, err := regexp.Compile("(?m)" + args[1])
	ts.Check(err)
	m := re.FindStringSubmatch(ts.ReadFile("stdout"))
	if len(m) < 2 {
		ts.Fatalf("stdout does not match %s", args[1])
	}
	ts.Setenv(args[0], m[1])
}
