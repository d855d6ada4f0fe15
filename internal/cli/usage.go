package cli

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/spf13/cobra"
)

// Usage errors in ckpt's voice: what the command expected, its usage line
// and where its help is, instead of cobra's "accepts at most 2 arg(s)".

// cobraArgCount matches cobra's own argument-count messages (ExactArgs,
// MinimumNArgs, MaximumNArgs, RangeArgs); cobraUnknown its NoArgs and
// unknown-command ones.
var (
	cobraArgCount = regexp.MustCompile(`arg\(s\)`)
	cobraUnknown  = regexp.MustCompile(`^unknown command "(.*)" for "`)
)

// cmdName is a command's path without the leading "ckpt ".
func cmdName(c *cobra.Command) string {
	return strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")
}

// usageLine is the command's synopsis: "ckpt tag NAME [REV] | -d NAME".
func usageLine(c *cobra.Command) string {
	if c.HasParent() {
		return c.Parent().CommandPath() + " " + c.Use
	}
	return c.Use + " COMMAND"
}

// helpHint says where the command's help is.
func helpHint(c *cobra.Command) string { return "run '" + c.CommandPath() + " --help'" }

// cmdUsageError is a usage error (exit 2) that prints c's usage line and
// a hint after msg.
func cmdUsageError(c *cobra.Command, err error, hint string) error {
	if hint == "" {
		hint = helpHint(c)
	}
	return &hintError{err: &usageError{err: err, usage: usageLine(c)}, hint: hint}
}

// argsError rewrites a failed argument check of c.
func argsError(c *cobra.Command, args []string, err error) error {
	if m := cobraUnknown.FindStringSubmatch(err.Error()); m != nil && c.HasSubCommands() {
		return unknownCommand(c, m[1])
	}
	if !cobraArgCount.MatchString(err.Error()) && cobraUnknown.FindStringSubmatch(err.Error()) == nil {
		// The command's own check: its message says what it wants.
		return cmdUsageError(c, err, "")
	}
	got := "none"
	switch n := len(args); n {
	case 0:
	case 1:
		got = "1 argument"
	default:
		got = fmt.Sprintf("%d arguments", n)
	}
	if want, ok := describeArgs(c.Use); ok {
		return cmdUsageError(c, fmt.Errorf("%s takes %s, got %s", cmdName(c), want, got), "")
	}
	return cmdUsageError(c, fmt.Errorf("%s: wrong number of arguments, got %s", cmdName(c), got), "")
}

// unknownCommand is the error for `ckpt [CMD] NAME` where NAME is no
// command of c, suggesting the nearest commands.
func unknownCommand(c *cobra.Command, name string) error {
	var err error
	if c.HasParent() {
		err = fmt.Errorf("%s has no command %q", cmdName(c), name)
	} else {
		err = fmt.Errorf("unknown command %q", name)
	}
	hint := helpHint(c) + " for the list of commands"
	if s := suggest(c, name); len(s) > 0 {
		for i := range s {
			s[i] = "'" + c.CommandPath() + " " + s[i] + "'"
		}
		hint = "did you mean " + joinOr(s) + "? " + hint
	}
	return &hintError{err: &usageError{err: err}, hint: hint}
}

// suggest returns c's subcommands nearest to name: those one edit away
// (or that name begins), else two.
func suggest(c *cobra.Command, name string) []string {
	for _, d := range []int{1, 2} {
		c.SuggestionsMinimumDistance = d
		if s := c.SuggestionsFor(name); len(s) > 0 {
			return s
		}
	}
	return nil
}

func joinOr(s []string) string {
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// describeArgs says in words what a command's Use takes: "tag NAME [REV]
// | -d NAME" takes "a NAME and an optional REV". Flags are left out; only
// the first form counts. It reports false for a Use it cannot read (a
// literal word, say).
func describeArgs(use string) (string, bool) {
	fields := strings.Fields(use)
	if len(fields) == 0 {
		return "", false
	}
	var parts []string
	for _, g := range groups(fields[1:]) {
		if g == "|" {
			break // only the first form
		}
		if strings.HasPrefix(g, "-") || strings.HasPrefix(g, "[-") || g == "[flags]" {
			continue
		}
		optional := strings.HasPrefix(g, "[")
		many := strings.HasSuffix(strings.TrimRight(g, "]"), "...")
		var names []string
		for _, w := range strings.FieldsFunc(g, func(r rune) bool { return r == '[' || r == ']' || r == ' ' || r == '.' || r == '|' }) {
			if strings.ToUpper(w) != w || !unicode.IsLetter(rune(w[0])) {
				return "", false
			}
			names = append(names, w)
		}
		join := joinAnd
		if strings.Contains(g, "|") {
			join = joinOr // [REV | REV:PATH]
		}
		switch {
		case len(names) == 0:
			return "", false
		case many && optional:
			parts = append(parts, "any number of "+names[0]+"s")
		case many:
			parts = append(parts, "one or more "+names[0]+"s")
		case optional:
			parts = append(parts, "an optional "+join(names))
		case len(names) > 1:
			return "", false
		default:
			parts = append(parts, article(names[0])+" "+names[0])
		}
	}
	if len(parts) == 0 {
		return "no arguments", true
	}
	return joinAnd(parts), true
}

// groups splits fields into arguments, a bracketed one whole.
func groups(fields []string) []string {
	var out []string
	depth := 0
	for _, f := range fields {
		if depth > 0 {
			out[len(out)-1] += " " + f
		} else {
			out = append(out, f)
		}
		depth += strings.Count(f, "[") - strings.Count(f, "]")
	}
	return out
}

func joinAnd(s []string) string {
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// article is "a" or "an" for a name spelled out: an ID, a URL.
func article(w string) string {
	if strings.ContainsRune("AEIO", rune(w[0])) {
		return "an"
	}
	return "a"
}
