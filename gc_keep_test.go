package ckpt

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the zones below, whatever the machine has

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/store"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// oracleKeeps is retentionKeeps written the obvious way, from the policy's
// words: per branch, Keep takes the first Keep checkpoints of the list
// that are younger than MaxAge; a bucket policy groups the branch's
// checkpoints by the hour, day, ISO week or month of their local time
// (formatted as text), orders the groups by their newest checkpoint (the
// earlier in the list among equal times) and keeps the newest checkpoint
// of each of the first n groups.
func oracleKeeps(recs []*store.Record, ret Retention, now time.Time, loc *time.Location) map[ID][]string {
	out := map[ID][]string{}
	branches := map[string][]int{} // indexes into recs
	var order []string
	for i, rec := range recs {
		if _, ok := branches[rec.Branch]; !ok {
			order = append(order, rec.Branch)
		}
		branches[rec.Branch] = append(branches[rec.Branch], i)
	}
	policies := []struct {
		name string
		n    int
		key  func(time.Time) string
	}{
		{KeptByHourly, ret.KeepHourly, func(t time.Time) string { return t.Format("2006-01-02 15") }},
		{KeptByDaily, ret.KeepDaily, func(t time.Time) string { return t.Format("2006-01-02") }},
		{KeptByWeekly, ret.KeepWeekly, func(t time.Time) string { y, w := t.ISOWeek(); return fmt.Sprintf("%d-W%02d", y, w) }},
		{KeptByMonthly, ret.KeepMonthly, func(t time.Time) string { return t.Format("2006-01") }},
	}
	for _, b := range order {
		idx := branches[b]
		kept := 0
		for _, i := range idx {
			if kept < ret.Keep && (ret.MaxAge == 0 || now.Sub(recs[i].Time) <= ret.MaxAge) {
				kept++
				out[recs[i].ID] = append(out[recs[i].ID], KeptByLast)
			}
		}
		for _, p := range policies {
			newest := map[string]int{} // bucket -> index of its newest checkpoint
			for _, i := range idx {
				k := p.key(recs[i].Time.In(loc))
				j, ok := newest[k]
				if !ok || recs[i].Time.After(recs[j].Time) {
					newest[k] = i
				}
			}
			var heads []int
			for _, i := range newest {
				heads = append(heads, i)
			}
			slices.SortFunc(heads, func(x, y int) int {
				if c := recs[y].Time.Compare(recs[x].Time); c != 0 {
					return c
				}
				return x - y
			})
			for _, i := range heads[:min(p.n, len(heads))] {
				out[recs[i].ID] = append(out[recs[i].ID], p.name)
			}
		}
	}
	return out
}

func testRecord(n int, branch string, t time.Time) *store.Record {
	var id ID
	id[0], id[1] = byte(n>>8), byte(n)
	return &store.Record{ID: id, Checkpoint: &object.Checkpoint{Branch: branch, Time: t.UTC()}}
}

// keptString writes which policies keep which checkpoints, by index.
func keptString(recs []*store.Record, why func(ID) []string) string {
	var b strings.Builder
	for i, rec := range recs {
		if w := why(rec.ID); len(w) > 0 {
			fmt.Fprintf(&b, "%d:%s ", i, strings.Join(w, ","))
		}
	}
	return strings.TrimSpace(b.String())
}

