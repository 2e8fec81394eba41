package zkproto

// CreateRequest is the body of create, create2 and createContainer (and of
// those ops inside a multi).
type CreateRequest struct {
	Path  string
	Data  []byte
	ACL   []ACL
	Flags CreateMode
}

// Append appends c in jute order.
func (c *CreateRequest) Append(dst []byte) []byte {
	dst = AppendString(dst, c.Path)
	dst = AppendBuffer(dst, c.Data)
	dst = AppendACLs(dst, c.ACL)
	return AppendInt(dst, int32(c.Flags))
}

// Decode reads c from r.
func (c *CreateRequest) Decode(r *Reader) {
	c.Path = r.String()
	c.Data = r.Buffer()
	c.ACL = DecodeACLs(r)
	c.Flags = CreateMode(r.Int())
}

// CreateTTLRequest is the body of createTTL: a CreateRequest plus a TTL.
type CreateTTLRequest struct {
	Path  string
	Data  []byte
	ACL   []ACL
	Flags CreateMode
	TTL   int64 // ms
}

// Append appends c in jute order.
func (c *CreateTTLRequest) Append(dst []byte) []byte {
	dst = AppendString(dst, c.Path)
	dst = AppendBuffer(dst, c.Data)
	dst = AppendACLs(dst, c.ACL)
	dst = AppendInt(dst, int32(c.Flags))
	return AppendLong(dst, c.TTL)
}

// Decode reads c from r.
func (c *CreateTTLRequest) Decode(r *Reader) {
	c.Path = r.String()
	c.Data = r.Buffer()
	c.ACL = DecodeACLs(r)
	c.Flags = CreateMode(r.Int())
	c.TTL = r.Long()
}

// DeleteRequest is the body of delete.
type DeleteRequest struct {
	Path    string
	Version int32 // -1 matches any version
}

// Append appends d in jute order.
func (d *DeleteRequest) Append(dst []byte) []byte {
	return AppendInt(AppendString(dst, d.Path), d.Version)
}

// Decode reads d from r.
func (d *DeleteRequest) Decode(r *Reader) {
	d.Path = r.String()
	d.Version = r.Int()
}

// DeleteContainerRequest is the body of deleteContainer, which ZooKeeper's
// container manager submits internally but Request.isValid also accepts from
// a client. It is not a jute record: the whole body is the raw UTF-8 path,
// with no length prefix (PrepRequestProcessor reads request.array()).
type DeleteContainerRequest struct {
	Path string
}

// Append appends the raw path.
func (d *DeleteContainerRequest) Append(dst []byte) []byte { return append(dst, d.Path...) }

// Decode consumes every remaining byte as the path.
func (d *DeleteContainerRequest) Decode(r *Reader) {
	d.Path = string(r.take(r.Len()))
}

// ExistsRequest is the body of exists.
type ExistsRequest struct {
	Path  string
	Watch bool
}

// Append appends e in jute order.
func (e *ExistsRequest) Append(dst []byte) []byte {
	return AppendBool(AppendString(dst, e.Path), e.Watch)
}

// Decode reads e from r.
func (e *ExistsRequest) Decode(r *Reader) {
	e.Path = r.String()
	e.Watch = r.Bool()
}

// GetDataRequest is the body of getData (and of getData inside a
// multiRead, where ZooKeeper ignores Watch).
type GetDataRequest struct {
	Path  string
	Watch bool
}

// Append appends g in jute order.
func (g *GetDataRequest) Append(dst []byte) []byte {
	return AppendBool(AppendString(dst, g.Path), g.Watch)
}

// Decode reads g from r.
func (g *GetDataRequest) Decode(r *Reader) {
	g.Path = r.String()
	g.Watch = r.Bool()
}

// SetDataRequest is the body of setData.
type SetDataRequest struct {
	Path    string
	Data    []byte
	Version int32 // -1 matches any version
}

// Append appends s in jute order.
func (s *SetDataRequest) Append(dst []byte) []byte {
	dst = AppendString(dst, s.Path)
	dst = AppendBuffer(dst, s.Data)
	return AppendInt(dst, s.Version)
}

