package segment

import (
	"errors"
	"fmt"
)

var (
	// ErrOffsetOutOfRange is returned by reads of an offset below
	// StartOffset or above NextOffset (Kafka's OFFSET_OUT_OF_RANGE).
	ErrOffsetOutOfRange = errors.New("segment: offset out of range")
	// ErrClosed is returned by every operation on a closed Log.
	ErrClosed = errors.New("segment: log closed")
	// ErrInvalidBatch is returned by Append for a batch that breaks its
	// contract; the log is unchanged. Errors wrap it with the reason.
	ErrInvalidBatch = errors.New("segment: invalid batch")
	// ErrCorrupt is wrapped by a *CorruptError.
	ErrCorrupt = errors.New("segment: corrupt segment")
)

// CorruptError reports damage that recovery does not repair: a bad batch
// in a segment other than the last (those were fsynced when rolled, so
// damage there is not a torn write), or a batch that a read found unsane.
// errors.Is(err, ErrCorrupt) is true for it.
type CorruptError struct {
	File   string // path of the .log file
	Pos    int64  // byte position of the bad batch in File
	Offset int64  // the offset expected there (-1 if unknown)
	Reason string // what was wrong
}

// Error implements error.
func (e *CorruptError) Error() string {
	return fmt.Sprintf("segment: corrupt segment %s at position %d (offset %d): %s", e.File, e.Pos, e.Offset, e.Reason)
}

// Unwrap makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

func errInvalid(reason string) error { return fmt.Errorf("%w: %s", ErrInvalidBatch, reason) }
