package segment

import (
	"io"
	"syscall"
)

// sendFile copies r to w with sendfile(2), from r.Pos without touching the
// file's seek offset. handled is false if w is not a file descriptor or
// the kernel refused before anything was sent, so the caller copies.
func sendFile(w io.Writer, r *FileRange) (n int64, handled bool, err error) {
	dst, ok := w.(syscall.Conn)
	if !ok || r.File == nil {
		return 0, false, nil
	}
	wc, err := dst.SyscallConn()
	if err != nil {
		return 0, false, nil
	}
	rc, err := r.File.SyscallConn()
	if err != nil {
		return 0, false, nil
	}
	off, remain := r.Pos, r.Len
	var serr error
	cerr := rc.Control(func(in uintptr) {
		serr = wc.Write(func(out uintptr) bool {
			for remain > 0 {
				m, e := syscall.Sendfile(int(out), int(in), &off, int(min(remain, 1<<30)))
				if m > 0 {
					remain -= int64(m)
					n += int64(m)
				}
				switch {
				case e == syscall.EINTR:
				case e == syscall.EAGAIN:
					return false // wait until writable
				case e != nil:
					err = e
					return true
				case m == 0:
					err = io.ErrUnexpectedEOF
					return true
				}
			}
			return true
		})
	})
	if n == 0 && (err == syscall.EINVAL || err == syscall.ENOSYS) {
		return 0, false, nil
	}
	if err == nil {
		err = serr
	}
	if err == nil {
		err = cerr
	}
	return n, true, err
}
