package hooks

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// fakeCodex puts a `codex` shell script on PATH (before the system's
// directories, for sh, sed, sleep) and returns a session of the recorded
// rollout, copied under a CODEX_HOME of the test's own.
func fakeCodex(t *testing.T, script string) *ckpt.Session {
	t.Helper()
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "codex"), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":/usr/bin:/bin")
	data, err := os.ReadFile("testdata/codex-rollout/rollout.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	tr := filepath.Join(t.TempDir(), "sessions", "2026", "11", "26", "rollout-x.jsonl")
	os.MkdirAll(filepath.Dir(tr), 0o755)
	if err := os.WriteFile(tr, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return &ckpt.Session{ID: "01a21591-6782-76e1-bc5d-90115597d62a", Agent: Codex, Transcript: tr}
}

// rpcAnswers is a fake app server in sh: it answers each request, by its
// method, with the result given (the request's id put in), and stays
// until its input ends.
func rpcAnswers(results map[string]string) string {
	var b strings.Builder
	b.WriteString("while IFS= read -r line; do\n  id=$(printf '%s' \"$line\" | sed -n 's/.*\"id\":\\([0-9]*\\).*/\\1/p')\n  case \"$line\" in\n")
	for method, result := range results {
		b.WriteString("  *'\"method\":\"" + method + "\"'*) printf '{\"id\":%s,\"result\":%s}\\n' \"$id\" '" + result + "' ;;\n")
	}
	b.WriteString("  esac\ndone\n")
	return b.String()
}

// A `codex` that hangs — here a script whose child holds its stdout, so
// killing the script ends nothing — does not hang the rewind: it gives up
// when the caller's context ends, or at its own bound, and says it timed
// out.
func TestCodexForkHangs(t *testing.T) {
	s := fakeCodex(t, "sleep 600\n")
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	_, err := ResumeBefore(s, &ckpt.Turn{Prompt: "[t2] two"}, ResumeOptions{Context: ctx})
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("the rewind waited %v for a hung codex", d)
	}
	if !errors.Is(err, ErrNoResume) || !strings.Contains(err.Error(), "did not answer within") {
		t.Errorf("err %v, want it to say codex did not answer in time", err)
	}
}

// A `codex` that prints garbage, or a line without end, is an error, not
// a hang nor memory without bound.
func TestCodexForkGarbage(t *testing.T) {
	for name, script := range map[string]string{
		"garbage":      "echo 'not json'; echo '{\"id\":1,\"result\":7}'; cat >/dev/null\n",
		"exits":        "echo 'codex: unknown subcommand app-server' >&2; exit 2\n",
		"endless_line": "cat /dev/zero\n",
	} {
		t.Run(name, func(t *testing.T) {
			s := fakeCodex(t, script)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := ResumeBefore(s, &ckpt.Turn{Prompt: "[t2] two"}, ResumeOptions{Context: ctx})
			if !errors.Is(err, ErrNoResume) || ctx.Err() != nil {
				t.Errorf("err %v (%v), want ErrNoResume", err, ctx.Err())
			}
			if name == "endless_line" && (err == nil || !strings.Contains(err.Error(), "a line of more than")) {
				t.Errorf("err %v, want it to say the line was too long", err)
			}
		})
	}
}

// A Codex that ignores beforeTurnId forks every turn: ckpt deletes the
// fork and says so; one that can also not delete it names the command
// that does.
func TestCodexForkKeepsTheTurn(t *testing.T) {
	log := filepath.Join(t.TempDir(), "calls")
	results := map[string]string{
		"initialize":        `{}`,
		"thread/fork":       `{"thread":{"id":"fork-1","path":"/x/rollout-fork.jsonl"}}`,
		"thread/turns/list": `{"data":[{"id":"` + codexT3 + `"}]}`,
		"thread/delete":     `{}`,
	}
	s := fakeCodex(t, "tee "+log+" | {\n"+rpcAnswers(results)+"}\n")
	_, err := ResumeBefore(s, &ckpt.Turn{Prompt: "[t2] two"}, ResumeOptions{Context: context.Background()})
	if !errors.Is(err, ErrNoResume) || !strings.Contains(err.Error(), "fork-1 still ends with turn "+codexT3+"; ckpt deleted it") {
		t.Errorf("err %v", err)
	}
	if b, _ := os.ReadFile(log); !strings.Contains(string(b), `"method":"thread/delete","params":{"threadId":"fork-1"}`) {
		t.Errorf("requests:\n%s", b)
	}
	// The fork is right: its last turn is before turn 2.
	results["thread/turns/list"] = `{"data":[{"id":"` + codexT1 + `"}]}`
	s = fakeCodex(t, rpcAnswers(results))
	ar, err := ResumeBefore(s, &ckpt.Turn{Prompt: "[t2] two"}, ResumeOptions{Context: context.Background()})
	if err != nil || ar.String() != "codex resume fork-1" || ar.File != "/x/rollout-fork.jsonl" {
		t.Errorf("%+v, %v", ar, err)
	}
	// --dry-run starts no codex at all.
	s = fakeCodex(t, "touch "+log+".started\n")
	if _, err := ResumeBefore(s, &ckpt.Turn{Prompt: "[t2] two"}, ResumeOptions{DryRun: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(log + ".started"); err == nil {
		t.Error("a dry run started codex")
	}
}

// Rollout files ckpt cannot use are an error naming the transcript, at
// once: a FIFO, a directory, an unreadable file, one whose turn's prompt
// line is cut short; one with invalid UTF-8 or a last line cut short
// still gives the turns before.
func TestCodexRolloutOdd(t *testing.T) {
	s := fakeCodex(t, "exit 1\n")
	data, _ := os.ReadFile(s.Transcript)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := testutil.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	unreadable := filepath.Join(dir, "unreadable.jsonl")
	os.WriteFile(unreadable, data, 0o000)
	for _, tr := range []string{fifo, dir, unreadable, filepath.Join(dir, "missing.jsonl")} {
		if tr == unreadable && os.Geteuid() == 0 {
			continue
		}
		done := make(chan error, 1)
		go func() {
			_, err := ResumeBefore(&ckpt.Session{ID: s.ID, Agent: Codex, Transcript: tr}, &ckpt.Turn{Prompt: "[t2] two"}, ResumeOptions{DryRun: true})
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrNoResume) {
				t.Errorf("%s: %v, want ErrNoResume", tr, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the rewind hangs", tr)
		}
	}
	// The last line cut short, and invalid UTF-8 in a prompt.
	cut := filepath.Join(dir, "cut.jsonl")
	os.WriteFile(cut, append(bytes.ReplaceAll(data, []byte("[t1] one"), []byte("[t1] \xff\xfe")), `{"type":"event_msg","payload":{"type":"task_st`...), 0o644)
	cs := &ckpt.Session{ID: s.ID, Agent: Codex, Transcript: cut}
	if ar, err := ResumeBefore(cs, &ckpt.Turn{Prompt: "[t2] two"}, ResumeOptions{DryRun: true}); err != nil || ar.At != codexT2 {
		t.Errorf("a rollout cut short: %+v, %v", ar, err)
	}
	if ar, err := ResumeBefore(cs, &ckpt.Turn{Prompt: "[t1] \ufffd\ufffd"}, ResumeOptions{DryRun: true}); err != nil || ar.String() != "codex" {
		t.Errorf("a prompt of invalid UTF-8: %+v, %v", ar, err)
	}
}
