//go:build race

package znode

const raceEnabled = true
