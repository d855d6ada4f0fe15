package ckpt_test

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/seed1cedbf7c/ckpt/internal/cli"
)

// init lets this package's test binary act as the ckpt command when a
// test runs it under the name "ckpt" (a symlink made by
// testutil.CkptBinary): the remote attack tests run real ckpt processes,
// kill them, and measure them.
func init() {
	if filepath.Base(os.Args[0]) != "ckpt" {
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
