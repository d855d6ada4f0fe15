package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/atomicfile"
	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
)

// Run statuses.
const (
	StatusRunning     = "running"
	StatusDone        = "done"        // succeeded; message in inbox/done
	StatusDead        = "dead"        // every attempt failed; reverted; message in inbox/dead
	StatusInterrupted = "interrupted" // ckpt was stopped during an attempt
	StatusReverted    = "reverted"    // succeeded, then undone with ckpt runs revert
)

// Attempt is one execution of a routine.
type Attempt struct {
	N       int       `json:"n"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	Exit    Exit      `json:"exit"`
	// Checkpoint is the state after the attempt.
	Checkpoint string `json:"checkpoint,omitempty"`
	// Added, Modified, Deleted count the changes since the run's checkpoint.
	Added    int `json:"added"`
	Modified int `json:"modified"`
	Deleted  int `json:"deleted"`
	// Stat is the diffstat of those changes.
	Stat string `json:"stat,omitempty"`
	// Group is the routine's process group, while the attempt is under
	// way (in Record.Current).
	Group *Proc `json:"group,omitempty"`
	// Log is the attempt's log in the run directory, while it is under
	// way (routine.log or papermill.log).
	Log string `json:"log,omitempty"`
}

// Record is a run's record, kept as run.json in its run directory next to
// Decree's files (message.md, manifest.json, changes.diff, routine.log).
type Record struct {
	ID        string            `json:"id"`
	Chain     string            `json:"chain"`
	Seq       int               `json:"seq"`
	Type      string            `json:"type"`
	Title     string            `json:"title,omitempty"`
	InputFile string            `json:"input_file,omitempty"`
	Routine   string            `json:"routine"`
	Command   []string          `json:"command,omitempty"`
	Inbox     string            `json:"inbox,omitempty"` // the message's inbox file name
	Status    string            `json:"status"`
	Reason    string            `json:"reason,omitempty"`
	MaxTries  int               `json:"max_attempts"`
	Attempts  []Attempt         `json:"attempts"`
	Started   time.Time         `json:"started"`
	Ended     time.Time         `json:"ended,omitzero"`
	Params    map[string]string `json:"params,omitempty"`
	// Checkpoint is the state before the first attempt (manifest.json).
	Checkpoint string `json:"checkpoint"`
	// Result is the state the run left (after success, or after revert).
	Result string `json:"result,omitempty"`
	// Owner is the ckpt process running the run, while it is "running".
	// A running run whose owner is gone was cut short (ckpt was killed):
	// ckpt recover, or the next ckpt that runs it, stops what is left of
	// its routine and records the attempt as interrupted.
	Owner *Proc `json:"owner,omitempty"`
	// Current is the attempt under way, while the run is "running".
	Current *Attempt `json:"current,omitempty"`
	// Unreverted: the run failed and its changes could not be undone
	// (neither changes.diff reversed nor its checkpoint restored), so the
	// workspace may not be the tree before it. No message is processed
	// until it is (a restore of Checkpoint, or ckpt runs revert).
	Unreverted bool `json:"unreverted,omitempty"`
}

// Files changed by the last attempt.
func (r *Record) Files() int {
	if len(r.Attempts) == 0 {
		return 0
	}
	a := r.Attempts[len(r.Attempts)-1]
	return a.Added + a.Modified + a.Deleted
}

// RunDir returns the run directory of id under root.
func RunDir(root, id string) string {
	return filepath.Join(root, filepath.FromSlash(RunsDir), id)
}

// CheckRunDir checks that a run directory, .decree/runs/<id>, is still a
// directory reached through directories: a routine can replace it (or
// .decree, or runs) with a symlink to anywhere, and ckpt must not write a
// run's files through one.
func CheckRunDir(dir string) error { return CheckDirs(dir, 3) }

// CheckDirs checks that dir and the levels-1 directories above it are
// directories, not symlinks (nor anything else): ckpt writes Decree's files
// (run records, inbox messages, processed-spec.md) only through real
// directories of the workspace.
func CheckDirs(dir string, levels int) error {
	for i, d := 0, dir; i < levels; i, d = i+1, filepath.Dir(d) {
		fi, err := os.Lstat(d)
		if err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory (a symlink?); ckpt writes nothing through it", d)
		}
	}
	return nil
}

// RemoveTemps removes the temporary files an atomic write left in a run
// directory (".ckpt-tmp-*", regular files) last modified at least age ago,
// and returns their names.
func RemoveTemps(dir string, age time.Duration) []string {
	if CheckRunDir(dir) != nil {
		return nil
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var removed []string
	for _, de := range des {
		if !strings.HasPrefix(de.Name(), ".ckpt-tmp-") || !de.Type().IsRegular() {
			continue
		}
		fi, err := de.Info()
		if err != nil || time.Since(fi.ModTime()) < age {
			continue
		}
		if os.Remove(filepath.Join(dir, de.Name())) == nil {
			removed = append(removed, de.Name())
		}
	}
	return removed
}

// Save writes run.json atomically (never through a run directory that is
// not one, see [CheckRunDir]).
func (r *Record) Save(dir string) error {
	if err := CheckRunDir(dir); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(dir, "run.json"), append(data, '\n'))
}

// LoadRecord reads a run directory's run.json (at most [MaxRecordSize]
// bytes) and validates it ([ParseRecord]) for the run the directory's name
// says.
func LoadRecord(dir string) (*Record, error) {
	data, err := fsroot.ReadRegular(filepath.Join(dir, "run.json"), MaxRecordSize)
	if err != nil {
		return nil, err
	}
	r, err := ParseRecord(filepath.Base(dir), data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(dir, "run.json"), err)
	}
	return r, nil
}

// ParseRecord decodes a run.json and checks every field ckpt acts on: a
// run record is a file in the workspace, which the routine can write. Its
// id must be the run's (id, the run directory's name); its checkpoints
// full ids; its attempts numbered 1, 2, ... and at most [MaxAttempts];
// the inbox file a plain name; the input file inside the workspace; the
// routine's process group and log what ckpt writes there.
func ParseRecord(id string, data []byte) (*Record, error) {
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	if err := r.validate(id); err != nil {
		return nil, err
	}
	return &r, nil
}

// hexID reports whether s is 64 lower-case hexadecimal digits.
func hexID(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func (r *Record) validate(id string) error {
	checkpoint := func(what, s string) error {
		if s != "" && !hexID(s) {
			return fmt.Errorf("%s %q is not a checkpoint id", what, s)
		}
		return nil
	}
	switch {
	case r.ID != id || !ValidID(r.ID):
		return fmt.Errorf("id %q is not the run's (%s)", r.ID, id)
	case r.Seq < 0:
		return fmt.Errorf("seq %d is negative", r.Seq)
	case r.MaxTries < 0 || r.MaxTries > MaxAttempts:
		return fmt.Errorf("max_attempts %d is not between 0 and %d", r.MaxTries, MaxAttempts)
	case len(r.Attempts) > MaxAttempts:
		return fmt.Errorf("%d attempts, more than %d", len(r.Attempts), MaxAttempts)
	case r.Inbox != "" && !PlainName(r.Inbox):
		return fmt.Errorf("inbox %q is not a file name", r.Inbox)
	}
	switch r.Status {
	case StatusRunning, StatusDone, StatusDead, StatusInterrupted, StatusReverted:
	default:
		return fmt.Errorf("status %q is not one ckpt writes", r.Status)
	}
	if err := CheckInputFile(r.InputFile); err != nil {
		return err
	}
	if err := checkpoint("checkpoint", r.Checkpoint); err != nil {
		return err
	}
	if err := checkpoint("result", r.Result); err != nil {
		return err
	}
	for i, a := range r.Attempts {
		if a.N != i+1 {
			return fmt.Errorf("attempt %d is numbered %d", i+1, a.N)
		}
		if err := checkpoint(fmt.Sprintf("attempt %d's checkpoint", a.N), a.Checkpoint); err != nil {
			return err
		}
		if a.Group != nil || a.Log != "" {
			return fmt.Errorf("attempt %d is finished but names a process group or log", a.N)
		}
	}
	if c := r.Current; c != nil {
		switch {
		case c.Log != "" && c.Log != "routine.log" && c.Log != "papermill.log":
			return fmt.Errorf("the current attempt's log %q is not one ckpt writes", c.Log)
		case c.Group != nil && c.Group.PID <= 1:
			return fmt.Errorf("the current attempt's process group %d is not a routine's", c.Group.PID)
		}
	}
	if r.Owner != nil && r.Owner.PID <= 0 {
		return fmt.Errorf("owner pid %d", r.Owner.PID)
	}
	return nil
}

// PlainName reports whether s is a file name: no separator, not . or ..,
// no NUL.
func PlainName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\\\x00")
}

// ListRuns returns the ids of the run directories, sorted.
func ListRuns(root string) ([]string, error) {
	des, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(RunsDir)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, de := range des {
		if de.IsDir() && ValidID(de.Name()) {
			ids = append(ids, de.Name())
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// ResolveRun finds the run an id or unique id prefix names.
func ResolveRun(root, prefix string) (string, error) {
	ids, err := ListRuns(root)
	if err != nil {
		return "", err
	}
	var found []string
	for _, id := range ids {
		if id == prefix {
			return id, nil
		}
		if strings.HasPrefix(id, prefix) {
			found = append(found, id)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("no run %q in %s", prefix, RunsDir)
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("ambiguous run id prefix %q matches: %s", prefix, strings.Join(found, ", "))
}

// WriteFileAtomic replaces path with data, mode 0644, whole or not at
// all (see package atomicfile).
func WriteFileAtomic(path string, data []byte) error {
	return atomicfile.WriteFile(path, data, 0o644)
}

// WriteAtomic replaces path, mode 0644, with what write writes, streamed
// (see package atomicfile).
func WriteAtomic(path string, write func(w io.Writer) error) error {
	return atomicfile.Write(path, 0o644, write)
}

// LinkAtomic makes dst the same file as the regular file src, replacing
// dst atomically: a hard link when it can, else a copy ([CopyAtomic]).
// Only for a file that is never changed in place once written (a log:
// the next attempt's log is a new file).
func LinkAtomic(src, dst string) error {
	tmp, err := os.CreateTemp(filepath.Dir(dst), atomicfile.TempPrefix+"*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	tmp.Close()
	os.Remove(name)
	if err := os.Link(src, name); err != nil {
		return CopyAtomic(src, dst)
	}
	if err := os.Rename(name, dst); err != nil {
		os.Remove(name)
		return err
	}
	return nil
}

// CopyAtomic makes dst a copy of the regular file src, streamed, and
// replaces dst atomically.
func CopyAtomic(src, dst string) error {
	in, err := fsroot.OpenNoFollow(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if fi, err := in.Stat(); err != nil || !fi.Mode().IsRegular() {
		return &os.PathError{Op: "copy", Path: src, Err: ErrNotRegular}
	}
	return WriteAtomic(dst, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}
