package run

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseMessage(t *testing.T) {
	tests := []struct {
		name, text string
		want       Message
		norm       bool
	}{
		{"plain.md", "Just a body.\n", Message{Body: "Just a body.\n"}, false},
		{"x.md", "---\nroutine: develop\npriority: high\n---\nBody\n", Message{Routine: "develop", Body: "Body\n", Custom: map[string]string{"priority": "high"}}, false},
		{"x.md", "---\nid: c-1\nchain: c\nseq: 1\ntype: task\nroutine: r\n---\n", Message{ID: "c-1", Chain: "c", Seq: 1, Type: "task", Routine: "r"}, true},
		{"x.md", "---\ninput_file: specs/a.spec.md\nn: 3\nflag: true\n---\nB", Message{InputFile: "specs/a.spec.md", Body: "B", Custom: map[string]string{"n": "3", "flag": "true"}}, false},
		{"x.md", "---not a fence\n", Message{Body: "---not a fence\n"}, false},
	}
	for _, tt := range tests {
		m, err := ParseMessage(tt.name, []byte(tt.text))
		if err != nil {
			t.Fatalf("%q: %v", tt.text, err)
		}
		if tt.want.Custom == nil {
			tt.want.Custom = map[string]string{}
		}
		got := Message{ID: m.ID, Chain: m.Chain, Seq: m.Seq, Type: m.Type, InputFile: m.InputFile, Routine: m.Routine, Custom: m.Custom, Body: m.Body}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: got %+v, want %+v", tt.text, got, tt.want)
		}
		if m.Normalized() != tt.norm {
			t.Errorf("%q: Normalized() = %v", tt.text, m.Normalized())
		}
	}
}

func TestParseMessageErrors(t *testing.T) {
	for text, want := range map[string]string{
		"---\nroutine: [unclosed\n---\n":     "front matter is not YAML",
		"---\nroutine: x\n":                  "front matter is not closed",
		"---\nseq: -1\n---\n":                "seq -1 is negative",
		"---\nseq: two\n---\n":               "seq must be a whole number",
		"---\n\"bad key\": 1\n---\n":         "is not a plain name",
		"---\n- a list\n---\n":               "front matter is not YAML",
		"---\nroutine: a\nroutine: b\n---\n": "front matter is not YAML",
	} {
		_, err := ParseMessage("m.md", []byte(text))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "message m.md: ") {
			t.Errorf("%q: got %v, want an error containing %q", text, err, want)
		}
	}
}

func TestNormalize(t *testing.T) {
	m, _ := ParseMessage("2025022514320000-2.md", []byte("---\npriority: high\n---\nDo it.\n"))
	m.Normalize("develop", func() string { t.Fatal("new chain asked for"); return "" })
	want := "---\nid: 2025022514320000-2\nchain: 2025022514320000\nseq: 2\ntype: task\nroutine: develop\npriority: high\n---\nDo it.\n"
	if got := string(m.Marshal()); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	// Normalizing is idempotent: the rewritten message parses to itself.
	m2, err := ParseMessage(m.Name, m.Marshal())
	if err != nil || !m2.Normalized() || string(m2.Marshal()) != want {
		t.Fatalf("round trip: %v\n%s", err, m2.Marshal())
	}

	m, _ = ParseMessage("add-login.md", []byte("---\ninput_file: specs/login.spec.md\n---\n"))
	m.Normalize("develop", func() string { return "2026010100000000" })
	if m.ID != "2026010100000000-0" || m.Type != "spec" || m.Seq != 0 {
		t.Fatalf("got id %s type %s", m.ID, m.Type)
	}
}

func TestYAMLScalarQuoting(t *testing.T) {
	for _, v := range []string{"plain", "yes", "123", "a: b", "# not a comment", "", "multi\nline", "  spaced", "'q'", "[x]",
		"2023.10100000000", "1e3", "0x1F", "0o17", "1_000", ".inf", "~", "null", "007"} {
		m := NewMessage("c", 0, "task", "", "r", "")
		m.Custom["k"] = v
		back, err := ParseMessage("x.md", m.Marshal())
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		if back.Custom["k"] != v {
			t.Errorf("%q came back as %q", v, back.Custom["k"])
		}
		// A chain that reads as a number (from a file name) too.
		m = NewMessage(v, 0, "task", "", "r", "")
		if back, err := ParseMessage("x.md", m.Marshal()); err != nil || back.Chain != v && v != "" {
			t.Errorf("chain %q came back as %q (%v)", v, back.Chain, err)
		}
	}
}

