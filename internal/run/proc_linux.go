package run

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// groupAlive reports whether a process other than a zombie is in process
// group pgid.
func groupAlive(pgid int) bool {
	des, err := os.ReadDir("/proc")
	if err != nil {
		return syscall.Kill(-pgid, 0) == nil
	}
	for _, de := range des {
		if de.Name()[0] < '0' || de.Name()[0] > '9' {
			continue
		}
		state, pgrp, ok := procState(de.Name())
		if ok && pgrp == pgid && state != "Z" && state != "X" {
			return true
		}
	}
	return false
}

// procState returns a process's state and process group.
func procState(pid string) (string, int, bool) {
	f, ok := procFields(pid)
	if !ok || len(f) < 3 {
		return "", 0, false
	}
	pgrp, err := strconv.Atoi(f[2])
	return f[0], pgrp, err == nil
}

// procFields returns the fields of /proc/PID/stat after the command name
// (the state first).
func procFields(pid string) ([]string, bool) {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return nil, false
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(s[i+1:]), true
}

// procStart returns the start time of process pid (field 22 of
// /proc/PID/stat, clock ticks after boot), and false when there is no
// such process or it is a zombie.
func procStart(pid int) (uint64, bool) {
	f, ok := procFields(strconv.Itoa(pid))
	if !ok || len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return 0, false
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0, false
	}
	return start, true
}
