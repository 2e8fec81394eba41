//go:build !linux

package segment

import (
	"errors"
	"os"
)

// datasync is fsync on systems without fdatasync.
func datasync(f *os.File) error { return f.Sync() }

// allocate is unsupported: extendFile writes zeros instead.
func allocate(f *os.File, off, n int64) error { return errors.ErrUnsupported }
