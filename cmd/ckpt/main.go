// Command ckpt checkpoints a workspace and restores it. See the README.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/seed1cedbf7c/ckpt/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
