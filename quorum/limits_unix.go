package quorum

import "syscall"

func maxFiles() int64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return -1
	}
	return int64(r.Cur)
}
