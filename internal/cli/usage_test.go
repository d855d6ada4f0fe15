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

// TestRenameThreshold: --find-renames=N and -M<n> read N as git's
// parse_rename_score does.
func TestRenameThreshold(t *testing.T) {
	for in, want := range map[string]int{
		"50": 50, "5": 50, "100": 10, "90%": 90, "0.9": 90, ".5": 50, "100%": 100,
		"1": 10, "05": 5, "0": 1, "0%": 1, "150%": 100, "99": 99, "12.5%": 12,
	} {
		if got, err := renameThreshold(in); err != nil || got != want {
			t.Errorf("renameThreshold(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "x", "50x", "5%0", "1..2", "-5"} {
		if _, err := renameThreshold(in); err == nil {
			t.Errorf("renameThreshold(%q): no error", in)
		}
	}
}
