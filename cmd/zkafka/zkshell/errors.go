package zkshell

import (
	"errors"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/zkproto"
)

// A zkError is a failed ZooKeeper call on a path, printed as zkCli prints
// it (CliWrapperException.getMessage, KeeperException.getMessage).
type zkError struct {
	err  error
	path string
}

func (e *zkError) Error() string {
	switch code := codeOf(e.err); code {
	case "NoNode":
		return "Node does not exist: " + e.path
	case "NoChildrenForEphemerals":
		return "Ephemerals cannot have children: " + e.path
	case "NodeExists":
		return "Node already exists: " + e.path
	case "Directory not empty":
		return "Node not empty: " + e.path
	case "InvalidACL":
		return "Acl is not valid : " + e.path
	case "NoAuth":
		return "Insufficient permission : " + e.path
	case "BadArguments":
		return "Arguments are not valid : " + e.path
	case "BadVersion":
		return "version No is not valid : " + e.path
	default:
		return keeperMessage(e.err, e.path)
	}
}

func (e *zkError) Unwrap() error { return e.err }

// keeperMessage is KeeperException.getMessage: "KeeperErrorCode = NoNode for /a".
func keeperMessage(err error, path string) string {
	msg := "KeeperErrorCode = " + codeOf(err)
	if path != "" {
		msg += " for " + path
	}
	return msg
}

// codeOf names err's code as KeeperException.Code's message does.
func codeOf(err error) string {
	var code zkproto.Err
	if errors.As(err, &code) {
		if name, ok := protoCodes[code]; ok {
			return name
		}
	}
	for target, name := range clientCodes {
		if errors.Is(err, target) {
			return name
		}
	}
	return err.Error()
}

// clientCodes are go-zookeeper's errors with KeeperException's names.
var clientCodes = map[error]string{
	zk.ErrNoNode:                  "NoNode",
	zk.ErrNoAuth:                  "NoAuth",
	zk.ErrBadVersion:              "BadVersion",
	zk.ErrNoChildrenForEphemerals: "NoChildrenForEphemerals",
	zk.ErrNodeExists:              "NodeExists",
	zk.ErrNotEmpty:                "Directory not empty",
	zk.ErrSessionExpired:          "Session expired",
	zk.ErrInvalidACL:              "InvalidACL",
	zk.ErrAuthFailed:              "AuthFailed",
	zk.ErrSessionMoved:            "Session moved",
	zk.ErrBadArguments:            "BadArguments",
	zk.ErrConnectionClosed:        "ConnectionLoss",
	zk.ErrNoServer:                "ConnectionLoss",
	zk.ErrClosing:                 "ConnectionLoss",
	zk.ErrReconfigDisabled:        "Reconfig is disabled",
	zk.ErrInvalidFlags:            "BadArguments",
}

// protoCodes are the codes of the sidecar's replies.
var protoCodes = map[zkproto.Err]string{
	zkproto.ErrNoNode:           "NoNode",
	zkproto.ErrNoAuth:           "NoAuth",
	zkproto.ErrBadArguments:     "BadArguments",
	zkproto.ErrUnimplemented:    "Unimplemented",
	zkproto.ErrConnectionLoss:   "ConnectionLoss",
	zkproto.ErrOperationTimeout: "OperationTimeout",
	zkproto.ErrNoWatcher:        "No such watcher",
	zkproto.ErrSessionExpired:   "Session expired",
}
