package httpserver_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/httpserver"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

func TestCheckpointsAndDiff(t *testing.T) {
	f := newFixture(t, httpserver.Options{})
	var ids []string
	for i, content := range []string{"two\n", "three\n", "four\n", "five\n"} {
		if i > 0 {
			testutil.WriteFiles(t, f.ws, map[string]string{"a.txt": content})
		}
		ids = append(ids, f.save("save "+content).ID.String())
	}

	// Status, with the working tree's changes.
	testutil.WriteFiles(t, f.ws, map[string]string{"c.txt": "new\n"})
	var st ckpt.Status
	f.ok(request{method: "GET", path: "/api/status"}, 0, &st)
	if st.Workspace != f.ws || st.Checkpoints != 4 || st.Head == nil || st.Head.ID.String() != ids[3] || len(st.Changes) != 1 {
		t.Errorf("status: %+v", st)
	}

	// Pages of two, newest first, until the end.
	var got []string
	before := ""
	for range 3 {
		var p httpserver.Page
		path := "/api/checkpoints?limit=2"
		if before != "" {
			path += "&before=" + before
		}
		f.ok(request{method: "GET", path: path}, 0, &p)
		for _, c := range p.Checkpoints {
			got = append(got, c.ID.String())
		}
		if before = p.Next; before == "" {
			break
		}
	}
	if want := []string{ids[3], ids[2], ids[1], ids[0]}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("paged list %v, want %v", got, want)
	}
	// The cursor is any revision, of any kind; an unknown one is a 404.
	var p httpserver.Page
	f.ok(request{method: "GET", path: "/api/checkpoints?kind=manual&before=HEAD~1"}, 0, &p)
	if len(p.Checkpoints) != 2 || p.Checkpoints[0].ID.String() != ids[1] || p.Next != "" {
		t.Errorf("kind=manual&before=HEAD~1: %+v", p)
	}
	if r := f.do(request{method: "GET", path: "/api/checkpoints?before=ffff0000"}); r.status != 404 || r.apiError(t).Code != "not_found" {
		t.Errorf("before=ffff0000: %d %s", r.status, r.body)
	}
	if r := f.do(request{method: "GET", path: "/api/checkpoints?limit=x"}); r.status != 400 || r.apiError(t).Exit != 2 {
		t.Errorf("limit=x: %d %s", r.status, r.body)
	}

	// Show and manifest; an unknown revision is a 404 with the CLI's hint.
	var show ckpt.ShowResult
	f.ok(request{method: "GET", path: "/api/checkpoints/HEAD~1"}, 0, &show)
	if show.Checkpoint.ID.String() != ids[2] || len(show.Changes) != 1 {
		t.Errorf("show HEAD~1: %+v", show)
	}
	var man struct {
		Files map[string]ckpt.ManifestFile `json:"files"`
	}
	f.ok(request{method: "GET", path: "/api/checkpoints/" + ids[0][:12] + "/manifest"}, 0, &man)
	if len(man.Files) != 2 || man.Files["a.txt"].SHA256 != ckpt.Sum([]byte("one\n")).String() {
		t.Errorf("manifest: %+v", man)
	}
	r := f.do(request{method: "GET", path: "/api/checkpoints/ffff0000"})
	if e := r.apiError(t); r.status != 404 || e.Code != "not_found" || e.Hint == "" || e.Exit != 1 {
		t.Errorf("unknown revision: %d %+v", r.status, e)
	}

	// Diff: JSON by default, unified on request, against the working tree
	// when to is empty, restricted to paths.
	var rep ckpt.DiffReport
	f.ok(request{method: "GET", path: "/api/diff?from=" + ids[0] + "&to=HEAD"}, 0, &rep)
	if len(rep.Modified) != 1 || rep.Modified[0].Path != "a.txt" || rep.To == nil {
		t.Errorf("diff json: %+v", rep)
	}
	u := f.ok(request{method: "GET", path: "/api/diff?from=HEAD~1&format=unified"}, 0, nil)
	if s := string(u.body); !strings.Contains(s, "-four\n+five\n") || !strings.Contains(s, "+++ b/c.txt") || !strings.HasPrefix(u.header.Get("Content-Type"), "text/x-diff") {
		t.Errorf("diff unified:\n%s", s)
	}
	f.ok(request{method: "GET", path: "/api/diff?path=c.txt"}, 0, &rep)
	if len(rep.Added) != 1 || len(rep.Modified) != 0 || rep.To != nil {
		t.Errorf("diff path=c.txt: %+v", rep)
	}
	if r := f.do(request{method: "GET", path: "/api/diff?format=html"}); r.status != 400 {
		t.Errorf("format=html: %d", r.status)
	}
}

