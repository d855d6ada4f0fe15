package agents

import (
	"os"
	"path/filepath"
	"strings"

	"encoding/json"
	"fmt"
	"reflect"

	"github.com/seed1cedbf7c/ckpt/internal/flock"
)

// The steps every agent's end-to-end test shares: a three-turn session
// whose turns are checked, rewound and undone, then forked.

// wantSession checks what ckpt recorded of a session: its agent, its
// turns' prompts and the files each turn changed ("STATUS PATH"), and that
// the hooks named the agent's transcript. It returns the record.
func (w *world) wantSession(sid, agent string, prompts []string, files [][]string) sessionJSON {
	w.t.Helper()
	s := w.session(sid)
	if s.Session.Agent != agent {
		w.t.Errorf("agent %q, want %q", s.Session.Agent, agent)
	}
	if got := s.prompts(); !reflect.DeepEqual(got, prompts) {
		w.t.Fatalf("prompts %q, want %q", got, prompts)
	}
	if got := s.turnFiles(); !reflect.DeepEqual(got, files) {
		w.t.Fatalf("turn files\n got %q\nwant %q", got, files)
	}
	if s.Session.Transcript == "" {
		w.t.Errorf("the hooks did not record %s's transcript", agent)
	}
	return s
}

// rewindThenUndo runs a rewind (ckpt rewind ARGS...), checks the
// workspace it leaves, then undoes it and checks the workspace is back.
func (w *world) rewindThenUndo(want, back map[string]string, args ...string) {
	w.t.Helper()
	w.ckpt(append([]string{"rewind"}, args...)...)
	w.wantTree(fmt.Sprint("rewind ", args), want)
	w.ckpt("undo")
	w.wantTree(fmt.Sprint("undo of rewind ", args), back)
}

// wantForks forks a session whose turns are [t1] and one more from turn 2
// (a new session with turn 1's conversation, the workspace as turn 2
// began: at2) and from turn 1 (no conversation, the workspace as the
// session began: at1), and checks the original keeps its turns (orig).
func (w *world) wantForks(sid string, at2, at1 map[string]string, orig []string) {
	w.t.Helper()
	if got := w.fork(sid, "2").prompts(); !reflect.DeepEqual(got, orig[:1]) {
		w.t.Errorf("the fork from turn 2 has turns %q, want %q", got, orig[:1])
	}
	w.wantTree("fork 2", at2)
	if got := w.fork(sid, "1").prompts(); len(got) != 0 {
		w.t.Errorf("the fork from turn 1 has turns %q", got)
	}
	w.wantTree("fork 1", at1)
	if got := w.session(sid).prompts(); !reflect.DeepEqual(got, orig) {
		w.t.Errorf("the original session after the forks: %q, want %q", got, orig)
	}
}

// fork forks a session from a turn (ckpt fork) and returns the new
// session's record.
func (w *world) fork(session, turn string) sessionJSON {
	w.t.Helper()
	var fk struct {
		Session struct {
			ID string `json:"id"`
		} `json:"session"`
	}
	if err := json.Unmarshal([]byte(w.ckpt("fork", turn, "--json", "--session", session)), &fk); err != nil {
		w.t.Fatal(err)
	}
	return w.session(fk.Session.ID)
}

// threeTurnPrompts and threeTurnFiles are the session the agents' tests
// run: turn 1 sets up, turn 2 edits, turn 3 finishes.
var threeTurnPrompts = []string{"[t1] set up the project", "[t2] edit things", "[t3] finish"}

// threeTurnFiles is what each of its turns changes (build/ is ignored:
// never in a turn; the user's edits between turns are no turn's), with
// more of turn 3's, in path order between new/dir/c.txt and run.sh, where
// an agent's script has more.
func threeTurnFiles(turn3 ...string) [][]string {
	t3 := append([]string{"deleted link", "added new/dir/c.txt"}, turn3...)
	t3 = append(t3, "modified run.sh")
	return [][]string{
		{"added a.txt", "added lib/deep/blob.bin", "added link", "added run.sh"},
		{"modified a.txt", "deleted lib/deep/blob.bin", "modified src.txt"},
		t3,
	}
}

// lockStore holds the store's lock, as another ckpt working on it would,
// until the returned function is called.
func (w *world) lockStore(store string) (unlock func()) {
	w.t.Helper()
	lock, err := os.OpenFile(filepath.Join(store, "lock"), os.O_RDWR, 0)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := flock.Lock(lock); err != nil {
		w.t.Fatal(err)
	}
	return func() {
		flock.Unlock(lock)
		lock.Close()
	}
}

// corruptStore stops the workspace's watcher and overwrites the store's
// database with garbage.
func (w *world) corruptStore(store string) {
	w.t.Helper()
	w.ckpt("watch", "--stop")
	if err := os.WriteFile(filepath.Join(store, "ckpt.db"), []byte(strings.Repeat("not a database\n", 512)), 0o600); err != nil {
		w.t.Fatal(err)
	}
}

// ignoredEdits runs two turns (prompt returns the session's id, for an
// agent that names it: sid "") whose edit tools (edit, create: the agent's
// tool calls that edit and create a file) change ignored files: turn 1
// rewrites the ignored file env (.env) and creates the ignored
// build/gen.cfg; turn 2
// changes a tracked file. Rewinding turn 1 puts .env back and removes
// gen.cfg, though no whole-tree checkpoint holds them; undo brings the
// agent's versions back; ignored files no edit tool touched stay.
func (w *world) ignoredEdits(sid, env string, turns map[string][]step, prompt func(first bool, text string) string, edit, create func(p, content string) []step) {
	w.t.Helper()
	start := map[string]string{".gitignore": env + "\nbuild/\n", env: "KEY=old\n", "src.txt": "one\n", "build/cache": "c\n"}
	w.write(start)
	turns["[t81]"] = append(edit(env, "KEY=new\n"), create("build/gen.cfg", "generated\n")...)
	turns["[t82]"] = edit("src.txt", "two\n")
	if got := prompt(true, "[t81] configure"); sid == "" {
		sid = got // the agent names its session
	}
	prompt(false, "[t82] edit source")
	after := with(start, map[string]string{env: "KEY=new\n", "build/gen.cfg": "generated\n", "src.txt": "two\n"})
	w.wantTree("after the turns", after)
	s := w.session(sid)
	if len(s.Session.Turns) != 2 || !reflect.DeepEqual(s.Session.Turns[0].Ignored, []string{env, "build/gen.cfg"}) {
		w.t.Fatalf("turns %+v: turn 1 should keep %s and build/gen.cfg; hook log:\n%s", s.Session.Turns, env, w.hookLog())
	}
	if log := w.hookLog(); !strings.Contains(log, "kept ignored "+env) {
		w.t.Errorf("hook log lacks the kept %s:\n%s", env, log)
	}
	w.rewindThenUndo(start, after, "1", "--session", sid)
	w.rewindThenUndo(start, after, "1", "--exact", "--session", sid)
}
