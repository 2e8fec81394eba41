//go:build !linux

package segment

import "os"

// datasync is fsync on systems without fdatasync.
func datasync(f *os.File) error { return f.Sync() }
