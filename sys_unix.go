package ckpt

import "syscall"

const oNoFollow = syscall.O_NOFOLLOW
