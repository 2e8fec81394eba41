package zkproto

// CreateResponse is the reply to create.
type CreateResponse struct {
	Path string // the created path, with any sequence suffix
}

// Append appends c in jute order.
func (c *CreateResponse) Append(dst []byte) []byte { return AppendString(dst, c.Path) }

// Decode reads c from r.
func (c *CreateResponse) Decode(r *Reader) { c.Path = r.String() }

// Create2Response is the reply to create2, createTTL and createContainer.
type Create2Response struct {
	Path string
	Stat Stat
}

// Append appends c in jute order.
func (c *Create2Response) Append(dst []byte) []byte {
	return c.Stat.Append(AppendString(dst, c.Path))
}

// Decode reads c from r.
func (c *Create2Response) Decode(r *Reader) {
	c.Path = r.String()
	c.Stat.Decode(r)
}

// ExistsResponse is the reply to exists (a missing node is ErrNoNode in
// the header with no body).
type ExistsResponse struct {
	Stat Stat
}

// Append appends e in jute order.
func (e *ExistsResponse) Append(dst []byte) []byte { return e.Stat.Append(dst) }

// Decode reads e from r.
func (e *ExistsResponse) Decode(r *Reader) { e.Stat.Decode(r) }

// GetDataResponse is the reply to getData and reconfig. Data nil (a node
// created with null data) is encoded as a null buffer.
type GetDataResponse struct {
	Data []byte
	Stat Stat
}

// Append appends g in jute order.
func (g *GetDataResponse) Append(dst []byte) []byte {
	return g.Stat.Append(AppendBuffer(dst, g.Data))
}

// Decode reads g from r.
func (g *GetDataResponse) Decode(r *Reader) {
	g.Data = r.Buffer()
	g.Stat.Decode(r)
}

// SetDataResponse is the reply to setData.
type SetDataResponse struct {
	Stat Stat
}

// Append appends s in jute order.
func (s *SetDataResponse) Append(dst []byte) []byte { return s.Stat.Append(dst) }

// Decode reads s from r.
func (s *SetDataResponse) Decode(r *Reader) { s.Stat.Decode(r) }

// GetACLResponse is the reply to getACL.
type GetACLResponse struct {
	ACL  []ACL
	Stat Stat
}

// Append appends g in jute order.
func (g *GetACLResponse) Append(dst []byte) []byte {
	return g.Stat.Append(AppendACLs(dst, g.ACL))
}

// Decode reads g from r.
func (g *GetACLResponse) Decode(r *Reader) {
	g.ACL = DecodeACLs(r)
	g.Stat.Decode(r)
}

// SetACLResponse is the reply to setACL.
type SetACLResponse struct {
	Stat Stat
}

// Append appends s in jute order.
func (s *SetACLResponse) Append(dst []byte) []byte { return s.Stat.Append(dst) }

// Decode reads s from r.
func (s *SetACLResponse) Decode(r *Reader) { s.Stat.Decode(r) }

// GetChildrenResponse is the reply to getChildren.
type GetChildrenResponse struct {
	Children []string
}

// Append appends g in jute order.
func (g *GetChildrenResponse) Append(dst []byte) []byte { return AppendStrings(dst, g.Children) }

// Decode reads g from r.
func (g *GetChildrenResponse) Decode(r *Reader) { g.Children = r.Strings() }

// GetChildren2Response is the reply to getChildren2.
type GetChildren2Response struct {
	Children []string
	Stat     Stat
}

// Append appends g in jute order.
func (g *GetChildren2Response) Append(dst []byte) []byte {
	return g.Stat.Append(AppendStrings(dst, g.Children))
}

// Decode reads g from r.
func (g *GetChildren2Response) Decode(r *Reader) {
	g.Children = r.Strings()
	g.Stat.Decode(r)
}

// GetAllChildrenNumberResponse is the reply to getAllChildrenNumber.
type GetAllChildrenNumberResponse struct {
	TotalNumber int32 // descendants of the path, not counting the path itself
}

// Append appends g in jute order.
func (g *GetAllChildrenNumberResponse) Append(dst []byte) []byte {
	return AppendInt(dst, g.TotalNumber)
}

// Decode reads g from r.
func (g *GetAllChildrenNumberResponse) Decode(r *Reader) { g.TotalNumber = r.Int() }

// GetEphemeralsResponse is the reply to getEphemerals.
type GetEphemeralsResponse struct {
	Ephemerals []string
}

// Append appends g in jute order.
func (g *GetEphemeralsResponse) Append(dst []byte) []byte { return AppendStrings(dst, g.Ephemerals) }

// Decode reads g from r.
func (g *GetEphemeralsResponse) Decode(r *Reader) { g.Ephemerals = r.Strings() }

// SyncResponse is the reply to sync.
type SyncResponse struct {
	Path string
}

// Append appends s in jute order.
func (s *SyncResponse) Append(dst []byte) []byte { return AppendString(dst, s.Path) }

// Decode reads s from r.
func (s *SyncResponse) Decode(r *Reader) { s.Path = r.String() }
