package cli

import (
	"fmt"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

type gcOptions struct {
	keep    int
	buckets [4]int // --keep-hourly, -daily, -weekly, -monthly
	maxAge  string
	maxSize string
	dryRun  bool
	json    bool
	remote  string
	grace   string
}

func newGCCmd(e *env) *cobra.Command {
	o := &gcOptions{}
	c := &cobra.Command{
		Use:   "gc [--keep N] [--keep-daily N ...] [--max-age DUR] [--max-size SIZE] [--dry-run]",
		Short: "Remove old checkpoints and free their space",
		Long: `Gc applies the retention policy. Per branch, a checkpoint is kept if any
policy keeps it: --keep (alias --keep-last) keeps the newest N checkpoints
younger than --max-age; --keep-hourly, --keep-daily, --keep-weekly and
--keep-monthly each keep the newest checkpoint of each of the last N hours,
days, ISO weeks or months that have one, in local time (TZ), however old.
Then the oldest of the kept checkpoints are dropped until the store fits in
--max-size. Defaults come from the store's settings (ckpt config: keep 100,
max_age 30d, max_size 1GiB, keep_hourly..keep_monthly 0). The bucket flags
add to --keep, not replace it: to thin out to one a day, lower --keep too.

Checkpoints named by HEAD, a branch, a tag or a snapshot, and the turns of
sessions, are never removed by count, age or size; expired snapshots (--ttl)
are removed. The operation log keeps the window whose checkpoints are kept,
so undo never leads to a removed checkpoint. Then every object nothing kept
refers to is deleted and the store is compacted. The output counts what
each policy kept; --json says why each kept checkpoint stays (kept_by).

Gc also runs by itself after a save once the store is well over its limits
(without compacting, so it stays quick). When what it must keep takes more
than max_size on its own (a large tree), it removes nothing for size, keeps
the history by count and age, and the save warns: raise max_size.

With --remote NAME it cleans a remote instead: packs no ref and no session
reaches are marked, and deleted by a later gc --remote once --grace (default
1h) has passed and still nothing reaches them; pushes stop counting on marked
packs at once, so a concurrent push never loses what it just referenced.
Packs a push cut short left are deleted once older than --grace. Expired
snapshots are removed from the remote.`,
		Example: `  ckpt gc --dry-run            # what would go
  ckpt gc
  ckpt gc --keep 20 --max-age 7d
  ckpt gc --keep 10 --keep-hourly 24 --keep-daily 7 --dry-run
  ckpt gc --keep-last 5 --keep-weekly 4 --keep-monthly 6 --json
  ckpt gc --max-size 200MiB --json
  ckpt gc --remote origin --dry-run`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runGC(e, o, cmd) },
	}
	c.Flags().IntVar(&o.keep, "keep", 0, "keep the newest `N` checkpoints per branch (default: setting keep)")
	c.Flags().IntVar(&o.keep, "keep-last", 0, "same as --keep `N` (restic's name)")
	for i, b := range gcBuckets {
		c.Flags().IntVar(&o.buckets[i], "keep-"+b.flag, 0, fmt.Sprintf("keep the newest checkpoint of each of the last `N` %s (default: setting keep_%s)", b.unit, b.flag))
	}
	c.Flags().StringVar(&o.maxAge, "max-age", "", "--keep keeps none older than `DUR` (buckets reach past it), e.g. 7d, 12h; 0: no limit (default: setting max_age)")
	c.Flags().StringVar(&o.maxSize, "max-size", "", "keep the store under `SIZE`, e.g. 500MiB; 0: no limit (default: setting max_size)")
	c.Flags().BoolVarP(&o.dryRun, "dry-run", "n", false, "show what would be removed, remove nothing")
	c.Flags().StringVar(&o.remote, "remote", "", "clean the remote `NAME` instead of the store")
	c.Flags().StringVar(&o.grace, "grace", "1h", "with --remote: wait `DUR` between marking a pack and deleting it")
	jsonFlag(c, &o.json, "print the result as JSON")
	return c
}

func runGC(e *env, o *gcOptions, cmd *cobra.Command) error {
	r, err := e.open(o.json)
	if err != nil {
		return err
	}
	if o.remote != "" || cmd.Flags().Changed("grace") {
		return runRemoteGC(e, r, o, cmd)
	}
	ret := r.Config().Retention()
	if cmd.Flags().Changed("keep") && cmd.Flags().Changed("keep-last") {
		return usagef("--keep and --keep-last are the same: give one")
	}
	for _, f := range []string{"keep", "keep-last"} {
		if cmd.Flags().Changed(f) {
			if o.keep < 0 {
				return usagef("--%s %d: want a number >= 0", f, o.keep)
			}
			ret.Keep = o.keep
		}
	}
	for i, b := range gcBuckets {
		if cmd.Flags().Changed("keep-" + b.flag) {
			if o.buckets[i] < 0 {
				return usagef("--keep-%s %d: want a number >= 0", b.flag, o.buckets[i])
			}
			*b.field(&ret) = o.buckets[i]
		}
	}
	if o.maxAge != "" {
		if ret.MaxAge, err = ckpt.ParseDuration(o.maxAge); err != nil {
			return usagef("--max-age: %v", err)
		}
	}
	if o.maxSize != "" {
		if ret.MaxSize, err = ckpt.ParseSize(o.maxSize); err != nil {
			return usagef("--max-size: %v", err)
		}
	}
	res, err := r.GC(e.ctx, ckpt.GCOptions{Retention: &ret, DryRun: o.dryRun})
	if err != nil {
		return err
	}
	return e.result(o.json, res, "", func() { printGC(e, res) })
}