func TestRestoreUndoRedo(t *testing.T) {
	f := newFixture(t, httpserver.Options{})
	first := f.save("first")
	testutil.WriteFiles(t, f.ws, map[string]string{"a.txt": "changed\n"})
	var saved httpserver.SaveResponse
	f.ok(request{method: "POST", path: "/api/checkpoints", body: httpserver.SaveRequest{Message: "second"}}, http.StatusCreated, &saved)
	if !saved.Created || saved.Checkpoint.Message != "second" || saved.Checkpoint.Parents[0] != first.ID {
		t.Errorf("save: %+v", saved)
	}
	f.ok(request{method: "POST", path: "/api/checkpoints"}, 0, &saved)
	if saved.Created || saved.Checkpoint.Message != "second" {
		t.Errorf("save without changes: %+v", saved)
	}

	// A dry run returns the plan and writes nothing.
	var res ckpt.RestoreResult
	f.ok(request{method: "POST", path: "/api/restore", body: httpserver.RestoreRequest{Rev: first.ID.Short(), DryRun: true}}, 0, &res)
	if !res.DryRun || len(res.Changed()) != 1 || testutil.ReadFile(t, f.ws, "a.txt") != "changed\n" {
		t.Errorf("dry run: %+v; a.txt %q", res, testutil.ReadFile(t, f.ws, "a.txt"))
	}
	f.ok(request{method: "POST", path: "/api/restore", body: httpserver.RestoreRequest{Rev: first.ID.Short(), Paths: []string{"a.txt"}}}, 0, &res)
	if got := testutil.ReadFile(t, f.ws, "a.txt"); got != "one\n" {
		t.Errorf("after restore a.txt = %q", got)
	}
	f.ok(request{method: "POST", path: "/api/undo"}, 0, &res)
	if got := testutil.ReadFile(t, f.ws, "a.txt"); got != "changed\n" {
		t.Errorf("after undo a.txt = %q", got)
	}
	f.ok(request{method: "POST", path: "/api/redo", body: "{}"}, 0, &res)
	if got := testutil.ReadFile(t, f.ws, "a.txt"); got != "one\n" {
		t.Errorf("after redo a.txt = %q", got)
	}
	r := f.do(request{method: "POST", path: "/api/redo"})
	if e := r.apiError(t); r.status != http.StatusConflict || e.Code != "nothing_to_do" {
		t.Errorf("redo at the end: %d %+v", r.status, e)
	}
	r = f.do(request{method: "POST", path: "/api/restore", body: `{"rev": "HEAD", "bogus": 1}`})
	if e := r.apiError(t); r.status != 400 || e.Exit != 2 {
		t.Errorf("unknown field: %d %+v", r.status, e)
	}
}

