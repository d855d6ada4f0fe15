package hooks

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt"
)

// Turn ids of testdata/codex-rollout: rollout.jsonl's three turns, and
// fork.jsonl's one (a fork of it before turn 2, then [t9]).
const (
	codexT1 = "01a21591-6790-74a2-a0bb-4a340abf481d"
	codexT2 = "01a21591-6a47-7300-b5ee-c45e79a0211f"
	codexT3 = "01a21591-6cd4-7971-ae9d-1af235de3ab1"
	codexT9 = "01a21591-71ba-7421-8c71-c62adebebd75"
)

// TestCodexRollout reads the turns of rollouts Codex 0.169.0 wrote: a
// session of three turns, and a fork whose own rollout holds only its
// turn after the history it inherits.
func TestCodexRollout(t *testing.T) {
	for _, c := range []struct {
		file      string
		want      []codexTurn
		inherited bool
	}{
		{"rollout.jsonl", []codexTurn{{codexT1, "[t1] one"}, {codexT2, "[t2] two"}, {codexT3, "[t3] three"}}, false},
		{"fork.jsonl", []codexTurn{{codexT9, "[t9] after the fork"}}, true},
	} {
		data, err := os.ReadFile(filepath.Join("testdata/codex-rollout", c.file))
		if err != nil {
			t.Fatal(err)
		}
		turns, inherited := codexRollout(data)
		if !reflect.DeepEqual(turns, c.want) || inherited != c.inherited {
			t.Errorf("%s: %q, inherited %v; want %q, %v", c.file, turns, inherited, c.want, c.inherited)
		}
	}
}

// TestCodexRolloutOlder: an older rollout's user_message events, and a
// user message that steered a turn (its second): the turn's prompt is
// its first; a user message before any turn began is no turn's.
func TestCodexRolloutOlder(t *testing.T) {
	data := []byte(strings.Join([]string{
		`{"type":"session_meta","payload":{"id":"s"}}`,
		`{"type":"event_msg","payload":{"type":"user_message","message":"before any turn"}}`,
		`{"type":"event_msg","payload":{"type":"task_started","turn_id":"a"}}`,
		`{"type":"event_msg","payload":{"type":"user_message","message":"first"}}`,
		`{"type":"event_msg","payload":{"type":"user_message","message":"steer it"}}`,
		`{"type":"turn_context","payload":{"turn_id":"a"}}`,
		`{"type":"event_msg","payload":{"type":"task_started","turn_id":"b"}}`,
		`{"type":"event_msg","payload":{"type":"item_completed","turn_id":"b","item":{"type":"UserMessage","content":[{"type":"text","text":"second"},{"type":"image"},{"type":"text","text":"part"}]}}}`,
		`not json`,
	}, "\n"))
	turns, inherited := codexRollout(data)
	if want := []codexTurn{{"a", "first"}, {"b", "second\npart"}}; !reflect.DeepEqual(turns, want) || inherited {
		t.Errorf("%q, inherited %v; want %q", turns, inherited, want)
	}
}

