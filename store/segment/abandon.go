package segment

// Abandon closes the log as a killed process leaves it: no index written,
// nothing trimmed or fsynced (what was written stays with the file system,
// unsynced), the flusher stopped and the files released as Close releases
// them. The next Open recovers the active segment as after a crash. It
// returns the sticky error of an earlier failed fsync, if any; later calls
// (and Close) return nil.
func (l *Log) Abandon() error { return l.close(false) }