func TestRefsAndSnapshots(t *testing.T) {
	f := newFixture(t, httpserver.Options{})
	cp := f.save("first")
	ctx := context.Background()
	if _, err := f.repo.CreateTag(ctx, "v1", "HEAD", false); err != nil {
		t.Fatal(err)
	}
	var bs struct{ Branches []ckpt.Branch }
	f.ok(request{method: "GET", path: "/api/branches"}, 0, &bs)
	if len(bs.Branches) != 1 || !bs.Branches[0].Current || bs.Branches[0].Checkpoint != cp.ID {
		t.Errorf("branches: %+v", bs)
	}
	var ts struct{ Tags []ckpt.Tag }
	f.ok(request{method: "GET", path: "/api/tags"}, 0, &ts)
	if len(ts.Tags) != 1 || ts.Tags[0].Name != "v1" {
		t.Errorf("tags: %+v", ts)
	}

	// The snapshot endpoints answer what the MCP tools answer, in "text".
	var created struct {
		Snapshot ckpt.Snapshot
		Text     string
	}
	f.ok(request{method: "POST", path: "/api/snapshots", body: httpserver.SnapshotRequest{Name: "before-x", Description: "tests pass"}}, http.StatusCreated, &created)
	if created.Snapshot.Name != "before-x" || created.Text != "snapshot before-x created: "+created.Snapshot.ID() {
		t.Errorf("create: %+v", created)
	}
	r := f.do(request{method: "POST", path: "/api/snapshots", body: httpserver.SnapshotRequest{Name: "before-x"}})
	if r.status != http.StatusConflict {
		t.Errorf("create again: %d %s", r.status, r.body)
	}
	if r := f.do(request{method: "POST", path: "/api/snapshots", body: httpserver.SnapshotRequest{Name: "../x"}}); r.status != 400 {
		t.Errorf("bad name: %d %s", r.status, r.body)
	}
	var list struct {
		Snapshots []ckpt.Snapshot
		Text      string
	}
	f.ok(request{method: "GET", path: "/api/snapshots"}, 0, &list)
	if len(list.Snapshots) != 1 || !strings.HasPrefix(list.Text, "before-x\t") {
		t.Errorf("list: %+v", list)
	}
	testutil.WriteFiles(t, f.ws, map[string]string{"a.txt": "edited\n"})
	d := f.ok(request{method: "GET", path: "/api/snapshots/before-x/diff?format=unified"}, 0, nil)
	if !strings.Contains(string(d.body), "+edited") {
		t.Errorf("snapshot diff: %s", d.body)
	}
	var restored struct {
		Restore ckpt.RestoreResult
		Text    string
	}
	f.ok(request{method: "POST", path: "/api/snapshots/before-x/restore"}, 0, &restored)
	if !strings.HasPrefix(restored.Text, "restored snapshot before-x (1 file(s) changed):") || testutil.ReadFile(t, f.ws, "a.txt") != "one\n" {
		t.Errorf("restore: %+v", restored)
	}
	f.ok(request{method: "DELETE", path: "/api/snapshots/before-x"}, 0, &created)
	if created.Text != "snapshot before-x deleted" {
		t.Errorf("delete: %+v", created)
	}
	if r := f.do(request{method: "DELETE", path: "/api/snapshots/before-x"}); r.status != 404 {
		t.Errorf("delete again: %d %s", r.status, r.body)
	}

	var stats ckpt.StoreStats
	f.ok(request{method: "GET", path: "/api/stats"}, 0, &stats)
	if stats.Total < 2 || stats.Tags != 1 {
		t.Errorf("stats: %+v", stats)
	}
	var gc ckpt.GCResult
	f.ok(request{method: "POST", path: "/api/gc", body: httpserver.GCRequest{DryRun: true}}, 0, &gc)
	if !gc.DryRun {
		t.Errorf("gc: %+v", gc)
	}
}

