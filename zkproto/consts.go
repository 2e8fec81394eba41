package zkproto

import "fmt"

// OpCode is a request type (ZooDefs.OpCode).
type OpCode int32

// Request opcodes.
const (
	OpNotification         OpCode = 0
	OpCreate               OpCode = 1
	OpDelete               OpCode = 2
	OpExists               OpCode = 3
	OpGetData              OpCode = 4
	OpSetData              OpCode = 5
	OpGetACL               OpCode = 6
	OpSetACL               OpCode = 7
	OpGetChildren          OpCode = 8
	OpSync                 OpCode = 9
	OpPing                 OpCode = 11
	OpGetChildren2         OpCode = 12
	OpCheck                OpCode = 13
	OpMulti                OpCode = 14
	OpCreate2              OpCode = 15
	OpReconfig             OpCode = 16
	OpCheckWatches         OpCode = 17
	OpRemoveWatches        OpCode = 18
	OpCreateContainer      OpCode = 19
	OpDeleteContainer      OpCode = 20
	OpCreateTTL            OpCode = 21
	OpMultiRead            OpCode = 22
	OpAuth                 OpCode = 100
	OpSetWatches           OpCode = 101
	OpSASL                 OpCode = 102
	OpGetEphemerals        OpCode = 103
	OpGetAllChildrenNumber OpCode = 104
	OpSetWatches2          OpCode = 105
	OpAddWatch             OpCode = 106
	OpWhoAmI               OpCode = 107
	OpCreateSession        OpCode = -10
	OpCloseSession         OpCode = -11
	OpError                OpCode = -1
)

// Err is a ZooKeeper error code (KeeperException.Code). The zero value is OK.
type Err int32

// Error codes.
const (
	ErrOK                       Err = 0
	ErrSystemError              Err = -1
	ErrRuntimeInconsistency     Err = -2
	ErrDataInconsistency        Err = -3
	ErrConnectionLoss           Err = -4
	ErrMarshallingError         Err = -5
	ErrUnimplemented            Err = -6
	ErrOperationTimeout         Err = -7
	ErrBadArguments             Err = -8
	ErrUnknownSession           Err = -12
	ErrNewConfigNoQuorum        Err = -13
	ErrReconfigInProgress       Err = -14
	ErrAPIError                 Err = -100
	ErrNoNode                   Err = -101
	ErrNoAuth                   Err = -102
	ErrBadVersion               Err = -103
	ErrNoChildrenForEphemerals  Err = -108
	ErrNodeExists               Err = -110
	ErrNotEmpty                 Err = -111
	ErrSessionExpired           Err = -112
	ErrInvalidCallback          Err = -113
	ErrInvalidACL               Err = -114
	ErrAuthFailed               Err = -115
	ErrSessionMoved             Err = -118
	ErrNotReadOnly              Err = -119
	ErrEphemeralOnLocalSession  Err = -120
	ErrNoWatcher                Err = -121
	ErrRequestTimeout           Err = -122
	ErrReconfigDisabled         Err = -123
	ErrSessionClosedRequireSASL Err = -124
	ErrQuotaExceeded            Err = -125
	ErrThrottledOp              Err = -127
)

