package run

import (
	"os"
	"syscall"
	"time"
)

// Proc names a process: its pid, and its start time where the system says
// (clock ticks after boot, on Linux; 0 elsewhere), so that a pid the
// kernel has given to another process since is not taken for it.
type Proc struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start,omitempty"`
}

// Self is the running process.
func Self() *Proc {
	p := &Proc{PID: os.Getpid()}
	p.Start, _ = procStart(p.PID)
	return p
}

// procOf names the process pid.
func procOf(pid int) *Proc {
	p := &Proc{PID: pid}
	p.Start, _ = procStart(pid)
	return p
}

// Alive reports whether p is still running: a process with its pid
// exists, is not a zombie, and (where start times are known) started when
// p did.
func (p *Proc) Alive() bool {
	if p == nil || p.PID <= 0 {
		return false
	}
	start, ok := procStart(p.PID)
	if !ok {
		return false
	}
	return p.Start == 0 || start == 0 || start == p.Start
}

// KillGroup kills (SIGKILL) what is left of the process group that p led
// — a routine's group, after the ckpt that ran it is gone — and waits (at
// most a few seconds) until none of its processes is left. It does nothing
// when the group's id may now be another's: a process with p's pid that
// did not start when p did (or whose start time cannot be known) leads
// some other group. A group whose leader has exited keeps its id while any
// of its processes lives, so no other group can have taken it.
func KillGroup(p *Proc) {
	if p == nil || p.PID <= 1 || p.PID == os.Getpid() {
		return
	}
	if start, ok := procStart(p.PID); ok && (p.Start == 0 || start != p.Start) {
		return
	}
	if signalGroup(p.PID, syscall.SIGKILL) != nil {
		return
	}
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); {
		if !groupAlive(p.PID) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}