// Decode reads s from r.
func (s *SetDataRequest) Decode(r *Reader) {
	s.Path = r.String()
	s.Data = r.Buffer()
	s.Version = r.Int()
}

// GetACLRequest is the body of getACL.
type GetACLRequest struct {
	Path string
}

// Append appends g in jute order.
func (g *GetACLRequest) Append(dst []byte) []byte { return AppendString(dst, g.Path) }

// Decode reads g from r.
func (g *GetACLRequest) Decode(r *Reader) { g.Path = r.String() }

// SetACLRequest is the body of setACL.
type SetACLRequest struct {
	Path    string
	ACL     []ACL
	Version int32 // expected aversion, -1 matches any
}

// Append appends s in jute order.
func (s *SetACLRequest) Append(dst []byte) []byte {
	dst = AppendString(dst, s.Path)
	dst = AppendACLs(dst, s.ACL)
	return AppendInt(dst, s.Version)
}

// Decode reads s from r.
func (s *SetACLRequest) Decode(r *Reader) {
	s.Path = r.String()
	s.ACL = DecodeACLs(r)
	s.Version = r.Int()
}

// GetChildrenRequest is the body of getChildren and getChildren2 (jute's
// GetChildren2Request has the same shape), and of getChildren inside a
// multiRead, where ZooKeeper ignores Watch.
type GetChildrenRequest struct {
	Path  string
	Watch bool
}

// Append appends g in jute order.
func (g *GetChildrenRequest) Append(dst []byte) []byte {
	return AppendBool(AppendString(dst, g.Path), g.Watch)
}

// Decode reads g from r.
func (g *GetChildrenRequest) Decode(r *Reader) {
	g.Path = r.String()
	g.Watch = r.Bool()
}

// GetAllChildrenNumberRequest is the body of getAllChildrenNumber.
type GetAllChildrenNumberRequest struct {
	Path string
}

// Append appends g in jute order.
func (g *GetAllChildrenNumberRequest) Append(dst []byte) []byte { return AppendString(dst, g.Path) }

// Decode reads g from r.
func (g *GetAllChildrenNumberRequest) Decode(r *Reader) { g.Path = r.String() }

// GetEphemeralsRequest is the body of getEphemerals.
type GetEphemeralsRequest struct {
	PrefixPath string
}

// Append appends g in jute order.
func (g *GetEphemeralsRequest) Append(dst []byte) []byte { return AppendString(dst, g.PrefixPath) }

// Decode reads g from r.
func (g *GetEphemeralsRequest) Decode(r *Reader) { g.PrefixPath = r.String() }

// SyncRequest is the body of sync.
type SyncRequest struct {
	Path string
}

// Append appends s in jute order.
func (s *SyncRequest) Append(dst []byte) []byte { return AppendString(dst, s.Path) }

// Decode reads s from r.
func (s *SyncRequest) Decode(r *Reader) { s.Path = r.String() }

// CheckVersionRequest is the body of check inside a multi (a standalone
// check is refused by DecodeRequest, as by ZooKeeper).
type CheckVersionRequest struct {
	Path    string
	Version int32
}

// Append appends c in jute order.
func (c *CheckVersionRequest) Append(dst []byte) []byte {
	return AppendInt(AppendString(dst, c.Path), c.Version)
}

// Decode reads c from r.
func (c *CheckVersionRequest) Decode(r *Reader) {
	c.Path = r.String()
	c.Version = r.Int()
}

// ReconfigRequest is the body of reconfig; its reply is a GetDataResponse
// (the new config and the stat of /zookeeper/config).
type ReconfigRequest struct {
	JoiningServers string
	LeavingServers string
	NewMembers     string
	CurConfigID    int64
}

// Append appends c in jute order.
func (c *ReconfigRequest) Append(dst []byte) []byte {
	dst = AppendString(dst, c.JoiningServers)
	dst = AppendString(dst, c.LeavingServers)
	dst = AppendString(dst, c.NewMembers)
	return AppendLong(dst, c.CurConfigID)
}

// Decode reads c from r.
func (c *ReconfigRequest) Decode(r *Reader) {
	c.JoiningServers = r.String()
	c.LeavingServers = r.String()
	c.NewMembers = r.String()
	c.CurConfigID = r.Long()
}
