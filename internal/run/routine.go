package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
)

// Routine is an executable unit: a shell script or a notebook in
// .decree/routines, or (for ckpt run) a command line.
type Routine struct {
	Name string
	// Path is the absolute path of the script or notebook ("" for a command).
	Path     string
	Notebook bool
	// Command is the argv of an ad-hoc run (ckpt run -- CMD ...).
	Command []string
}

// RoutineError: a routine name that is unsafe or names no routine.
type RoutineError struct {
	Name   string
	Reason string
}

func (e *RoutineError) Error() string { return fmt.Sprintf("routine %q: %s", e.Name, e.Reason) }

// ResolveRoutine finds the routine a message names, as Decree does: an
// explicit X.sh or X.ipynb is that file; a bare name is X.ipynb (when
// notebooks are enabled) then X.sh. Names with "/" or ".." are refused.
func ResolveRoutine(root, name string, cfg Config) (*Routine, error) {
	if name == "" || strings.ContainsAny(name, "/\\\x00") || strings.Contains(name, "..") || strings.HasPrefix(name, ".") {
		return nil, &RoutineError{name, "routine names are plain file names in .decree/routines (no '/', '..' or leading '.')"}
	}
	dir := filepath.Join(root, filepath.FromSlash(RoutinesDir))
	var candidates []string
	switch {
	case strings.HasSuffix(name, ".sh"):
		candidates = []string{name}
	case strings.HasSuffix(name, ".ipynb"):
		if !cfg.NotebookSupport {
			return nil, &RoutineError{name, "notebook routines are disabled (set notebook_support: true in .decree/config.yml)"}
		}
		candidates = []string{name}
	case cfg.NotebookSupport:
		candidates = []string{name + ".ipynb", name + ".sh"}
	default:
		candidates = []string{name + ".sh"}
	}
	for _, c := range candidates {
		p := filepath.Join(dir, c)
		fi, err := os.Stat(p)
		if err == nil && fi.Mode().IsRegular() {
			return &Routine{Name: strings.TrimSuffix(strings.TrimSuffix(name, ".sh"), ".ipynb"), Path: p, Notebook: strings.HasSuffix(c, ".ipynb")}, nil
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, &RoutineError{name, err.Error()}
		}
	}
	return nil, &RoutineError{name, "not found in .decree/routines (looked for " + strings.Join(candidates, ", ") + ")"}
}

// MaxRoutineSize bounds a routine file (a notebook keeps its outputs).
const MaxRoutineSize = 64 << 20

var declRE = lazyRE(`^([a-z_][a-z0-9_]*)=`)

// Standard parameters every routine gets.
var StandardParams = []string{"chain", "message_dir", "message_file", "message_id", "seq", "spec_file"}

func isStandard(n string) bool {
	for _, s := range StandardParams {
		if s == n {
			return true
		}
	}
	return false
}

// DeclaredParams returns the custom parameters a routine declares. In a
// shell script: the `name=` assignments at its top (after the shebang,
// comments, blank lines and `set` lines; the first other line ends them).
// In a notebook: `name = ...` lines of the cell tagged "parameters".
func (r *Routine) DeclaredParams() ([]string, error) {
	if r.Path == "" {
		return nil, nil
	}
	data, err := fsroot.ReadRegular(r.Path, MaxRoutineSize)
	if err != nil {
		return nil, err
	}
	var names []string
	add := func(n string) {
		if !isStandard(n) {
			names = append(names, n)
		}
	}
	if !r.Notebook {
		for _, line := range strings.Split(string(data), "\n") {
			t := strings.TrimSpace(line)
			switch {
			case t == "", strings.HasPrefix(t, "#"), strings.HasPrefix(t, "set "):
				continue
			}
			m := declRE().FindStringSubmatch(line)
			if m == nil {
				break
			}
			add(m[1])
		}
		return names, nil
	}
	var nb struct {
		Cells []struct {
			Metadata struct {
				Tags []string `json:"tags"`
			} `json:"metadata"`
			Source json.RawMessage `json:"source"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(data, &nb); err != nil {
		return nil, fmt.Errorf("notebook %s: %v", r.Path, err)
	}
	for _, c := range nb.Cells {
		tagged := false
		for _, t := range c.Metadata.Tags {
			tagged = tagged || t == "parameters"
		}
		if !tagged {
			continue
		}
		var lines []string
		if json.Unmarshal(c.Source, &lines) != nil {
			var s string
			json.Unmarshal(c.Source, &s)
			lines = strings.SplitAfter(s, "\n")
		}
		for _, l := range strings.Split(strings.Join(lines, ""), "\n") {
			name, rest, ok := strings.Cut(l, "=")
			name = strings.TrimSpace(name)
			if ok && !strings.HasPrefix(rest, "=") && regexp.MustCompile(`^[a-z_][a-z0-9_]*$`).MatchString(name) {
				add(name)
			}
		}
		break
	}
	return names, nil
}

// Params are a run's parameters: the standard ones and the declared custom
// ones the message sets.
func Params(m *Message, root, runDir string, declared []string) map[string]string {
	p := map[string]string{
		"spec_file":    m.InputFile,
		"message_file": filepath.Join(runDir, "message.md"),
		"message_id":   m.ID,
		"message_dir":  runDir,
		"chain":        m.Chain,
		"seq":          fmt.Sprint(m.Seq),
	}
	for _, d := range declared {
		if v, ok := m.Custom[d]; ok {
			p[d] = v
		}
	}
	return p
}

// Env returns os.Environ with params set.
func Env(params map[string]string) []string {
	env := os.Environ()
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+params[k])
	}
	return env
}

// PapermillError: papermill is needed and not installed.
type PapermillError struct{ Looked []string }

func (e *PapermillError) Error() string {
	return "papermill is not installed (looked in " + strings.Join(e.Looked, ", ") + " and $PATH); " +
		"install it with: python3 -m venv .decree/venv && .decree/venv/bin/pip install papermill ipykernel"
}

// Papermill finds the papermill program: $DECREE_VENV/bin, .decree/venv/bin,
// then $PATH.
func Papermill(root string) (string, error) {
	var looked []string
	if v := os.Getenv("DECREE_VENV"); v != "" {
		looked = append(looked, filepath.Join(v, "bin", "papermill"))
	}
	looked = append(looked, filepath.Join(root, ".decree", "venv", "bin", "papermill"))
	for _, p := range looked {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath("papermill"); err == nil {
		return p, nil
	}
	return "", &PapermillError{Looked: looked}
}

// Argv returns the command line of an attempt: bash <script>, papermill
// <nb> <runDir>/output.ipynb -p k v ... (standard parameters sorted, then
// custom ones sorted), or the ad-hoc command.
func (r *Routine) Argv(papermill, runDir string, params map[string]string) []string {
	switch {
	case len(r.Command) > 0:
		return r.Command
	case r.Notebook:
		argv := []string{papermill, r.Path, filepath.Join(runDir, "output.ipynb")}
		var custom []string
		for k := range params {
			if !isStandard(k) {
				custom = append(custom, k)
			}
		}
		sort.Strings(custom)
		for _, k := range append(append([]string(nil), StandardParams...), custom...) {
			argv = append(argv, "-p", k, params[k])
		}
		return argv
	}
	return []string{"bash", r.Path}
}

// LogName is the log file of an attempt in the run directory.
func (r *Routine) LogName() string {
	if r.Notebook {
		return "papermill.log"
	}
	return "routine.log"
}
