//go:build !linux

package watch

import (
	"context"
	"errors"
	"time"
)

// Supported reports whether this platform has a watcher.
const Supported = false

// Options configure a daemon.
type Options struct {
	Root, Cache, Socket string
	Idle                time.Duration
	Log                 func(string)
	Serve               ServeFunc
}

// Run is not available on this platform: saves scan everything.
func Run(ctx context.Context, opts Options) error {
	return errors.New("watch mode needs Linux's inotify; on this system every save scans the whole workspace")
}

// processStart: no watcher runs here, so there is none to wait for.
func processStart(int) string { return "" }
