// Command ckpt checkpoints a workspace and restores it. See the README.
package main

import (
	"os"

	"github.com/seed1cedbf7c/ckpt/internal/cli"
)

func main() {
	os.Exit(cli.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
