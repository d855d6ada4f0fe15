package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/seed1cedbf7c/ckpt"
)

// InterruptGrace is how long ckpt lets a command stop by itself after
// SIGINT or SIGTERM before it exits anyway. Every operation that writes
// more than one path is journaled, so an exit at any moment is what a
// crash is: the next ckpt command (or 'ckpt recover') finishes or rolls
// back what was cut short.
const InterruptGrace = 700 * time.Millisecond

// Run is ckpt's main: Main with the process's signals. The first SIGINT
// or SIGTERM cancels the command's context, so it stops where it can
// (a scan between directories, a restore before its next file); a
// command still running InterruptGrace later — blocked in a read, in a
// routine's pipe, in a lock — is ended with the signal's exit status
// (128+N, as a shell reports it), and so is any command at a second
// signal. A command that stops in time exits with that status too.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got atomic.Value // the first signal
	done := make(chan struct{})
	defer close(done)
	go func() {
		var s os.Signal
		select {
		case s = <-sigs:
		case <-done:
			return
		}
		got.Store(s)
		cancel()
		timer := time.NewTimer(InterruptGrace)
		defer timer.Stop()
		select {
		case <-done:
			return
		case <-timer.C:
		case <-sigs:
		}
		fmt.Fprintf(stderr, "ckpt: %s: %s\n", signalName(s), interruptedNote)
		ckpt.StopRoutines()
		os.Exit(signalStatus(s))
	}()
	code := Main(ctx, args, stdin, stdout, stderr)
	if s, ok := got.Load().(os.Signal); ok && code != ExitOK {
		return signalStatus(s)
	}
	return code
}

const interruptedNote = "interrupted; anything cut short is finished or rolled back by the next ckpt command (or 'ckpt recover')"

func signalName(s os.Signal) string {
	if s == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}

func signalStatus(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 130
}
