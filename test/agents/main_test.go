// Package agents runs the coding agents people use — Claude Code, Gemini
// CLI and Codex, their real CLIs from npm at pinned versions — against
// scripted model servers on loopback, with ckpt's hooks installed the way
// a user installs them, and checks what ckpt records and rewinds.
//
// Nothing here reaches the internet: each agent's model endpoint is a Go
// test server that answers from a script (write this file, run this shell
// command, say this), and the agents' telemetry and update checks are
// turned off. The CLIs are installed into ~/.cache/ckpt/agents by the
// tests themselves (npm install, once; a failed install fails the test).
// In the everyday loop (go test -short) they are skipped, saying so.
package agents

import (
	"testing"

	"github.com/seed1cedbf7c/ckpt/test/internal/ckptenv"
)

func TestMain(m *testing.M) { ckptenv.Main(m, nil) }