// TestPropertyRetentionBuckets: on random checkpoint times (clustered in
// the same minutes, hours and days, some equal, around DST changes and
// year ends, over one or two branches, listed in an order that is mostly
// but not always by time) and random policies in several zones,
// retentionKeeps keeps exactly what the oracle keeps, for the same
// reasons.
func TestPropertyRetentionBuckets(t *testing.T) {
	zones := []*time.Location{time.UTC, mustZone(t, "Europe/Berlin"), mustZone(t, "America/New_York"),
		mustZone(t, "Australia/Lord_Howe"), mustZone(t, "Asia/Kolkata")}
	starts := []time.Time{
		time.Date(2026, 3, 28, 20, 0, 0, 0, time.UTC),  // Europe's spring DST change
		time.Date(2026, 10, 24, 20, 0, 0, 0, time.UTC), // and autumn
		time.Date(2026, 12, 28, 0, 0, 0, 0, time.UTC),  // ISO week 53, year end
		time.Date(2026, 4, 4, 12, 0, 0, 0, time.UTC),   // Lord Howe's half-hour change
	}
	for i := 0; i < testutil.Trials(300); i++ {
		rnd := rand.New(rand.NewPCG(uint64(i), 7))
		loc := zones[rnd.IntN(len(zones))]
		t0 := starts[rnd.IntN(len(starts))]
		scale := []time.Duration{time.Minute, 10 * time.Minute, time.Hour, 6 * time.Hour, 24 * time.Hour, 5 * 24 * time.Hour}[rnd.IntN(6)]
		n := rnd.IntN(40)
		var recs []*store.Record
		at := t0
		for k := 0; k < n; k++ {
			if rnd.IntN(8) != 0 { // sometimes the same time again
				at = at.Add(time.Duration(rnd.Int64N(int64(scale))) + time.Second)
			}
			branch := "main"
			if rnd.IntN(4) == 0 {
				branch = "x"
			}
			recs = append(recs, testRecord(k, branch, at))
		}
		slices.Reverse(recs) // newest first, as the store lists them
		if len(recs) > 2 && rnd.IntN(4) == 0 {
			j := rnd.IntN(len(recs) - 1) // a clock that went back
			recs[j], recs[j+1] = recs[j+1], recs[j]
		}
		ret := Retention{Keep: rnd.IntN(4), KeepHourly: rnd.IntN(6), KeepDaily: rnd.IntN(6),
			KeepWeekly: rnd.IntN(4), KeepMonthly: rnd.IntN(3)}
		if rnd.IntN(3) == 0 {
			ret.MaxAge = time.Duration(rnd.Int64N(int64(20 * scale)))
		}
		now := at.Add(time.Duration(rnd.Int64N(int64(scale))))
		got := retentionKeeps(recs, ret, now, loc)
		want := oracleKeeps(recs, ret, now, loc)
		gs := keptString(recs, func(id ID) []string { return got[id].names() })
		ws := keptString(recs, func(id ID) []string { return want[id] })
		if gs != ws {
			var times []string
			for _, r := range recs {
				times = append(times, r.Branch+" "+r.Time.In(loc).Format(time.RFC3339))
			}
			t.Fatalf("trial %d, %+v in %s, times (newest first):\n%s\ngot  %s\nwant %s", i, ret, loc, strings.Join(times, "\n"), gs, ws)
		}
	}
}