func TestNewChainID(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 4, 5, 0, time.UTC)
	taken := map[string]bool{"2026112310040500": true, "2026112310040501": true}
	if got := NewChainID(now, func(c string) bool { return taken[c] }); got != "2026112310040502" {
		t.Fatalf("got %s", got)
	}
}

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{
		"2026010100000000-0": true, "abc-12": true, "a.b_c-1": true,
		"": false, "-1": false, "abc": false, "abc-": false, "abc-x": false,
		"../x-1": false, "a/b-1": false, ".-1": false, "..-1": false, "a b-1": false,
	} {
		if got := ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestResolveRoutine(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, RoutinesDir)
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "develop.sh"), []byte("#!/bin/bash\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "analyze.ipynb"), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(dir, "both.sh"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "both.ipynb"), []byte("{}"), 0o644)
	cfg := DefaultConfig()
	if r, err := ResolveRoutine(root, "develop", cfg); err != nil || r.Notebook || r.Path != filepath.Join(dir, "develop.sh") {
		t.Fatalf("develop: %+v %v", r, err)
	}
	if r, err := ResolveRoutine(root, "both", cfg); err != nil || r.Notebook {
		t.Fatalf("both without notebooks: %+v %v", r, err)
	}
	if _, err := ResolveRoutine(root, "analyze.ipynb", cfg); err == nil || !strings.Contains(err.Error(), "notebook routines are disabled") {
		t.Fatalf("notebook disabled: %v", err)
	}
	cfg.NotebookSupport = true
	if r, err := ResolveRoutine(root, "both", cfg); err != nil || !r.Notebook {
		t.Fatalf("both with notebooks: %+v %v", r, err)
	}
	for _, bad := range []string{"../x", "a/b", "..", ".hidden", "", "a\\b", "x\x00"} {
		if _, err := ResolveRoutine(root, bad, cfg); err == nil || !strings.Contains(err.Error(), "plain file names") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := ResolveRoutine(root, "nosuch", cfg); err == nil || !strings.Contains(err.Error(), "not found in .decree/routines (looked for nosuch.ipynb, nosuch.sh)") {
		t.Errorf("missing: %v", err)
	}
}

func TestDeclaredParams(t *testing.T) {
	dir := t.TempDir()
	sh := filepath.Join(dir, "r.sh")
	os.WriteFile(sh, []byte("#!/usr/bin/env bash\n# Routine\nset -euo pipefail\n\nspec_file=\"${spec_file:-}\"\npriority=\"${priority:-low}\"\nowner=${owner:-}\necho hi\nlate=1\n"), 0o644)
	got, err := (&Routine{Path: sh}).DeclaredParams()
	if err != nil || !reflect.DeepEqual(got, []string{"priority", "owner"}) {
		t.Fatalf("shell: %v %v", got, err)
	}
	nb := filepath.Join(dir, "r.ipynb")
	os.WriteFile(nb, []byte(`{"cells":[{"metadata":{},"source":["x = 1\n"]},{"metadata":{"tags":["parameters"]},"source":["message_id = \"\"\n","depth = 1\n","a == b\n"]}]}`), 0o644)
	got, err = (&Routine{Path: nb, Notebook: true}).DeclaredParams()
	if err != nil || !reflect.DeepEqual(got, []string{"depth"}) {
		t.Fatalf("notebook: %v %v", got, err)
	}
}

func TestParamsOnlyDeclared(t *testing.T) {
	m := NewMessage("c", 2, "task", "specs/a.spec.md", "r", "")
	m.Custom["priority"] = "high"
	m.Custom["PATH"] = "/evil"
	p := Params(m, "/ws", "/ws/.decree/runs/c-2", []string{"priority", "missing"})
	want := map[string]string{"spec_file": "specs/a.spec.md", "message_file": "/ws/.decree/runs/c-2/message.md", "message_id": "c-2",
		"message_dir": "/ws/.decree/runs/c-2", "chain": "c", "seq": "2", "priority": "high"}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("got %v", p)
	}
}

func TestCheckInputFile(t *testing.T) {
	for p, ok := range map[string]bool{"": true, "specs/a.md": true, "a/../b.md": true,
		"../x": false, "/etc/passwd": false, "a/../../x": false, "..": false} {
		if err := CheckInputFile(p); (err == nil) != ok {
			t.Errorf("%q: %v", p, err)
		}
	}
}

