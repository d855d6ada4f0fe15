package run

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
)

// Layout names under the workspace.
const (
	DecreeDir     = ".decree"
	InboxDir      = ".decree/inbox"
	DoneDir       = ".decree/inbox/done"
	DeadDir       = ".decree/inbox/dead"
	RoutinesDir   = ".decree/routines"
	RunsDir       = ".decree/runs"
	ConfigFile    = ".decree/config.yml"
	SpecsDir      = "specs"
	ProcessedFile = "specs/processed-spec.md"
)

// Config is .decree/config.yml. Keys ckpt does not use (Decree's ai,
// commands, ...) are accepted and ignored.
type Config struct {
	// MaxRetries is the total number of attempts per message (at least 1).
	MaxRetries int `yaml:"max_retries"`
	// DefaultRoutine runs messages that name none.
	DefaultRoutine string `yaml:"default_routine"`
	// NotebookSupport allows .ipynb routines (run with papermill).
	NotebookSupport bool `yaml:"notebook_support"`
	// MaxDepth bounds a chain's follow-up messages (seq).
	MaxDepth int `yaml:"max_depth"`
}

// MaxAttempts bounds max_retries (and ckpt run --retries): every attempt
// is kept in run.json.
const MaxAttempts = 100

// DefaultConfig returns Decree's defaults.
func DefaultConfig() Config {
	return Config{MaxRetries: 3, DefaultRoutine: "develop", MaxDepth: 10}
}

// LoadConfig reads root/.decree/config.yml; a missing file gives the
// defaults.
func LoadConfig(root string) (Config, error) {
	c := DefaultConfig()
	data, err := fsroot.ReadRegular(filepath.Join(root, ConfigFile), MaxMessageSize)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("%s: %w", ConfigFile, err)
	}
	if err := DecodeYAML(data, &c); err != nil {
		return c, fmt.Errorf("%s: %v", ConfigFile, err)
	}
	if c.MaxRetries < 1 {
		c.MaxRetries = 1
	}
	if c.MaxRetries > MaxAttempts {
		return c, fmt.Errorf("%s: max_retries %d is more than %d", ConfigFile, c.MaxRetries, MaxAttempts)
	}
	if c.DefaultRoutine == "" {
		c.DefaultRoutine = "develop"
	}
	if c.MaxDepth < 1 {
		c.MaxDepth = 10
	}
	return c, nil
}
