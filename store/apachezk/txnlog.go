package apachezk

import (
	"errors"
	"fmt"
	"hash/adler32"
	"os"
	"path/filepath"
)

// logEnd says how a log file ended.
type logEnd int

const (
	endClean logEnd = iota // at the end of the file or in its preallocated zeros
	endTorn                // inside an entry: a write that did not finish
)

// readLogFile reads the txns of one log file (FileTxnLog's iterator) and
// hands each one with a zxid of at least from to fn, in file order. A torn
// tail ends the file (the valid prefix counts); a bad checksum, header or
// record is an *Error with the file and offset.
func readLogFile(path string, from int64, fn func(*txn)) (end logEnd, last int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	name := filepath.Base(path)
	r := newReader(f, st.Size())
	r.fileHeader(logMagic)
	if r.err != nil {
		if r.err == errTruncated {
			return endTorn, 0, nil // created, header not written yet
		}
		return 0, 0, &Error{File: name, Offset: r.at, Err: r.err}
	}
	for {
		at := r.off
		if at == r.size {
			return endClean, last, nil
		}
		crc := r.long()
		n := r.int()
		if r.err != nil {
			return endTorn, last, nil
		}
		if n == 0 {
			return endClean, last, nil // the preallocated zeros
		}
		if n < 0 {
			return 0, last, &Error{File: name, Offset: at, Err: fmt.Errorf("%w: entry length %d", ErrCorrupt, n)}
		}
		if int64(n)+1 > r.size-r.off {
			return endTorn, last, nil
		}
		b := make([]byte, n)
		r.full(b)
		var eor [1]byte
		r.full(eor[:])
		if r.err != nil || eor[0] != 'B' {
			return endTorn, last, nil // "Last transaction was partial."
		}
		if uint64(crc) != uint64(adler32.Checksum(b)) {
			return 0, last, &Error{File: name, Offset: at, Err: fmt.Errorf("%w: checksum mismatch", ErrCorrupt)}
		}
		t, err := decodeEntry(b)
		if err != nil {
			return 0, last, &Error{File: name, Offset: at, Err: err}
		}
		if t.hdr.zxid >= from {
			fn(t)
		}
		last = t.hdr.zxid
	}
}

var errNoSnapshot = errors.New("apachezk: txn logs but no snapshot")