func TestFailureContext(t *testing.T) {
	fc := string(FailureContext([]Attempt{
		{N: 1, Exit: Exit{Code: 7}, Added: 1, Stat: " a.txt | 1 +\n"},
		{N: 2, Exit: Exit{Code: 143, Signal: "terminated"}},
	}, func(n int) string { return "log of " + string(rune('0'+n)) }))
	for _, want := range []string{"# Failure Context\n", "failed 2 previous attempt(s). This is the final retry with a clean slate.",
		"## Attempt 1", "Exit code: 7", "Changes: +1 ~0 -0", " a.txt | 1 +", "log of 1", "## Attempt 2", "Exit code: killed by signal terminated", "log of 2"} {
		if !strings.Contains(fc, want) {
			t.Errorf("lacks %q:\n%s", want, fc)
		}
	}
}

func TestSpecsAndMarkProcessed(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "specs"), 0o755)
	for _, n := range []string{"02-b.spec.md", "01-a.spec.md", "notes.md"} {
		os.WriteFile(filepath.Join(root, "specs", n), []byte("---\nroutine: rust-develop\n---\n"), 0o644)
	}
	got, _ := Specs(root)
	if !reflect.DeepEqual(got, []string{"01-a.spec.md", "02-b.spec.md"}) {
		t.Fatalf("specs %v", got)
	}
	if SpecRoutine(root, "01-a.spec.md") != "rust-develop" {
		t.Fatal("spec routine")
	}
	MarkProcessed(root, "specs/01-a.spec.md")
	MarkProcessed(root, "specs/01-a.spec.md")
	got, _ = Specs(root)
	if !reflect.DeepEqual(got, []string{"02-b.spec.md"}) {
		t.Fatalf("after mark: %v", got)
	}
	data, _ := os.ReadFile(filepath.Join(root, ProcessedFile))
	if string(data) != "01-a.spec.md\n" {
		t.Fatalf("processed-spec.md = %q", data)
	}
}

func TestLoadConfig(t *testing.T) {
	root := t.TempDir()
	c, err := LoadConfig(root)
	if err != nil || c != DefaultConfig() {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	os.MkdirAll(filepath.Join(root, DecreeDir), 0o755)
	os.WriteFile(filepath.Join(root, ConfigFile), []byte("max_retries: 5\ndefault_routine: build\nnotebook_support: true\nai:\n  cmd: claude\n"), 0o644)
	c, err = LoadConfig(root)
	if err != nil || c.MaxRetries != 5 || c.DefaultRoutine != "build" || !c.NotebookSupport {
		t.Fatalf("got %+v %v", c, err)
	}
	os.WriteFile(filepath.Join(root, ConfigFile), []byte("max_retries: [\n"), 0o644)
	if _, err := LoadConfig(root); err == nil || !strings.Contains(err.Error(), ".decree/config.yml") {
		t.Fatalf("bad yaml: %v", err)
	}
}

// aliasBomb is front matter with a scalar of size bytes behind an anchor,
// used n times in a list.
func aliasBomb(size, n int) string {
	return "---\nbig: &a " + strings.Repeat("x", size) + "\nlist: [" + strings.TrimSuffix(strings.Repeat("*a,", n), ",") + "]\n---\nbody\n"
}

func TestParseMessageLimits(t *testing.T) {
	laughs := "---\na: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, c := range "bcdefghi" {
		laughs += string(c) + ": &" + string(c) + " [" + strings.TrimSuffix(strings.Repeat("*"+prev+", ", 10), ", ") + "]\n"
		prev = string(c)
	}
	laughs += "---\n"
	for name, tc := range map[string]struct{ text, want string }{
		"anchor used 100 times":   {aliasBomb(1<<20-1000, 100), "front matter is larger than the 64 KiB limit"},
		"front matter of 64 KiB":  {"---\nk: [" + strings.Repeat("x,", 40000) + "]\n---\n", "front matter is larger than the 64 KiB limit"},
		"anchor of 20 KB x 60":    {aliasBomb(20000, 60), "larger than 1 MiB with its aliases expanded"},
		"small anchor, 101 times": {aliasBomb(10, 101), "more than 100 aliases"},
		"anchor of 60 KiB x 20":   {aliasBomb(60<<10, 20), "larger than 1 MiB with its aliases expanded"},
		"billion laughs":          {laughs, "more than 100 aliases"},
		"message over 1 MiB":      {"---\nk: v\n---\n" + strings.Repeat("b", 1<<20), "larger than the 1 MiB limit"},
	} {
		_, err := ParseMessage("m.md", []byte(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", name, err, tc.want)
		}
	}
	// A few aliases, and a message just under the limits, are fine.
	m, err := ParseMessage("m.md", []byte("---\nowner: &o alice\nreviewer: *o\n---\n"))
	if err != nil || m.Custom["reviewer"] != "alice" {
		t.Fatalf("aliases: %v %+v", err, m)
	}
	if _, err := ParseMessage("m.md", []byte(aliasBomb(500, 100))); err != nil {
		t.Fatalf("100 aliases of 500 bytes: %v", err)
	}
	// Accepted only if written out normalized it is a message too.
	if _, err := ParseMessage("m.md", []byte(aliasBomb(1000, 100))); err == nil || !strings.Contains(err.Error(), "written out with its aliases expanded") {
		t.Fatalf("100 aliases of 1000 bytes: %v", err)
	}
	if _, err := ParseMessage("m.md", []byte("---\nk: "+strings.Repeat("v", 56<<10)+"\n---\n"+strings.Repeat("b", 1<<20-(61<<10)))); err != nil {
		t.Fatalf("a large message under the limit: %v", err)
	}
}

func TestLoadConfigLimits(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, DecreeDir), 0o755)
	for text, want := range map[string]string{
		"max_retries: 1000\n": "max_retries 1000 is more than 100",
		"default_routine: &a x\nai: [" + strings.Repeat("*a,", 200) + "]\n": "more than 100 aliases",
		"ai: " + strings.Repeat("x", 2<<20) + "\n":                          "file too large",
	} {
		os.WriteFile(filepath.Join(root, ConfigFile), []byte(text), 0o644)
		if _, err := LoadConfig(root); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.40q: got %v, want %q", text, err, want)
		}
	}
}

func TestReadFileRefusesOddFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	os.WriteFile(filepath.Join(dir, "f"), []byte("12345"), 0o644)
	os.Symlink("f", filepath.Join(dir, "link"))
	for name, want := range map[string]error{"fifo": ErrNotRegular, "link": ErrNotRegular, "missing": os.ErrNotExist} {
		if _, err := ReadPrefix(filepath.Join(dir, name), 10); !errors.Is(err, want) {
			t.Errorf("%s: got %v, want %v", name, err, want)
		}
	}
	if b, err := ReadPrefix(filepath.Join(dir, "f"), 4); err != nil || string(b) != "1234" {
		t.Errorf("prefix: %q %v", b, err)
	}
}

func TestTailBounded(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	for i := range 300 {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	os.WriteFile(filepath.Join(dir, "many"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	if got := Tail(filepath.Join(dir, "many"), 200); got != strings.Join(lines[100:], "\n") {
		t.Errorf("300 lines: got %d bytes starting %.20q", len(got), got)
	}
	os.WriteFile(filepath.Join(dir, "long"), []byte("first\n"+strings.Repeat("x", 3*TailBytes)+"\n"), 0o644)
	if got := Tail(filepath.Join(dir, "long"), 200); len(got) > TailBytes+5 || !strings.HasPrefix(got, "[...]xxx") {
		t.Errorf("one long line: got %d bytes starting %.20q", len(got), got)
	}
	if err := mkfifo(filepath.Join(dir, "fifo"), 0o644); err == nil {
		if got := Tail(filepath.Join(dir, "fifo"), 200); !strings.HasPrefix(got, "(no log") {
			t.Errorf("fifo: %q", got)
		}
	}
	if got := Tail(filepath.Join(dir, "missing"), 200); !strings.HasPrefix(got, "(no log") {
		t.Errorf("missing: %q", got)
	}
}

func TestTrimStat(t *testing.T) {
	var b strings.Builder
	for i := range StatLines + 50 {
		fmt.Fprintf(&b, " f%d | 1 +\n", i)
	}
	b.WriteString(" 150 files changed, 150 insertions(+)\n")
	got := TrimStat(b.String())
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != StatLines+2 || lines[StatLines] != " ... and 50 more file(s)" || lines[StatLines+1] != " 150 files changed, 150 insertions(+)" {
		t.Errorf("got %d lines, ending %q", len(lines), lines[len(lines)-2:])
	}
	if short := " a | 1 +\n 1 file changed\n"; TrimStat(short) != short {
		t.Errorf("a short stat changed: %q", TrimStat(short))
	}
}

func TestLinkAtomic(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "routine.log"), filepath.Join(dir, "attempt-1.log")
	os.WriteFile(src, []byte("log\n"), 0o644)
	os.WriteFile(dst, []byte("stale\n"), 0o644)
	if err := LinkAtomic(src, dst); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "log\n" {
		t.Fatalf("dst = %q", b)
	}
	if err := mkfifo(filepath.Join(dir, "fifo"), 0o644); err == nil {
		if err := CopyAtomic(filepath.Join(dir, "fifo"), dst); !errors.Is(err, ErrNotRegular) {
			t.Fatalf("copy of a fifo: %v", err)
		}
	}
}

func TestCheckInputFileIn(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	os.MkdirAll(filepath.Join(root, "specs", "sub"), 0o755)
	os.WriteFile(filepath.Join(root, "specs", "a.spec.md"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644)
	links := map[string]string{
		"specs/in.md":           "a.spec.md",
		"specs/chain.md":        "in.md",
		"specs/dangling-in.md":  "sub/not-yet.md",
		"specs/abs-in.md":       filepath.Join(root, "specs", "a.spec.md"),
		"specs/out.md":          filepath.Join(outside, "secret"),
		"specs/dangling-out.md": filepath.Join(outside, "not-yet"),
		"specs/rel-out.md":      "../../" + filepath.Base(outside) + "/not-yet",
		"specs/up.md":           "../..",
		"specs/via-missing.md":  "missing/../../../x",
		"specs/dir":             "sub",
		"specs/outdir":          outside,
		"specs/loop1":           "loop2",
		"specs/loop2":           "loop1",
	}
	for l, target := range links {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(l))); err != nil {
			t.Fatal(err)
		}
	}
	for p, ok := range map[string]bool{
		"specs/a.spec.md": true, "specs/in.md": true, "specs/chain.md": true, "specs/dangling-in.md": true,
		"specs/abs-in.md": true, "specs/dir/x.md": true, "specs/missing.md": true,
		"specs/out.md": false, "specs/dangling-out.md": false, "specs/rel-out.md": false, "specs/up.md": false,
		"specs/via-missing.md": false, "specs/outdir/secret": false, "specs/outdir/not-yet": false,
		"specs/loop1": false, "../x": false, "/etc/passwd": false,
	} {
		err := CheckInputFileIn(root, p)
		if (err == nil) != ok {
			t.Errorf("%s: got %v, want ok=%v", p, err, ok)
		}
	}
}

func TestParseRecord(t *testing.T) {
	const id = "2026010100000000-0"
	cp := strings.Repeat("ab", 32)
	good := `{"id":"` + id + `","status":"done","checkpoint":"` + cp + `","attempts":[{"n":1,"checkpoint":"` + cp + `"}]}`
	if _, err := ParseRecord(id, []byte(good)); err != nil {
		t.Fatalf("a good record: %v", err)
	}
	for rec, want := range map[string]string{
		`{"id":"../../x-0","status":"done"}`:                                   "is not the run's",
		`{"id":"2026010100000001-0","status":"done"}`:                          "is not the run's",
		`{"id":"` + id + `","status":"bogus"}`:                                 "status",
		`{"id":"` + id + `","status":"done","checkpoint":"x"}`:                 "not a checkpoint id",
		`{"id":"` + id + `","status":"done","result":"ABC"}`:                   "not a checkpoint id",
		`{"id":"` + id + `","status":"done","attempts":[{"n":2}]}`:             "numbered 2",
		`{"id":"` + id + `","status":"done","max_attempts":1000}`:              "max_attempts",
		`{"id":"` + id + `","status":"done","inbox":"../x.md"}`:                "not a file name",
		`{"id":"` + id + `","status":"done","input_file":"/etc/passwd"}`:       "outside the workspace",
		`{"id":"` + id + `","status":"running","current":{"group":{"pid":1}}}`: "process group",
		`{"id":"` + id + `","status":"running","current":{"log":"../../x"}}`:   "log",
		`{"id":"` + id + `","status":"running","owner":{"pid":-1}}`:            "owner",
		`{"id":"` + id + `","status":"done","attempts":[{"n":1,"log":"x"}]}`:   "finished",
		`{"id":"` + id + `","seq":-1,"status":"done"}`:                         "negative",
		`[]`: "cannot unmarshal",
	} {
		if _, err := ParseRecord(id, []byte(rec)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error containing %q", rec, err, want)
		}
	}
}
