package cli

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

func newRemoteCmd(e *env) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "remote [add NAME URL | list | remove NAME]",
		Short: "Configure remotes: S3 buckets or directories that keep checkpoints",
		Long: `A remote keeps checkpoints where they outlive this machine: an S3-compatible
bucket (AWS S3, MinIO, Versity, R2, ...) or a directory (local or on a network
file system). 'ckpt push' sends checkpoints there, 'ckpt pull' brings them
back, and 'ckpt clone' makes a workspace from one on another machine.

URLs:
  s3://BUCKET[/PREFIX][?endpoint=URL&region=REGION]
  file:///ABSOLUTE/PATH   (or just /ABSOLUTE/PATH)

S3 credentials, region and endpoint come from the standard AWS environment:
AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or ~/.aws/credentials and
AWS_PROFILE), AWS_REGION, AWS_ENDPOINT_URL. ckpt never stores them and never
prints them. The bucket must exist.

With --recipient (an age public key, age1..., or a file of them) the remote is
encrypted on the first push: file contents, paths, messages and ref names are
unreadable to whoever holds the bucket. Opening it on another machine needs an
age identity: --identity FILE, or CKPT_AGE_IDENTITY.

What never leaves the store: ignored files (even those a checkpoint keeps
because an agent's edit tool changed them), and conversations — prompts,
replies, tool output; turn checkpoints go without the prompt in their
message — unless --with-sessions. Messages and sessions are redacted of
secrets (API keys, tokens, passwords) before they leave.`,
		Example: `  ckpt remote add origin s3://team-ckpt/alice/project
  ckpt remote add minio 's3://ckpt/project?endpoint=http://127.0.0.1:9000'
  ckpt remote add backup file:///mnt/nfs/ckpt/project
  ckpt remote add origin s3://team-ckpt/p --recipient age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p
  ckpt remote list
  ckpt remote remove backup`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return listRemotes(e, asJSON)
		},
	}
	jsonFlag(c, &asJSON, "")
	c.AddCommand(newRemoteAddCmd(e), newRemoteListCmd(e), newRemoteRemoveCmd(e))
	return c
}

func listRemotes(e *env, asJSON bool) error {
	r, err := e.open(asJSON)
	if err != nil {
		return err
	}
	all, err := r.Remotes(e.ctx)
	if err != nil {
		return err
	}
	return listing(e, asJSON, all, "no remotes (add one: ckpt remote add origin s3://BUCKET/PREFIX)",
		func(rc ckpt.RemoteConfig) string { return rc.Name },
		func(rc ckpt.RemoteConfig) string {
			var notes []string
			if len(rc.Recipients) > 0 {
				notes = append(notes, "encrypted")
			}
			if rc.WithSessions {
				notes = append(notes, "with sessions")
			}
			if rc.Continuous {
				notes = append(notes, "continuous")
			}
			s := rc.Name + "\t" + rc.URL
			if len(notes) > 0 {
				s += "\t(" + strings.Join(notes, ", ") + ")"
			}
			return s
		})
}

func newRemoteListCmd(e *env) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:     "list",
		Short:   "List the remotes",
		Example: `  ckpt remote list --json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return listRemotes(e, asJSON)
		},
	}
	jsonFlag(c, &asJSON, "")
	return c
}

func newRemoteAddCmd(e *env) *cobra.Command {
	var (
		asJSON bool
		rc     ckpt.RemoteConfig
	)
	c := &cobra.Command{
		Use:   "add NAME URL",
		Short: "Add a remote (nothing is sent until ckpt push)",
		Long: `Add names a remote. It checks the URL but does not contact the remote; the
first push creates ckpt's layout under the URL's prefix (the bucket or directory
must exist). See 'ckpt remote --help' for URLs, credentials and encryption.`,
		Example: `  ckpt remote add origin s3://team-ckpt/alice/project
  ckpt remote add backup /mnt/nfs/ckpt/project --recipient ~/.config/age/recipients.txt`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := e.open(asJSON)
			if err != nil {
				return err
			}
			rc.Name, rc.URL = args[0], args[1]
			if strings.HasPrefix(rc.URL, "/") || strings.HasPrefix(rc.URL, ".") {
				if abs, err := filepath.Abs(rc.URL); err == nil {
					rc.URL = abs
				}
			}
			out, err := r.AddRemote(e.ctx, rc)
			if err != nil {
				return err
			}
			return e.result(asJSON, out, out.Name, func() {
				e.printf("added remote %s (%s)\n", out.Name, out.URL)
			})
		},
	}
	c.Flags().StringArrayVar(&rc.Recipients, "recipient", nil, "encrypt to this age `RECIPIENT` (age1... or a file of them); repeatable")
	c.Flags().StringArrayVar(&rc.Identities, "identity", nil, "age identity `FILE` that opens the remote's key; repeatable")
	c.Flags().BoolVar(&rc.WithSessions, "with-sessions", false, "every push also sends the sessions: prompts, replies, tool output (redacted of secrets)")
	c.Flags().BoolVar(&rc.Continuous, "continuous", false, "push every checkpoint in the background while 'ckpt watch' runs")
	jsonFlag(c, &asJSON, "")
	return c
}

func newRemoteRemoveCmd(e *env) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:     "remove NAME",
		Aliases: []string{"rm"},
		Short:   "Forget a remote (what it holds is left there)",
		Example: `  ckpt remote remove backup`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := e.open(asJSON)
			if err != nil {
				return err
			}
			if err := r.RemoveRemote(e.ctx, args[0]); err != nil {
				return err
			}
			return e.result(asJSON, deleted{Deleted: args[0], Kind: "remote"}, "", func() {
				e.printf("removed remote %s (its checkpoints stay on the remote)\n", args[0])
			})
		},
	}
	jsonFlag(c, &asJSON, "")
	return c
}

func newPushCmd(e *env) *cobra.Command {
	var (
		asJSON bool
		opts   ckpt.PushOptions
	)
	c := &cobra.Command{
		Use:   "push [REMOTE] [REF...]",
		Short: "Send checkpoints to a remote",
		Long: `Push uploads what the remote lacks of the checkpoints that REFs name (branches,
tags, snapshots; HEAD means the current branch), then moves the remote's refs.
Without REFs it pushes every branch, tag and snapshot, and HEAD. REMOTE defaults
to the only remote, or origin.