// TestResumeBeforeCodex: a dry run names the turn Codex would fork
// before and no command (the fork's id is Codex's); the first turn is a
// new conversation — but not a fork's first, whose inherited history
// comes before it. Forking needs `codex` on PATH: without it, ckpt says
// so and writes nothing.
func TestResumeBeforeCodex(t *testing.T) {
	tr, err := filepath.Abs("testdata/codex-rollout/rollout.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	fork, err := filepath.Abs("testdata/codex-rollout/fork.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	s := &ckpt.Session{ID: "01a21591-6782-76e1-bc5d-90115597d62a", Agent: Codex, Transcript: tr}
	dry := ResumeOptions{DryRun: true}
	for prompt, want := range map[string]AgentResume{
		"[t2] two":   {Agent: Codex, At: codexT2},
		"[t3] three": {Agent: Codex, At: codexT3},
		"[t1] one":   {Agent: Codex, Command: []string{"codex"}},
	} {
		ar, err := ResumeBefore(s, &ckpt.Turn{Prompt: prompt}, dry)
		if err != nil || !reflect.DeepEqual(*ar, want) {
			t.Errorf("%s: %+v, %v; want %+v", prompt, ar, err, want)
		}
	}
	fs := &ckpt.Session{ID: "01a21591-6fce-7722-b0c1-40507596f965", Agent: Codex, Transcript: fork}
	if ar, err := ResumeBefore(fs, &ckpt.Turn{Prompt: "[t9] after the fork"}, dry); err != nil || ar.At != codexT9 || ar.Command != nil {
		t.Errorf("the fork's first turn: %+v, %v", ar, err)
	}
	if _, err := ResumeBefore(s, &ckpt.Turn{Prompt: "never asked"}, dry); !errors.Is(err, ErrNoResume) {
		t.Errorf("unknown prompt: %v, want ErrNoResume", err)
	}

	t.Setenv("PATH", t.TempDir())
	if _, err := ResumeBefore(s, &ckpt.Turn{Prompt: "[t2] two"}, ResumeOptions{}); !errors.Is(err, ErrNoResume) || !strings.Contains(err.Error(), "not on PATH") {
		t.Errorf("no codex on PATH: %v", err)
	}
}

// TestResumeBeforeCodexRepeatedPrompt: the same words in a later turn,
// a removed one included, resume before the turn asked for.
func TestResumeBeforeCodexRepeatedPrompt(t *testing.T) {
	tr := filepath.Join(t.TempDir(), "rollout.jsonl")
	var lines []string
	prompts := []string{"go on", "go on", "go on"}
	ids := []string{"a", "b", "c"}
	for i, p := range prompts {
		lines = append(lines,
			`{"type":"event_msg","payload":{"type":"task_started","turn_id":"`+ids[i]+`"}}`,
			`{"type":"event_msg","payload":{"type":"user_message","message":"`+p+`"}}`)
	}
	if err := os.WriteFile(tr, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	var turns []*ckpt.Turn
	for i, p := range prompts {
		turns = append(turns, &ckpt.Turn{N: i + 1, Prompt: p, Started: t0.Add(time.Duration(i) * time.Second)})
	}
	s := &ckpt.Session{ID: "s", Agent: Codex, Transcript: tr, Turns: turns[:2], Rewound: turns[2:]}
	for n, want := range map[int]string{2: "b", 3: "c"} {
		if ar, err := ResumeBefore(s, turns[n-1], ResumeOptions{DryRun: true}); err != nil || ar.At != want {
			t.Errorf("turn %d: %+v, %v; want at %s", n, ar, err, want)
		}
	}
	if ar, err := ResumeBefore(s, turns[0], ResumeOptions{DryRun: true}); err != nil || ar.String() != "codex" {
		t.Errorf("turn 1: %+v, %v", ar, err)
	}
}

// TestCodexHome: the CODEX_HOME that holds a rollout file.
func TestCodexHome(t *testing.T) {
	for p, want := range map[string]string{
		"/home/alice/.codex/sessions/2026/11/26/rollout-x.jsonl": "/home/alice/.codex",
		"/srv/ch/sessions/2026/01/02/rollout-y.jsonl":            "/srv/ch",
		"/home/alice/rollout-z.jsonl":                            "",
		"/home/alice/.codex/archived/2026/11/26/rollout-x.jsonl": "",
	} {
		if got := codexHome(p); got != want {
			t.Errorf("codexHome(%s) = %q, want %q", p, got, want)
		}
	}
}

// FuzzCodexRollout: any rollout file reads without a panic, as turns
// with distinct, non-empty ids. The seeds are the recorded rollouts'
// short lines (the long ones carry instructions, slow to mutate).
func FuzzCodexRollout(f *testing.F) {
	for _, name := range []string{"rollout.jsonl", "fork.jsonl"} {
		data, err := os.ReadFile(filepath.Join("testdata/codex-rollout", name))
		if err != nil {
			f.Fatal(err)
		}
		var short []string
		for _, l := range strings.Split(string(data), "\n") {
			if len(l) < 600 {
				short = append(short, l)
			}
		}
		f.Add([]byte(strings.Join(short, "\n")))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		turns, _ := codexRollout(data)
		seen := map[string]bool{}
		for _, tu := range turns {
			if tu.id == "" || seen[tu.id] {
				t.Fatalf("turns %q", turns)
			}
			seen[tu.id] = true
		}
	})
}
