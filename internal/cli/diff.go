package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

type diffOptions struct {
	stat      bool
	nameOnly  bool
	json      bool
	color     string
	binary    bool
	renames   string
	noRenames bool
	exitCode  bool
	noPager   bool
}

func newDiffCmd(e *env) *cobra.Command {
	o := &diffOptions{}
	c := &cobra.Command{
		Use:   "diff [A [B]] [-- PATH...]",
		Short: "Show changes between checkpoints or against the working tree",
		Long: `Diff prints a git-style unified diff (3 lines of context):
  ckpt diff          HEAD against the working tree
  ckpt diff A        checkpoint A against the working tree
  ckpt diff A B      checkpoint A against checkpoint B

It reads like git diff's: on a terminal it is coloured (--color=WHEN:
auto, always, never; auto is off when NO_COLOR is set) and long output goes
through a pager ($CKPT_PAGER, else $PAGER, else less with LESS=FRX;
--no-pager, or CKPT_PAGER=cat, turns it off). Renames are found as git
diff -M finds them, files at least 50% alike (--find-renames=N to change
it, --no-renames for a deletion and an addition). A binary file (a NUL
byte in its first 8000 bytes, as git decides) is one line, "Binary files
a/P and b/P differ"; --binary writes it as a git binary patch instead.

With --binary the diff is written as 'git diff --binary' writes it: 'git
apply' applies it (and 'git apply -R' reverses it), binary files, modes,
symlinks and renames included; 'patch -p1' applies diffs without binary
files and refuses (exit status 1) those with them.

--stat fits the terminal's width ($COLUMNS, else 80). --exit-code exits
with status 1 when there are differences and 0 when there are none;
--quiet (-q) prints nothing and implies it. With either, a failure exits
128 (usage 2, damaged objects 3), as git's do.`,
		Example: `  ckpt diff
  ckpt diff --stat
  ckpt diff HEAD~1 HEAD --name-only
  ckpt diff HEAD -- src/ README.md
  ckpt diff --binary A B | git apply -R
  ckpt diff --no-renames --color=never > changes.diff
  ckpt diff --quiet || echo "the workspace changed"`,
		Args: func(cmd *cobra.Command, args []string) error {
			// At most two revisions; any number of PATHs after --.
			revs := args
			if n := cmd.ArgsLenAtDash(); n >= 0 {
				revs = args[:n]
			}
			if len(revs) > 2 {
				return fmt.Errorf("diff takes at most 2 revisions before --, got %d", len(revs))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var revs, paths []string
			if n := cmd.ArgsLenAtDash(); n >= 0 {
				revs, paths = args[:n], args[n:]
			} else {
				revs = args
			}
			return runDiff(e, o, revs, paths)
		},
	}
	f := c.Flags()
	f.BoolVar(&o.stat, "stat", false, "show a diffstat instead of the patch")
	f.BoolVar(&o.nameOnly, "name-only", false, "show only the names of changed files")
	f.StringVar(&o.color, "color", "auto", "colour the output: `WHEN` is auto (on a terminal), always or never")
	f.Lookup("color").NoOptDefVal = "always"
	f.BoolVar(&o.binary, "binary", false, "write binary files as git binary patches (for git apply), not one line")
	f.StringVarP(&o.renames, "find-renames", "M", "50", "detect renames of files at least `N` alike, as git reads it: 50, 50%, 0.5; -M80 attached")
	f.Lookup("find-renames").NoOptDefVal = "50"
	f.BoolVar(&o.noRenames, "no-renames", false, "show renames as a deletion and an addition")
	f.BoolVar(&o.exitCode, "exit-code", false, "exit with status 1 if there are differences, 0 if none")
	noPagerFlag(c, &o.noPager)
	jsonFlag(c, &o.json, "print JSON: added, modified (with hunks), deleted and renamed paths, and every change")
	return c
}

// noPagerFlag adds --no-pager to a command whose output goes through the
// pager on a terminal.
func noPagerFlag(c *cobra.Command, p *bool) {
	c.Flags().BoolVar(p, "no-pager", false, "do not pipe the output into a pager ($CKPT_PAGER, $PAGER or less)")
}

// renameThreshold parses --find-renames' N as git's parse_rename_score
// does: digits are a fraction unless a '%' follows ("5" and "50" are 50%,
// "100" is 10%, "90%" is 90%, "0.9" is 90%); it returns a percentage.
func renameThreshold(s string) (int, error) {
	num, scale, dot, i := 0, 1, false, 0
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.' && !dot:
			scale, dot = 1, true
			continue
		case c == '%':
			if dot {
				scale *= 100
			} else {
				scale = 100
			}
			i++
		case c >= '0' && c <= '9':
			if scale < 100000 {
				scale *= 10
				num = num*10 + int(c-'0')
			}
			continue
		}
		break
	}
	if s == "" || i != len(s) {
		return 0, usagef("--find-renames=%s: want a similarity as git takes it: 50, 50%%, 0.5", s)
	}
	n := 100
	if num < scale {
		n = num * 100 / scale
	}
	if n == 0 {
		n = 1 // -M0 would pair anything; git's minimum is a score above 0
	}
	return n, nil
}