Only what is new goes up: a push after a turn that changed 20 files uploads
about those 20 files. A push cut short (a crash, a lost connection) leaves the
remote as it was; the next push goes on from there.

A remote branch moves only forward: if it holds checkpoints this store does
not (another machine pushed), the push refuses it — pull first, or --force. A
tag or snapshot the remote has at another checkpoint is likewise refused.`,
		Example: `  ckpt push
  ckpt push origin main
  ckpt push backup --dry-run
  ckpt push --force origin main`,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := e.open(asJSON)
			if err != nil {
				return err
			}
			name, revs, err := remoteArgs(e, r, args)
			if err != nil {
				return err
			}
			opts.Revs = revs
			res, err := r.Push(e.ctx, name, opts)
			e.doneProgress()
			if res == nil {
				return err
			}
			if perr := e.result(asJSON, res, "", func() { printPush(e, res) }); perr != nil {
				return perr
			}
			return err
		},
	}
	c.Flags().BoolVarP(&opts.Force, "force", "f", false, "move remote refs that are not behind (replaces what another machine pushed)")
	c.Flags().BoolVarP(&opts.DryRun, "dry-run", "n", false, "say what would be uploaded and moved; change nothing")
	c.Flags().BoolVar(&opts.WithSessions, "with-sessions", false, "also send the sessions: prompts, replies, tool output (redacted of secrets)")
	c.Flags().BoolVar(&opts.Full, "full", false, "check every object of the history against the remote (after ckpt fsck --remote --repair)")
	jsonFlag(c, &asJSON, "")
	return c
}

// remoteArgs splits [REMOTE] [REF...]: the first argument is a remote if
// one has that name.
func remoteArgs(e *env, r *ckpt.Repo, args []string) (string, []string, error) {
	if len(args) == 0 {
		return "", nil, nil
	}
	all, err := r.Remotes(e.ctx)
	if err != nil {
		return "", nil, err
	}
	if slices.ContainsFunc(all, func(rc ckpt.RemoteConfig) bool { return rc.Name == args[0] }) {
		return args[0], args[1:], nil
	}
	return "", args, nil
}

func printPush(e *env, res *ckpt.PushResult) {
	verb := "pushed"
	if res.DryRun {
		verb = "would push"
	}
	if res.Objects == 0 {
		e.sayf("%s: nothing to upload\n", res.Remote)
	} else {
		e.sayf("%s %d checkpoint(s), %d object(s), %s to %s\n", verb, res.Checkpoints, res.Objects, ckpt.HumanSize(res.Bytes), res.URL)
	}
	for _, ref := range res.Refs {
		switch ref.Status {
		case "up-to-date":
			if !e.quiet {
				e.printf("  = %-24s %s (up to date)\n", refName(ref.Name), ref.New.Short())
			}
		case "new":
			e.printf("  * %-24s %s (new)\n", refName(ref.Name), ref.New.Short())
		case "updated":
			e.printf("    %-24s %s..%s\n", refName(ref.Name), ref.Old.Short(), ref.New.Short())
		case "forced":
			e.printf("  + %-24s %s...%s (forced)\n", refName(ref.Name), ref.Old.Short(), ref.New.Short())
		case "rejected":
			e.printf("  ! %-24s rejected: %s\n", refName(ref.Name), ref.Reason)
		}
	}
	if res.Retries > 0 {
		e.warnf("note: %d request(s) to the remote were retried", res.Retries)
	}
}

func newPullCmd(e *env) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "pull [REMOTE]",
		Short: "Bring a remote's checkpoints into this store",
		Long: `Pull downloads what this store lacks of the checkpoints the remote's refs name,
