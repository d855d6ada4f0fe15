package cli

import (
	"io"
	"strconv"
	"strings"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

// restoreNote ends the help of the commands that read files at a
// revision: how to put one back.
const restoreNote = `

To put a file or directory back in the workspace as it was at REV, run
'ckpt restore REV PATH...' (undoable with 'ckpt undo').`

func newCatCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "cat REV PATH",
		Short: "Print a file as it was at a checkpoint",
		Long: `Cat prints the content of file PATH at checkpoint REV to stdout, byte for byte
(binary files too), verified against its hash as it is read. A symlink prints
its target, as 'git show' does. PATH is relative to the current directory;
a directory is an error ('ckpt ls REV PATH' lists it).` + restoreNote,
		Example: `  ckpt cat HEAD~1 src/main.go
  ckpt cat before-refactor config.json > /tmp/old.json
  ckpt cat HEAD~1 src/main.go | diff - src/main.go`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := e.open(true)
			if err != nil {
				return err
			}
			ps, err := workspacePaths(e, r, args[1:])
			if err != nil {
				return err
			}
			return catFile(e, r, args[0], ps[0])
		},
	}
}

// catFile copies the file at p (workspace-relative) of rev to stdout.
func catFile(e *env, r *ckpt.Repo, rev, p string) error {
	rc, _, err := r.OpenFile(e.ctx, rev, p)
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = io.Copy(e.stdout, rc)
	return err
}

type lsOptions struct {
	json      bool
	recursive bool
}

func newLsCmd(e *env) *cobra.Command {
	o := &lsOptions{}
	c := &cobra.Command{
		Use:   "ls REV [PATH]",
		Short: "List the files of a checkpoint",
		Long: `Ls lists directory PATH (default: the current directory) of checkpoint REV, as
'git ls-tree -l' does: mode, type (file, symlink, dir), short content id, size
("-" for a directory) and the workspace-relative path, one a line. A PATH that
is a file lists that file. With -r it lists every file and symlink below PATH
instead of the directory's entries. With -q it prints only the paths.

Paths with unusual bytes are quoted as git quotes them. --json gives
{path, type, mode, size, id} for each; a path that is not valid UTF-8 is
written in git's quoted form, quotes included ("\"caf\\351\"").` + restoreNote,
		Example: `  ckpt ls HEAD
  ckpt ls -r HEAD~2 src
  ckpt ls before-refactor --json`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error { return runLs(e, o, args[0], args[1:]) },
	}
	c.Flags().BoolVarP(&o.recursive, "recursive", "r", false, "list every file below PATH, not the directory's entries")
	jsonFlag(c, &o.json, "print JSON: [{path, type, mode, size, id}]")
	return c
}

func runLs(e *env, o *lsOptions, rev string, args []string) error {
	r, err := e.open(true)
	if err != nil {
		return err
	}
	if len(args) == 0 {
		args = []string{"."}
	}
	ps, err := workspacePaths(e, r, args)
	if err != nil {
		return err
	}
	es, err := r.ListTree(e.ctx, rev, ps[0], o.recursive)
	if err != nil {
		return err
	}
	return listing(e, o.json, es, "", func(t ckpt.TreeEntry) string { return displayPath(t.Path) }, lsLine)
}

// lsLine is one entry as git ls-tree -l prints it.
func lsLine(t ckpt.TreeEntry) string {
	size := "-"
	if !t.IsDir() {
		size = strconv.FormatInt(t.Size, 10)
	}
	return t.Mode + " " + padRight(t.Type, 7) + " " + t.ID.Short() + " " + padLeft(size, 9) + "\t" + displayPath(t.Path)
}

func padRight(s string, n int) string { return s + strings.Repeat(" ", max(0, n-len(s))) }
func padLeft(s string, n int) string  { return strings.Repeat(" ", max(0, n-len(s))) + s }
