package run

import (
	"bufio"
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

	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
	"golang.org/x/sys/unix"
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

// Save writes run.json atomically.
func (r *Record) Save(dir string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(dir, "run.json"), append(data, '\n'))
}

// LoadRecord reads a run directory's run.json.
func LoadRecord(dir string) (*Record, error) {
	data, err := fsroot.ReadRegular(filepath.Join(dir, "run.json"), MaxRecordSize)
	if err != nil {
		return nil, err
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(dir, "run.json"), err)
	}
	return &r, nil
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

// WriteFileAtomic writes a file through a temporary file, fsync and rename.
func WriteFileAtomic(path string, data []byte) error {
	return WriteAtomic(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteAtomic writes a file the way [WriteFileAtomic] does, its content
// streamed by write (buffered), never held whole in memory.
func WriteAtomic(path string, write func(w io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".ckpt-tmp-*")
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// LinkAtomic makes dst the same file as the regular file src, replacing
// dst atomically: a hard link when it can, else a copy ([CopyAtomic]).
// Only for a file that is never changed in place once written (a log:
// the next attempt's log is a new file).
func LinkAtomic(src, dst string) error {
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".ckpt-tmp-*")
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
	in, err := os.OpenFile(src, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW, 0)
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
