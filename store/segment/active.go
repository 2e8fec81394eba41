package segment

// ActiveBase is the base offset of the active segment (the last one): it
// changes when the log rolls, so a caller can tell that an append rolled
// (the partition's producer state snapshots are taken there, as Kafka's
// are).
func (l *Log) ActiveBase() int64 { return l.active().base }