func TestSessions(t *testing.T) {
	f := newFixture(t, httpserver.Options{})
	ctx := context.Background()
	if _, err := f.repo.NewSession(ctx, ckpt.SessionOptions{Title: "demo"}); err != nil {
		t.Fatal(err)
	}
	c, _, err := f.repo.Controller(ctx, ckpt.ControllerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, content := range []string{"turn one\n", "turn two\n"} {
		if _, err := c.BeginTurn(ctx, "prompt "+string(rune('1'+i))); err != nil {
			t.Fatal(err)
		}
		testutil.WriteFiles(t, f.ws, map[string]string{"a.txt": content})
		if _, err := c.AddMessage(ctx, ckpt.Message{Role: "assistant", Content: "done " + content}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.EndTurn(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var list struct{ Sessions []ckpt.Session }
	f.ok(request{method: "GET", path: "/api/sessions"}, 0, &list)
	if len(list.Sessions) != 1 || len(list.Sessions[0].Turns) != 2 {
		t.Fatalf("sessions: %+v", list)
	}
	id := list.Sessions[0].ID
	var detail struct {
		Session  ckpt.Session
		Turns    []ckpt.TurnInfo
		Messages []ckpt.Message
	}
	f.ok(request{method: "GET", path: "/api/sessions/" + id[:8]}, 0, &detail)
	if detail.Session.ID != id || len(detail.Turns) != 2 || detail.Turns[1].Prompt != "prompt 2" || len(detail.Messages) != 4 {
		t.Errorf("session: %+v", detail)
	}
	if r := f.do(request{method: "GET", path: "/api/sessions/nosuch"}); r.status != 404 {
		t.Errorf("unknown session: %d %s", r.status, r.body)
	}

	// Rewind: the plan first, then the rewind, then undo.
	var rw ckpt.RewindResult
	f.ok(request{method: "POST", path: "/api/sessions/current/rewind", body: httpserver.RewindRequest{Turn: 2, DryRun: true}}, 0, &rw)
	if !rw.DryRun || rw.Restore == nil || len(rw.Restore.Changed()) != 1 || testutil.ReadFile(t, f.ws, "a.txt") != "turn two\n" {
		t.Errorf("dry run: %+v", rw)
	}
	f.ok(request{method: "POST", path: "/api/sessions/" + id + "/rewind", body: httpserver.RewindRequest{Turn: 2, Scope: "both"}}, 0, &rw)
	if got := testutil.ReadFile(t, f.ws, "a.txt"); got != "turn one\n" || rw.Prompt != "prompt 2" || rw.Turns != 1 {
		t.Errorf("rewind: a.txt %q, %+v", got, rw)
	}
	if r := f.do(request{method: "POST", path: "/api/sessions/current/rewind", body: httpserver.RewindRequest{Turn: 1, Scope: "all"}}); r.status != 400 {
		t.Errorf("bad scope: %d %s", r.status, r.body)
	}
	f.ok(request{method: "POST", path: "/api/undo"}, 0, nil)
	if got := testutil.ReadFile(t, f.ws, "a.txt"); got != "turn two\n" {
		t.Errorf("after undo a.txt = %q", got)
	}

	// Fork from turn 1: a new session, current, on its own branch.
	var fork ckpt.ForkResult
	f.ok(request{method: "POST", path: "/api/sessions/" + id + "/fork", body: httpserver.TurnRequest{Turn: 1}}, 0, &fork)
	if fork.Session == nil || fork.Session.Parent != id || fork.Session.Branch == "" {
		t.Errorf("fork: %+v", fork.Session)
	}
	f.ok(request{method: "GET", path: "/api/sessions/current"}, 0, &detail)
	if detail.Session.ID != fork.Session.ID {
		t.Errorf("current session %s, want the fork %s", detail.Session.ID, fork.Session.ID)
	}
}

// POST /api/sessions/{id}/summarize replaces turns by one summary turn,
// from a turn on or up to it; a bad direction or turn is 400, an unknown
// session 404, and read-only mode refuses it.
func TestSummarizeRoute(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, httpserver.Options{})
	if _, err := f.repo.NewSession(ctx, ckpt.SessionOptions{Title: "long"}); err != nil {
		t.Fatal(err)
	}
	c, _, err := f.repo.Controller(ctx, ckpt.ControllerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		if _, err := c.BeginTurn(ctx, fmt.Sprintf("prompt %d", i)); err != nil {
			t.Fatal(err)
		}
		testutil.WriteFiles(t, f.ws, map[string]string{fmt.Sprintf("f%d.txt", i): "x\n"})
		if _, err := c.AddMessage(ctx, ckpt.Message{Role: "assistant", Content: fmt.Sprintf("did %d", i)}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.EndTurn(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range []httpserver.TurnRequest{{Turn: 2, Direction: "sideways"}, {Turn: 0, Direction: "from"}} {
		if r := f.do(request{method: "POST", path: "/api/sessions/current/summarize", body: bad}); r.status != 400 {
			t.Errorf("%+v: %d %s", bad, r.status, r.body)
		}
	}
	if r := f.do(request{method: "POST", path: "/api/sessions/nosuch/summarize", body: httpserver.TurnRequest{Turn: 1, Direction: "from"}}); r.status != 404 {
		t.Errorf("unknown session: %d %s", r.status, r.body)
	}
	var res struct {
		First   int `json:"first_turn"`
		Last    int `json:"last_turn"`
		Summary string
	}
	f.ok(request{method: "POST", path: "/api/sessions/current/summarize", body: httpserver.TurnRequest{Turn: 2, Direction: "from"}}, 0, &res)
	if res.First != 2 || res.Last != 3 || !strings.Contains(res.Summary, "prompt 3") {
		t.Errorf("summarize from 2: %+v", res)
	}
	var detail struct{ Session ckpt.Session }
	f.ok(request{method: "GET", path: "/api/sessions/current"}, 0, &detail)
	if n := len(detail.Session.Turns); n != 2 || !detail.Session.Turns[1].Summary {
		t.Errorf("after summarizing turns 2-3 the session has %d turns: %+v", n, detail.Session.Turns)
	}
	// Read-only: refused.
	ro := newFixture(t, httpserver.Options{ReadOnly: true})
	if r := ro.do(request{method: "POST", path: "/api/sessions/current/summarize", body: httpserver.TurnRequest{Turn: 1, Direction: "upto"}}); r.status != 403 {
		t.Errorf("read-only: %d %s", r.status, r.body)
	}
}
