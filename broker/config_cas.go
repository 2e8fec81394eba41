package broker

import (
	"errors"

	"github.com/go-zookeeper/zk"
)

// casConfig is one config znode edited compare-and-set: read gives its
// map and version (-1 when missing), check validates an edited map,
// write stores it at the version read (failing with ErrBadVersion or
// ErrNodeExists when another writer came in between).
type casConfig struct {
	read  func() (map[string]string, int32, error)
	check func(map[string]string) error
	write func(cfg map[string]string, version int32) error
}

// casAttempts bounds the retries of a compare-and-set config edit.
const casAttempts = 10

// apply reads the config, lets edit change it, checks it and, unless
// validateOnly, writes it back; a write that lost a race is retried from
// a fresh read, so that concurrent incremental edits are not lost. It
// returns the map written (nil when validateOnly).
func (c casConfig) apply(validateOnly bool, edit func(map[string]string) error) (map[string]string, error) {
	for attempt := 0; ; attempt++ {
		cur, version, err := c.read()
		if err != nil {
			return nil, err
		}
		if err := edit(cur); err != nil {
			return nil, err
		}
		if err := c.check(cur); err != nil {
			return nil, err
		}
		if validateOnly {
			return nil, nil
		}
		err = c.write(cur, version)
		if (errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNodeExists)) && attempt < casAttempts {
			continue
		}
		return cur, err
	}
}
