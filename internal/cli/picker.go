package cli

import (
	"errors"

	"github.com/seed1cedbf7c/ckpt"
)

// runPicker is replaced by the Bubble Tea picker (internal/tui).
func runPicker(e *env, ctl *ckpt.Controller) error {
	return errors.New("the rewind picker is not available in this build; use ckpt rewind TURN [--code|--conversation|--both]")
}