// TestRetentionBucketEdges: the cases worth writing down, with what each
// keeps by index in the list (newest first).
func TestRetentionBucketEdges(t *testing.T) {
	berlin := mustZone(t, "Europe/Berlin")
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	list := func(times ...string) []*store.Record {
		var recs []*store.Record
		for i, s := range times {
			recs = append(recs, testRecord(i, "main", at(s)))
		}
		return recs
	}
	sameHour := list("2026-06-10T10:50:00Z", "2026-06-10T10:20:00Z", "2026-06-10T10:05:00Z", "2026-06-10T09:59:00Z")
	for _, tc := range []struct {
		name string
		recs []*store.Record
		ret  Retention
		loc  *time.Location
		want string
	}{
		{"zero keeps nothing", sameHour, Retention{}, time.UTC, ""},
		{"same hour: its newest", sameHour, Retention{KeepHourly: 1}, time.UTC, "0:hourly"},
		{"more buckets than checkpoints", sameHour, Retention{KeepHourly: 10, KeepDaily: 10, KeepWeekly: 10, KeepMonthly: 10}, time.UTC,
			"0:hourly,daily,weekly,monthly 3:hourly"},
		{"policies add up", sameHour, Retention{Keep: 2, KeepHourly: 2}, time.UTC, "0:last,hourly 1:last 3:hourly"},
		// 2026-10-25 in Berlin: 02:00-03:00 happens twice (CEST, then
		// CET); the wall-clock hour is one bucket.
		{"DST: the repeated hour is one", list("2026-10-25T01:40:00Z", "2026-10-25T00:40:00Z", "2026-10-24T23:40:00Z"),
			Retention{KeepHourly: 5}, berlin, "0:hourly 2:hourly"},
		// The same day has 25 hours in Berlin: 23:30Z on the 25th is
		// already the 26th there (CET), 22:30Z on the 24th already the
		// 25th (CEST).
		{"DST day, local days", list("2026-10-25T23:30:00Z", "2026-10-25T20:00:00Z", "2026-10-24T22:30:00Z", "2026-10-24T21:30:00Z"),
			Retention{KeepDaily: 3}, berlin, "0:daily 1:daily 3:daily"},
		{"DST day, UTC days", list("2026-10-25T23:30:00Z", "2026-10-25T20:00:00Z", "2026-10-24T22:30:00Z", "2026-10-24T21:30:00Z"),
			Retention{KeepDaily: 3}, time.UTC, "0:daily 2:daily"},
		// Spring: 02:00-03:00 does not exist; 01:30 CET and 03:30 CEST
		// are an hour apart and two buckets.
		{"DST: the skipped hour", list("2026-03-29T01:30:00Z", "2026-03-29T00:30:00Z"), Retention{KeepHourly: 5}, berlin,
			"0:hourly 1:hourly"},
		// 2026-12-31 and 2027-01-02 are both in ISO week 2026-W53.
		{"ISO week across the year", list("2027-01-02T12:00:00Z", "2026-12-31T12:00:00Z", "2026-12-27T12:00:00Z"),
			Retention{KeepWeekly: 5, KeepMonthly: 5}, time.UTC, "0:weekly,monthly 1:monthly 2:weekly"},
	} {
		got := retentionKeeps(tc.recs, tc.ret, at("2027-02-01T00:00:00Z"), tc.loc)
		if s := keptString(tc.recs, func(id ID) []string { return got[id].names() }); s != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, s, tc.want)
		}
	}
}

