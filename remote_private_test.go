package ckpt

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// Nothing private leaves by accident: ignored files (even those a turn
// keeps because an edit tool changed them) never reach a remote; prompts
// and messages go only to a remote with sessions, redacted.

// fakeKey is an AWS-style access key the redactor knows.
var fakeKey = "AKIA" + "Z7Q3XK2M4N5P6R7S"

// everything returns every checkpoint of a store with the paths of its
// tree.
func everything(t *testing.T, r *Repo) map[*store.Record][]string {
	t.Helper()
	ctx := context.Background()
	recs, err := r.st.Checkpoints(ctx, store.ListFilter{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[*store.Record][]string{}
	var walk func(id ID, dir string, into *[]string)
	walk = func(id ID, dir string, into *[]string) {
		tr, err := r.st.ReadTree(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range tr.Entries {
			p := filepath.Join(dir, e.Name)
			if object.IsDir(e.Mode) {
				walk(e.ID, p, into)
			} else {
				*into = append(*into, p)
			}
		}
	}
	for _, rec := range recs {
		var paths []string
		walk(rec.Tree, "", &paths)
		out[rec] = paths
	}
	return out
}

func TestRemoteLeavesPrivateThingsHome(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{".gitignore": ".env\n", ".env": "KEY=old\n", "a.txt": "a\n"})
	c := newCtl(t, r, "s1")
	prompt := "deploy with " + fakeKey + " and fix the build"
	trackTurn(t, c, prompt, []string{".env"}, func() {
		writeFile(t, ws, ".env", "KEY="+fakeKey+"\n")
		writeFile(t, ws, "a.txt", "b\n")
	})
	if _, err := c.AddMessage(ctx, Message{Role: "assistant", Content: "I used " + fakeKey + " as asked"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Save(ctx, SaveOptions{Message: "after the turn, key " + fakeKey}); err != nil {
		t.Fatal(err)
	}
	// The store itself holds .env (the turn tracked it).
	held := false
	for _, paths := range everything(t, r) {
		held = held || strings.Contains(strings.Join(paths, "\n"), ".env")
	}
	if !held {
		t.Fatal("the store does not hold .env: the test tests nothing")
	}
	for _, withSessions := range []bool{false, true} {
		url := fileRemote(t)
		if err := r.RemoveRemote(ctx, "origin"); err != nil && !strings.Contains(err.Error(), "no such remote") {
			t.Fatal(err)
		}
		if _, err := r.AddRemote(ctx, RemoteConfig{Name: "origin", URL: url, WithSessions: withSessions}); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Push(ctx, "", PushOptions{}); err != nil {
			t.Fatal(err)
		}
		// Pushing again finds everything there (the id map lines up).
		again, err := r.Push(ctx, "", PushOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if again.Objects != 0 || again.Sessions != 0 {
			t.Errorf("with sessions %v: a second push sent %d objects and %d sessions", withSessions, again.Objects, again.Sessions)
		}
		dir := filepath.Join(t.TempDir(), "clone")
		cl, _, err := Clone(ctx, url, dir, CloneOptions{Open: Options{Store: t.TempDir()}})
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		for rec, paths := range everything(t, cl) {
			if strings.Contains(strings.Join(paths, "\n"), ".env") {
				t.Errorf("with sessions %v: checkpoint %q on the remote holds .env", withSessions, rec.Message)
			}
			if rec.Meta[MetaTracked] != "" {
				t.Errorf("with sessions %v: checkpoint %q lists tracked-ignored files", withSessions, rec.Message)
			}
			if strings.Contains(rec.Message, fakeKey) {
				t.Errorf("with sessions %v: a message on the remote shows the key: %q", withSessions, rec.Message)
			}
			if !withSessions && strings.Contains(rec.Message, "deploy") {
				t.Errorf("without sessions: a message on the remote shows the prompt: %q", rec.Message)
			}
		}
		sessions, err := cl.Sessions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !withSessions {
			if len(sessions) != 0 {
				t.Errorf("without sessions: the clone has %d sessions", len(sessions))
			}
			continue
		}
		if len(sessions) != 1 {
			t.Fatalf("with sessions: the clone has %d sessions, want 1", len(sessions))
		}
		s := sessions[0]
		if len(s.Turns) != 1 || !strings.Contains(s.Turns[0].Prompt, "deploy with [REDACTED:") || strings.Contains(s.Turns[0].Prompt, fakeKey) {
			t.Errorf("with sessions: the pulled prompt is %q", s.Turns[0].Prompt)
		}
		// The turn's checkpoints resolve in the clone.
		if _, err := cl.st.Checkpoint(ctx, s.Turns[0].Begin); err != nil {
			t.Errorf("the pulled turn's begin checkpoint: %v", err)
		}
		cc, _, err := cl.Controller(ctx, ControllerOptions{ID: s.ID})
		if err != nil {
			t.Fatal(err)
		}
		msgs, err := cc.Messages(ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		var all strings.Builder
		for _, m := range msgs {
			all.WriteString(m.Content + "\n")
		}
		if strings.Contains(all.String(), fakeKey) || !strings.Contains(all.String(), "I used [REDACTED:") {
			t.Errorf("with sessions: the pulled messages are %q", all.String())
		}
	}
}
