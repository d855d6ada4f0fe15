package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newManCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "man DIR",
		Short: "Write ckpt's man pages (section 1) into DIR",
		Long: `Man writes a man page for ckpt and for each of its commands (ckpt.1,
ckpt-save.1, ...) into DIR, creating it, from the same text as --help: for
packagers. $SOURCE_DATE_EPOCH, when set, dates them (reproducible builds).`,
		Example: "  ckpt man /usr/local/share/man/man1\n  man -l man1/ckpt-restore.1",
		Args:    cobra.ExactArgs(1),
		Hidden:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			date := time.Now()
			if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
				sec, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					return usagef("$SOURCE_DATE_EPOCH %q: not a number of seconds", s)
				}
				date = time.Unix(sec, 0)
			}
			if err := os.MkdirAll(args[0], 0o755); err != nil {
				return err
			}
			n, err := writeManTree(cmd.Root(), args[0], date.UTC(), "ckpt "+buildVersion().Version)
			if err != nil {
				return fmt.Errorf("man pages into %s: %w", args[0], err)
			}
			e.sayf("wrote the man pages into %s (%d pages)\n", args[0], n)
			return nil
		},
	}
}

// writeManTree writes the man page of c and of each command below it that
// --help lists into dir, and returns how many it wrote. (Written here
// rather than with cobra's doc package: that one pulls a Markdown parser
// into every ckpt process, whose start it slows.)
func writeManTree(c *cobra.Command, dir string, date time.Time, source string) (int, error) {
	if !c.IsAvailableCommand() && c.HasParent() || c.IsAdditionalHelpTopicCommand() {
		return 0, nil
	}
	n := 0
	for _, sub := range c.Commands() {
		k, err := writeManTree(sub, dir, date, source)
		if err != nil {
			return n, err
		}
		n += k
	}
	name := strings.ReplaceAll(c.CommandPath(), " ", "-") + ".1"
	// Build output for packagers, written again by a rerun: no need for
	// the engine's atomic replace.
	if err := os.WriteFile(filepath.Join(dir, name), manPage(c, date, source), 0o644); err != nil {
		return n, err
	}
	return n + 1, nil
}

// manPage renders one command's man page in roff (man(7) macros).
func manPage(c *cobra.Command, date time.Time, source string) []byte {
	var b bytes.Buffer
	dashed := strings.ReplaceAll(c.CommandPath(), " ", "-")
	fmt.Fprintf(&b, ".nh\n.TH \"CKPT\" \"1\" %s %s \"ckpt manual\"\n", roffQuoted(date.Format("Jan 2006")), roffQuoted(source))
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", roffEscape(dashed), roffEscape(c.Short))
	fmt.Fprintf(&b, ".SH SYNOPSIS\n\\fB%s\\fP\n", roffEscape(c.UseLine()))
	long := c.Long
	if long == "" {
		long = c.Short
	}
	b.WriteString(".SH DESCRIPTION\n")
	roffText(&b, long)
	flagSection(&b, "OPTIONS", c.NonInheritedFlags())
	flagSection(&b, "OPTIONS INHERITED FROM PARENT COMMANDS", c.InheritedFlags())
	if c.Example != "" {
		b.WriteString(".SH EXAMPLE\n.PP\n.RS\n.nf\n")
		for _, l := range strings.Split(strings.TrimRight(c.Example, "\n"), "\n") {
			b.WriteString(roffLine(strings.TrimPrefix(l, "  ")) + "\n")
		}
		b.WriteString(".fi\n.RE\n")
	}
	var see []string
	if c.HasParent() {
		see = append(see, manRef(c.Parent()))
	}
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() && !sub.IsAdditionalHelpTopicCommand() {
			see = append(see, manRef(sub))
		}
	}
	if len(see) > 0 {
		fmt.Fprintf(&b, ".SH SEE ALSO\n%s\n", strings.Join(see, ", "))
	}
	return b.Bytes()
}

func manRef(c *cobra.Command) string {
	return `\fB` + roffEscape(strings.ReplaceAll(c.CommandPath(), " ", "-")) + `\fP(1)`
}

// roffText writes help text: paragraphs filled, indented lines (lists,
// commands, layouts) kept as they are.
func roffText(b *bytes.Buffer, text string) {
	verbatim := false
	para := true
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		switch indented := strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t"); {
		case strings.TrimSpace(l) == "":
			if verbatim {
				b.WriteString(".fi\n.RE\n")
				verbatim = false
			}
			para = true
			continue
		case indented && !verbatim:
			b.WriteString(".PP\n.RS\n.nf\n")
			verbatim, para = true, false
		case !indented && verbatim:
			b.WriteString(".fi\n.RE\n")
			verbatim = false
			para = true
		}
		if para {
			b.WriteString(".PP\n")
			para = false
		}
		if verbatim {
			l = strings.TrimPrefix(strings.TrimPrefix(l, "  "), "\t")
		}
		b.WriteString(roffLine(l) + "\n")
	}
	if verbatim {
		b.WriteString(".fi\n.RE\n")
	}
}

// flagSection lists flags, as --help does.
func flagSection(b *bytes.Buffer, title string, fs *pflag.FlagSet) {
	var items []string
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		varname, usage := pflag.UnquoteUsage(f)
		name := `\fB\-\-` + roffEscape(f.Name) + `\fP`
		if f.Shorthand != "" && f.ShorthandDeprecated == "" {
			name = `\fB\-` + roffEscape(f.Shorthand) + `\fP, ` + name
		}
		if varname != "" {
			name += " \\fI" + roffEscape(varname) + "\\fP"
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "[]" && f.DefValue != "0" {
			usage += " (default " + f.DefValue + ")"
		}
		lines := strings.Split(usage, "\n")
		for i, l := range lines {
			lines[i] = roffLine(l)
		}
		items = append(items, ".TP\n"+name+"\n"+strings.Join(lines, "\n")+"\n")
	})
	if len(items) == 0 {
		return
	}
	b.WriteString(".SH " + title + "\n")
	for _, it := range items {
		b.WriteString(it)
	}
}

// roffLine escapes a line of text, so that one starting with a period or
// an apostrophe is not taken for a request.
func roffLine(s string) string {
	s = roffEscape(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// roffEscape escapes roff's escape character, hyphens (which a terminal
// would otherwise show as typographic hyphens, not minus signs one can
// type) and characters beyond ASCII (as \[uXXXX], which every troff reads
// whatever its input encoding).
func roffEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\e`)
		case r == '-':
			b.WriteString(`\-`)
		case r > 0x7f:
			fmt.Fprintf(&b, `\[u%04X]`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// roffQuoted makes s one quoted argument of a request (\(dq for a quote).
func roffQuoted(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\e`), `"`, `\(dq`) + `"`
}
