package ckpt

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// testHooks returns failpoints for crash and failure tests, configured by
// the CKPT_FAILPOINT environment variable (unset in normal use):
//
//	restore-kill:N    SIGKILL this process after the N-th change a restore makes
//	restore-kill:0    ... after staging, before the first change
//	restore-fail:N    fail (return an error) after the N-th change
func testHooks() (before func() error, hook func(int) error) {
	fp := os.Getenv("CKPT_FAILPOINT")
	if fp == "" {
		return nil, nil
	}
	kind, num, _ := strings.Cut(fp, ":")
	n, err := strconv.Atoi(num)
	if err != nil {
		return nil, nil
	}
	kill := func() {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	switch kind {
	case "restore-kill":
		if n == 0 {
			return func() error { kill(); return nil }, nil
		}
		return nil, func(i int) error {
			if i == n {
				kill()
			}
			return nil
		}
	case "restore-fail":
		if n == 0 {
			return func() error { return errors.New("failpoint restore-fail:0") }, nil
		}
		return nil, func(i int) error {
			if i == n {
				return fmt.Errorf("failpoint restore-fail:%d", n)
			}
			return nil
		}
	}
	return nil, nil
}