// TestGCKeepBuckets: through Repo.GC, with checkpoints saved at chosen
// times: the daily policy keeps one a day past --keep and past max_age,
// a dry run says why each kept checkpoint stays, gc removes the rest, and
// a size limit drops what the policies kept, oldest first, but never what
// a ref names.
func TestGCKeepBuckets(t *testing.T) {
	ctx := context.Background()
	berlin := mustZone(t, "Europe/Berlin")
	r, ws := openTest(t, map[string]string{"a.txt": "0\n"})
	var now time.Time
	r.opts.Now = func() time.Time { return now }
	var ids []ID
	// Three a day for four days, at 06:00, 10:00 and 23:30 UTC: in
	// Berlin (UTC+1 in November) 23:30 is 00:30 the next day.
	for d := 0; d < 4; d++ {
		for _, h := range []string{"06:00", "10:00", "23:30"} {
			now = time.Date(2026, 11, 10+d, 0, 0, 0, 0, time.UTC).Add(mustParseClock(t, h))
			writeFile(t, ws, "a.txt", now.String())
			ids = append(ids, mustSave(t, r, now.Format(time.RFC3339)).ID)
		}
	}
	// ids[11] is HEAD and main's tip; the newest of each Berlin day are
	// 11 (the 14th), 10, 7, 4 and 1 (UTC days would give 11, 8, 5, 2).
	ret := Retention{Keep: 2, MaxAge: 24 * time.Hour, KeepDaily: 4}
	dry, err := r.GC(ctx, GCOptions{Retention: &ret, DryRun: true, Location: berlin})
	if err != nil {
		t.Fatal(err)
	}
	why := map[ID]string{}
	for _, k := range dry.KeptCheckpoints {
		why[k.ID] = strings.Join(k.KeptBy, ",")
	}
	want := map[ID]string{ids[11]: "head,branch,last,daily", ids[10]: "last,daily", ids[7]: "daily", ids[4]: "daily"}
	if fmt.Sprint(why) != fmt.Sprint(want) || dry.Kept != 4 || len(dry.Removed) != 8 || dry.DroppedForSize != 0 {
		t.Fatalf("dry run kept %v (%d), removed %d, dropped for size %d; want %v", why, dry.Kept, len(dry.Removed), dry.DroppedForSize, want)
	}
	if dry.KeptCheckpoints[0].ID != ids[4] {
		t.Errorf("kept checkpoints not oldest first: %v", dry.KeptCheckpoints[0].ID)
	}
	// A size no checkpoint fits in: the policies' three go, HEAD stays.
	tiny := ret
	tiny.MaxSize = 1
	small, err := r.GC(ctx, GCOptions{Retention: &tiny, DryRun: true, Location: berlin})
	if err != nil {
		t.Fatal(err)
	}
	if small.Kept != 1 || small.DroppedForSize != 3 || small.KeptCheckpoints[0].ID != ids[11] {
		t.Fatalf("max_size 1: kept %d, dropped for size %d", small.Kept, small.DroppedForSize)
	}
	res, err := r.GC(ctx, GCOptions{Retention: &ret, Location: berlin})
	if err != nil {
		t.Fatal(err)
	}
	list, err := r.List(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var left []ID
	for _, c := range list {
		left = append(left, c.ID)
	}
	if len(res.Removed) != 8 || fmt.Sprint(left) != fmt.Sprint([]ID{ids[11], ids[10], ids[7], ids[4]}) {
		t.Fatalf("after gc: removed %d, left %v", len(res.Removed), left)
	}
	if fr, err := r.Fsck(ctx); err != nil || len(fr.Problems) != 0 {
		t.Fatalf("fsck: %+v %v", fr, err)
	}
}

func mustParseClock(t *testing.T, hm string) time.Duration {
	t.Helper()
	c, err := time.Parse("15:04", hm)
	if err != nil {
		t.Fatal(err)
	}
	return time.Duration(c.Hour())*time.Hour + time.Duration(c.Minute())*time.Minute
}

// TestAutoGCBuckets: automatic gc keeps what the bucket settings keep, and
// the old checkpoints they keep do not set it off after every save: with
// keep 2, max_age 1d and keep_daily 5, a save a day runs it about every
// fourth save, and a gc then leaves the five newest days.
func TestAutoGCBuckets(t *testing.T) {
	ctx := context.Background()
	r, ws, now := clockedRepo(t, map[string]string{"keep": "2", "max_age": "1d", "keep_daily": "5"})
	runs := 0
	defer r.Subscribe(func(e Event) {
		if e.Kind == EventGC {
			runs++
		}
	})()
	var ids []ID
	for d := 0; d < 20; d++ {
		// Noon UTC: a different local day each time in every zone.
		*now = time.Date(2026, 6, 1+d, 12, 0, 0, 0, time.UTC)
		writeFile(t, ws, "a.txt", fmt.Sprint(d))
		ids = append(ids, mustSave(t, r, fmt.Sprint(d)).ID)
	}
	if runs < 2 || runs > 5 {
		t.Errorf("automatic gc ran %d times in 20 saves, want 2 to 5", runs)
	}
	if _, err := r.GC(ctx, GCOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := r.List(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var left []ID
	for _, c := range list {
		left = append(left, c.ID)
	}
	if want := []ID{ids[19], ids[18], ids[17], ids[16], ids[15]}; fmt.Sprint(left) != fmt.Sprint(want) {
		t.Errorf("after gc %d checkpoints left, want the five newest days", len(left))
	}
}