// attachedRenameScore rewrites diff's -M<n> (git's attached form, -M80,
// -M90%) to --find-renames=<n>: -M's own value is optional, so the flag
// parser would read the digits as more short flags.
func attachedRenameScore(root *cobra.Command, args []string) []string {
	cmd, _, err := root.Find(args)
	if err != nil || cmd.Name() != "diff" || cmd.Parent() != root {
		return args
	}
	out := slices.Clone(args)
	for i, a := range out {
		if a == "--" {
			break
		}
		if len(a) > 2 && strings.HasPrefix(a, "-M") && (a[2] >= '0' && a[2] <= '9' || a[2] == '.') {
			out[i] = "--find-renames=" + a[2:]
		}
	}
	return out
}

func runDiff(e *env, o *diffOptions, revs, paths []string) error {
	err := runDiff1(e, o, revs, paths)
	var es *exitStatusError
	if err != nil && (o.exitCode || e.quiet) && !errors.As(err, &es) {
		// 1 means "there are differences" here: a failure ends with 128,
		// as git's do (usage errors stay 2, damaged objects 3).
		return &failedError{err, ExitDiffError}
	}
	return err
}

func runDiff1(e *env, o *diffOptions, revs, paths []string) error {
	if o.stat && o.nameOnly {
		return usagef("--stat and --name-only cannot be combined")
	}
	color, err := e.colorOn(o.color)
	if err != nil {
		return err
	}
	threshold, err := renameThreshold(o.renames)
	if err != nil {
		return err
	}
	d, err := withRepo(e, o.json, func(r *ckpt.Repo, ctx context.Context) (*ckpt.DiffResult, error) {
		wp, err := workspacePaths(e, r, paths)
		if err != nil {
			return nil, err
		}
		opts := ckpt.DiffOptions{Paths: wp, Renames: !o.noRenames, RenameThreshold: threshold}
		if len(revs) > 0 {
			opts.From = revs[0]
		}
		if len(revs) > 1 {
			opts.To = revs[1]
		}
		return r.Diff(ctx, opts)
	})
	if err != nil {
		return err
	}
	// --quiet (-q) is git's: no output, and the exit status says.
	if !e.quiet {
		if err := writeDiff(e, o, d, color); err != nil {
			return err
		}
	}
	if (o.exitCode || e.quiet) && len(d.Files) > 0 {
		return &exitStatusError{1}
	}
	return nil
}

func writeDiff(e *env, o *diffOptions, d *ckpt.DiffResult, color bool) error {
	if o.json {
		rep, err := d.Report(e.ctx)
		if err != nil {
			return err
		}
		return e.printJSON(struct {
			*ckpt.DiffReport
			Changes []ckpt.FileChange `json:"changes"`
		}{rep, d.Changes()})
	}
	width := e.columns()
	// As git: a script that asks for the exit status gets no pager.
	return e.withPager(o.noPager || o.exitCode, func() error {
		w := bufio.NewWriterSize(e.stdout, 64<<10)
		var err error
		switch {
		case o.nameOnly:
			for _, p := range d.NameOnly() {
				w.WriteString(displayPath(p) + "\n")
			}
		case o.stat:
			err = d.WriteStatWith(e.ctx, w, ckpt.StatOptions{Width: width, Color: color})
		default:
			err = d.WritePatchWith(e.ctx, w, ckpt.PatchOptions{BinaryNotice: !o.binary, Color: color})
		}
		if ferr := w.Flush(); err == nil {
			err = ferr
		}
		return err
	})
}