func printGC(e *env, res *ckpt.GCResult) {
	verb := "removed"
	if res.DryRun {
		verb = "would remove"
	}
	for _, c := range res.Removed {
		e.printf("%s %s\n", verb, listLine(c))
	}
	for _, s := range res.ExpiredSnapshots {
		e.printf("%s expired snapshot %s\n", verb, s)
	}
	for _, s := range res.Sessions {
		e.printf("%s session %s (idle for longer than %s)\n", verb, s, ckpt.FormatDuration(res.Retention.MaxAge))
	}
	e.printf("%s %d checkpoint(s), %d object(s), %s; kept %d checkpoint(s)", verb, len(res.Removed), res.Objects, ckpt.HumanSize(res.Freed), res.Kept)
	if res.Ops > 0 {
		e.printf("; undo history before the oldest kept step dropped (%d operation(s))", res.Ops)
	}
	e.printf("\n")
	printKeptBy(e, res)
	if !res.DryRun {
		e.printf("store size %s -> %s\n", ckpt.HumanSize(res.SizeBefore), ckpt.HumanSize(res.SizeAfter))
	}
}

func runRemoteGC(e *env, r *ckpt.Repo, o *gcOptions, cmd *cobra.Command) error {
	if o.remote == "" {
		return usagef("--grace goes with --remote NAME")
	}
	for _, f := range []string{"keep", "keep-last", "keep-hourly", "keep-daily", "keep-weekly", "keep-monthly", "max-age", "max-size"} {
		if cmd.Flags().Changed(f) {
			return usagef("--%s is for the store; a remote keeps what its refs reach (gc --remote takes --grace and --dry-run)", f)
		}
	}
	grace, err := ckpt.ParseDuration(o.grace)
	if err != nil || grace <= 0 {
		return usagef("--grace %q: want a duration above 0, e.g. 1h, 30m", o.grace)
	}
	res, err := r.GCRemote(e.ctx, o.remote, ckpt.RemoteGCOptions{Grace: grace, DryRun: o.dryRun})
	if err != nil {
		return err
	}
	return e.result(o.json, res, "", func() {
		verb := ""
		if res.DryRun {
			verb = "would "
		}
		e.sayf("remote %s: %sdelete %d pack(s) (%s), %smark %d unreachable pack(s) for deletion after %s, %sremove %d expired snapshot(s)\n",
			res.Remote, verb, len(res.Deleted)+len(res.Orphans), ckpt.HumanSize(res.Freed), verb, len(res.Marked), ckpt.FormatDuration(grace), verb, len(res.ExpiredSnapshots))
		if len(res.Unmarked) > 0 {
			e.sayf("%d marked pack(s) are reachable again and stay\n", len(res.Unmarked))
		}
	})
}

// gcBuckets are the bucket policies: flag keep-FLAG, setting keep_FLAG.
var gcBuckets = []struct {
	flag, unit, reason string
	field              func(*ckpt.Retention) *int
}{
	{"hourly", "hours", ckpt.KeptByHourly, func(r *ckpt.Retention) *int { return &r.KeepHourly }},
	{"daily", "days", ckpt.KeptByDaily, func(r *ckpt.Retention) *int { return &r.KeepDaily }},
	{"weekly", "ISO weeks", ckpt.KeptByWeekly, func(r *ckpt.Retention) *int { return &r.KeepWeekly }},
	{"monthly", "months", ckpt.KeptByMonthly, func(r *ckpt.Retention) *int { return &r.KeepMonthly }},
}

// printKeptBy writes a line per reason gc kept checkpoints for: each
// policy and each kind of ref (a checkpoint kept for several reasons
// counts in each), and how many the policies kept but --max-size dropped.
func printKeptBy(e *env, res *ckpt.GCResult) {
	n := map[string]int{}
	for _, k := range res.KeptCheckpoints {
		for _, why := range k.KeptBy {
			n[why]++
		}
	}
	ret := res.Retention
	last := fmt.Sprintf("--keep %d", ret.Keep)
	if ret.MaxAge > 0 {
		last += " (younger than " + ckpt.FormatDuration(ret.MaxAge) + ")"
	}
	reasons := []struct{ why, label string }{
		{ckpt.KeptByLast, last},
	}
	for _, b := range gcBuckets {
		reasons = append(reasons, struct{ why, label string }{b.reason, fmt.Sprintf("--keep-%s %d", b.flag, *b.field(&ret))})
	}
	reasons = append(reasons, []struct{ why, label string }{
		{ckpt.KeptByHead, "HEAD"}, {ckpt.KeptByBranch, "a branch"}, {ckpt.KeptByTag, "a tag"},
		{ckpt.KeptBySnapshot, "a snapshot"}, {ckpt.KeptByRemote, "a remote ref"}, {ckpt.KeptBySession, "a session"},
	}...)
	for _, r := range reasons {
		if n[r.why] > 0 {
			e.printf("  kept by %s: %d\n", r.label, n[r.why])
		}
	}
	if res.DroppedForSize > 0 {
		verb := "removed"
		if res.DryRun {
			verb = "would remove"
		}
		e.printf("  %s %d checkpoint(s) a policy keeps, to fit in --max-size %s\n", verb, res.DroppedForSize, ckpt.HumanSize(ret.MaxSize))
	}
	if res.SizeUnreachable {
		e.printf("  what gc must keep (HEAD, branch tips, tags, snapshots, sessions) takes more than --max-size %s on its own\n", ckpt.HumanSize(ret.MaxSize))
	}
}