var errNames = map[Err]string{
	ErrOK: "ok", ErrSystemError: "system error", ErrRuntimeInconsistency: "runtime inconsistency",
	ErrDataInconsistency: "data inconsistency", ErrConnectionLoss: "connection loss",
	ErrMarshallingError: "marshalling error", ErrUnimplemented: "unimplemented",
	ErrOperationTimeout: "operation timeout", ErrBadArguments: "bad arguments",
	ErrUnknownSession: "unknown session", ErrNewConfigNoQuorum: "new config no quorum",
	ErrReconfigInProgress: "reconfig in progress", ErrAPIError: "api error",
	ErrNoNode: "no node", ErrNoAuth: "not authenticated", ErrBadVersion: "bad version",
	ErrNoChildrenForEphemerals: "no children for ephemerals", ErrNodeExists: "node exists",
	ErrNotEmpty: "not empty", ErrSessionExpired: "session expired",
	ErrInvalidCallback: "invalid callback", ErrInvalidACL: "invalid acl",
	ErrAuthFailed: "auth failed", ErrSessionMoved: "session moved",
	ErrNotReadOnly: "not read only", ErrEphemeralOnLocalSession: "ephemeral on local session",
	ErrNoWatcher: "no watcher", ErrRequestTimeout: "request timeout",
	ErrReconfigDisabled: "reconfig disabled", ErrSessionClosedRequireSASL: "session closed, requires SASL",
	ErrQuotaExceeded: "quota exceeded", ErrThrottledOp: "throttled op",
}

// Error implements error. ErrOK is not an error; callers compare with ErrOK.
func (e Err) Error() string {
	if s, ok := errNames[e]; ok {
		return "zk: " + s
	}
	return fmt.Sprintf("zk: error %d", int32(e))
}

// Special xids.
const (
	XidNotification int32 = -1
	XidPing         int32 = -2
	XidAuth         int32 = -4
	XidSetWatches   int32 = -8
)

// CreateMode is the flags field of a create request.
type CreateMode int32

// Create modes.
const (
	ModePersistent                  CreateMode = 0
	ModeEphemeral                   CreateMode = 1
	ModePersistentSequential        CreateMode = 2
	ModeEphemeralSequential         CreateMode = 3
	ModeContainer                   CreateMode = 4
	ModePersistentWithTTL           CreateMode = 5
	ModePersistentSequentialWithTTL CreateMode = 6
)

// Valid reports whether m is a known create mode.
func (m CreateMode) Valid() bool { return m >= 0 && m <= 6 }

// Sequential reports whether m appends a sequence suffix.
func (m CreateMode) Sequential() bool {
	return m == ModePersistentSequential || m == ModeEphemeralSequential || m == ModePersistentSequentialWithTTL
}

// Ephemeral reports whether m creates an ephemeral node.
func (m CreateMode) Ephemeral() bool { return m == ModeEphemeral || m == ModeEphemeralSequential }

// TTL reports whether m creates a TTL node.
func (m CreateMode) TTL() bool {
	return m == ModePersistentWithTTL || m == ModePersistentSequentialWithTTL
}

// EventType is the type of a watch notification.
type EventType int32

// Event types.
const (
	EventNone                   EventType = -1
	EventNodeCreated            EventType = 1
	EventNodeDeleted            EventType = 2
	EventNodeDataChanged        EventType = 3
	EventNodeChildrenChanged    EventType = 4
	EventDataWatchRemoved       EventType = 5
	EventChildWatchRemoved      EventType = 6
	EventPersistentWatchRemoved EventType = 7
)

// State is a client's KeeperState as carried in watch notifications.
type State int32

// Keeper states.
const (
	StateDisconnected      State = 0
	StateSyncConnected     State = 3
	StateAuthFailed        State = 4
	StateConnectedReadOnly State = 5
	StateSaslAuthenticated State = 6
	StateExpired           State = -112
	StateClosed            State = 7
)

// Permission bits of an ACL.
const (
	PermRead   int32 = 1 << 0
	PermWrite  int32 = 1 << 1
	PermCreate int32 = 1 << 2
	PermDelete int32 = 1 << 3
	PermAdmin  int32 = 1 << 4
	PermAll    int32 = PermRead | PermWrite | PermCreate | PermDelete | PermAdmin
)

// AddWatch modes.
const (
	AddWatchPersistent          int32 = 0
	AddWatchPersistentRecursive int32 = 1
)

// WatcherType selects watches in checkWatches and removeWatches.
const (
	WatcherChildren int32 = 1
	WatcherData     int32 = 2
	WatcherAny      int32 = 3
)
