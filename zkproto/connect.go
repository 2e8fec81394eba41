package zkproto

// ConnectRequest is the body of a client's first frame (no RequestHeader).
//
// readOnly is a hand-written exception to zookeeper.jute: ZooKeeper 3.8's
// schema stops at passwd and ZooKeeperServer.processConnectRequest reads the
// readOnly byte by hand, treating its absence as an old (<= 3.3) client.
// go-zookeeper/zk v1.0.4 does not send it either. Decode accepts both shapes
// and records which one arrived in HasReadOnly, so the server can answer in
// the same shape (see ConnectResponse).
type ConnectRequest struct {
	ProtocolVersion int32
	LastZxidSeen    int64
	TimeOut         int32 // requested session timeout, ms
	SessionID       int64 // 0 for a new session
	Passwd          []byte
	ReadOnly        bool // client accepts a read-only server
	HasReadOnly     bool // the readOnly byte was (or is to be) on the wire
}

// Append appends c; the readOnly byte only when c.HasReadOnly is set.
func (c *ConnectRequest) Append(dst []byte) []byte {
	dst = AppendInt(dst, c.ProtocolVersion)
	dst = AppendLong(dst, c.LastZxidSeen)
	dst = AppendInt(dst, c.TimeOut)
	dst = AppendLong(dst, c.SessionID)
	dst = AppendBuffer(dst, c.Passwd)
	if c.HasReadOnly {
		dst = AppendBool(dst, c.ReadOnly)
	}
	return dst
}

// Decode reads c from r. The readOnly byte is read if a byte remains after
// passwd; bytes after it are left unread (ZooKeeper ignores them too).
func (c *ConnectRequest) Decode(r *Reader) {
	c.ProtocolVersion = r.Int()
	c.LastZxidSeen = r.Long()
	c.TimeOut = r.Int()
	c.SessionID = r.Long()
	c.Passwd = r.Buffer()
	c.ReadOnly, c.HasReadOnly = false, false
	if r.Err() == nil && r.Len() > 0 {
		c.ReadOnly = r.Bool()
		c.HasReadOnly = true
	}
}

// ConnectResponse is the body of the server's first frame (no ReplyHeader).
// ZooKeeper writes the readOnly byte only to clients that sent one
// (HasReadOnly); a rejected session gets TimeOut 0, SessionID 0 and a
// 16-byte zero password, and the connection is then closed.
type ConnectResponse struct {
	ProtocolVersion int32
	TimeOut         int32 // negotiated session timeout, ms
	SessionID       int64
	Passwd          []byte
	ReadOnly        bool // the server is read-only
	HasReadOnly     bool
}

// Append appends c; the readOnly byte only when c.HasReadOnly is set.
func (c *ConnectResponse) Append(dst []byte) []byte {
	dst = AppendInt(dst, c.ProtocolVersion)
	dst = AppendInt(dst, c.TimeOut)
	dst = AppendLong(dst, c.SessionID)
	dst = AppendBuffer(dst, c.Passwd)
	if c.HasReadOnly {
		dst = AppendBool(dst, c.ReadOnly)
	}
	return dst
}

// Decode reads c from r, accepting both shapes like ConnectRequest.Decode.
func (c *ConnectResponse) Decode(r *Reader) {
	c.ProtocolVersion = r.Int()
	c.TimeOut = r.Int()
	c.SessionID = r.Long()
	c.Passwd = r.Buffer()
	c.ReadOnly, c.HasReadOnly = false, false
	if r.Err() == nil && r.Len() > 0 {
		c.ReadOnly = r.Bool()
		c.HasReadOnly = true
	}
}