and records those refs as REMOTE/NAME (ckpt restore origin/main, ckpt diff
origin/main). Branches, tags and snapshots this store does not have are
created; branches the remote has moved forward follow, except the current
branch: the workspace is never changed by a pull (ckpt restore REMOTE/BRANCH
brings it there, undoably).`,
		Example: `  ckpt pull
  ckpt pull backup --json
  ckpt restore origin/main`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := e.open(asJSON)
			if err != nil {
				return err
			}
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			res, err := r.Pull(e.ctx, name)
			e.doneProgress()
			if err != nil {
				return err
			}
			return e.result(asJSON, res, "", func() { printPull(e, res) })
		},
	}
	jsonFlag(c, &asJSON, "")
	return c
}

func printPull(e *env, res *ckpt.PullResult) {
	for _, s := range res.Skipped {
		e.warnf("warning: the remote's %s; left out", s)
	}
	if res.Checkpoints == 0 {
		e.sayf("%s: nothing new\n", res.Remote)
	} else {
		e.sayf("pulled %d checkpoint(s), %d object(s), %s from %s\n", res.Checkpoints, res.Objects, ckpt.HumanSize(res.Bytes), res.URL)
	}
	for _, ref := range res.Refs {
		short := res.Remote + "/" + trimRefKind(ref.Name)
		switch ref.Status {
		case "new":
			e.printf("  * %-24s %s (new)\n", refName(ref.Name), ref.Remote.Short())
		case "updated":
			e.printf("    %-24s %s..%s\n", refName(ref.Name), ref.Local.Short(), ref.Remote.Short())
		case "kept":
			e.printf("  ! %-24s kept at %s (the remote has it at %s: %s)\n", refName(ref.Name), ref.Local.Short(), ref.Remote.Short(), short)
		case "behind":
			e.printf("  > %-24s behind %s: ckpt restore %s brings the workspace there\n", refName(ref.Name), short, short)
		case "diverged":
			e.printf("  ! %-24s diverged from %s (ckpt ancestor %s %s)\n", refName(ref.Name), short, trimRefKind(ref.Name), short)
		}
	}
}

// refName shows a ref the way listings do: main, tag: v1, snapshot: s.
func refName(name string) string {
	if l := ckpt.RefLabel(name); l != "" {
		return l
	}
	return name
}

func trimRefKind(name string) string {
	for _, p := range []string{"branches/", "tags/", "snapshots/"} {
		if strings.HasPrefix(name, p) {
			return strings.TrimPrefix(name, p)
		}
	}
	return name
}

func newCloneCmd(e *env) *cobra.Command {
	var (
		asJSON bool
		opts   ckpt.CloneOptions
	)
	c := &cobra.Command{
		Use:   "clone URL DIR",
		Short: "Make a workspace from a remote (on a fresh machine)",
		Long: `Clone makes DIR (new or empty) a workspace with its own store, adds URL as the
remote origin, pulls everything, and restores the remote's HEAD branch (or
--rev) into DIR: contents, modes and symlinks exactly as pushed, verified.`,
		Example: `  ckpt clone s3://team-ckpt/alice/project project
  ckpt clone file:///mnt/nfs/ckpt/project /tmp/p --rev green-tests
  CKPT_AGE_IDENTITY=~/.config/age/key.txt ckpt clone s3://team-ckpt/p p`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			url, dir := args[0], args[1]
			if e.dir != "" && !filepath.IsAbs(dir) {
				dir = filepath.Join(e.dir, dir)
			}
			if strings.HasPrefix(url, "/") || strings.HasPrefix(url, ".") {
				if abs, err := filepath.Abs(url); err == nil {
					url = abs
				}
			}
			sopts, err := e.storeOptions()
			if err != nil {
				return err
			}
			undo, err := ckpt.PrepareCloneDir(url, dir, sopts.Store)
			if err != nil {
				return err
			}
			e.workspace = dir
			r, err := e.open(asJSON)
			if err != nil {
				undo(nil)
				return err
			}
			for i, p := range opts.Identities {
				if abs, err := filepath.Abs(p); err == nil && !strings.HasPrefix(p, "AGE-SECRET-KEY-") {
					opts.Identities[i] = abs
				}
			}
			res, err := r.CloneFrom(e.ctx, url, opts)
			e.doneProgress()
			if err != nil {
				// Nothing half-made stays: a retry starts afresh.
				e.repo = nil
				undo(r)
				return err
			}
			return e.result(asJSON, res, "", func() {
				printPull(e, res.Pull)
				if res.Restore == nil {
					e.sayf("the remote holds no checkpoints: %s is empty\n", dir)
					return
				}
				e.sayf("restored %s (%s) into %s: %d file(s)\n", res.Rev, res.Restore.Target.ID.Short(), dir, len(res.Restore.Actions))
			})
		},
	}
	c.Flags().StringArrayVar(&opts.Identities, "identity", nil, "age identity `FILE` that opens an encrypted remote; repeatable")
	c.Flags().StringVar(&opts.Rev, "rev", "", "restore this branch, tag or snapshot (default: the remote's HEAD branch)")
	c.Flags().StringVar(&opts.Name, "name", "origin", "the remote's `NAME` in the new store")
	jsonFlag(c, &asJSON, "")
	return c
}
