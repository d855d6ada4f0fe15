package cli

import "testing"

func TestDescribeArgs(t *testing.T) {
	for use, want := range map[string]string{
		"status":                        "no arguments",
		"tag NAME [REV] | -d NAME":      "a NAME and an optional REV",
		"branch [NAME [REV]] | -d NAME": "an optional NAME and REV",
		"restore REV [PATH...]":         "a REV and any number of PATHs",
		"show [REV | REV:PATH]":         "an optional REV or REV:PATH",
		"clone URL DIR":                 "a URL and a DIR",
		"show ID":                       "an ID",
		"gc [--keep N] [--dry-run]":     "no arguments",
		"run [-m MSG] -- CMD [ARG...]":  "a CMD and any number of ARGs",
		"switch [-c] NAME":              "a NAME",
		"save [-m MSG] [PATH...]":       "any number of PATHs",
		"push REF...":                   "one or more REFs",
	} {
		if got, ok := describeArgs(use); !ok || got != want {
			t.Errorf("describeArgs(%q) = %q, %v, want %q", use, got, ok, want)
		}
	}
	for _, use := range []string{"remote [add NAME URL | list | remove NAME]", "hook AGENT [install|uninstall]"} {
		if got, ok := describeArgs(use); ok {
			t.Errorf("describeArgs(%q) = %q, want none (a literal word)", use, got)
		}
	}
}
