package zkproto

// SetWatches is the body of setWatches (xid XidSetWatches), sent by a
// client on reconnect to re-arm its watches. RelativeZxid is the last zxid
// the client saw: the server fires at once the watches whose node changed
// after it.
type SetWatches struct {
	RelativeZxid int64
	DataWatches  []string
	ExistWatches []string
	ChildWatches []string
}

// Append appends s in jute order.
func (s *SetWatches) Append(dst []byte) []byte {
	dst = AppendLong(dst, s.RelativeZxid)
	dst = AppendStrings(dst, s.DataWatches)
	dst = AppendStrings(dst, s.ExistWatches)
	return AppendStrings(dst, s.ChildWatches)
}

// Decode reads s from r.
func (s *SetWatches) Decode(r *Reader) {
	s.RelativeZxid = r.Long()
	s.DataWatches = r.Strings()
	s.ExistWatches = r.Strings()
	s.ChildWatches = r.Strings()
}

// SetWatches2 is the body of setWatches2: SetWatches plus persistent and
// persistent recursive watches.
type SetWatches2 struct {
	RelativeZxid               int64
	DataWatches                []string
	ExistWatches               []string
	ChildWatches               []string
	PersistentWatches          []string
	PersistentRecursiveWatches []string
}

// Append appends s in jute order.
func (s *SetWatches2) Append(dst []byte) []byte {
	dst = AppendLong(dst, s.RelativeZxid)
	dst = AppendStrings(dst, s.DataWatches)
	dst = AppendStrings(dst, s.ExistWatches)
	dst = AppendStrings(dst, s.ChildWatches)
	dst = AppendStrings(dst, s.PersistentWatches)
	return AppendStrings(dst, s.PersistentRecursiveWatches)
}

// Decode reads s from r.
func (s *SetWatches2) Decode(r *Reader) {
	s.RelativeZxid = r.Long()
	s.DataWatches = r.Strings()
	s.ExistWatches = r.Strings()
	s.ChildWatches = r.Strings()
	s.PersistentWatches = r.Strings()
	s.PersistentRecursiveWatches = r.Strings()
}

// AddWatchRequest is the body of addWatch; its reply has no body.
type AddWatchRequest struct {
	Path string
	Mode int32 // AddWatchPersistent or AddWatchPersistentRecursive
}

// Append appends a in jute order.
func (a *AddWatchRequest) Append(dst []byte) []byte {
	return AppendInt(AppendString(dst, a.Path), a.Mode)
}

// Decode reads a from r.
func (a *AddWatchRequest) Decode(r *Reader) {
	a.Path = r.String()
	a.Mode = r.Int()
}

// CheckWatchesRequest is the body of checkWatches; its reply has no body.
type CheckWatchesRequest struct {
	Path string
	Type int32 // WatcherChildren, WatcherData or WatcherAny
}

// Append appends c in jute order.
func (c *CheckWatchesRequest) Append(dst []byte) []byte {
	return AppendInt(AppendString(dst, c.Path), c.Type)
}

// Decode reads c from r.
func (c *CheckWatchesRequest) Decode(r *Reader) {
	c.Path = r.String()
	c.Type = r.Int()
}

// RemoveWatchesRequest is the body of removeWatches; its reply has no body.
type RemoveWatchesRequest struct {
	Path string
	Type int32 // WatcherChildren, WatcherData or WatcherAny
}

// Append appends c in jute order.
func (c *RemoveWatchesRequest) Append(dst []byte) []byte {
	return AppendInt(AppendString(dst, c.Path), c.Type)
}

// Decode reads c from r.
func (c *RemoveWatchesRequest) Decode(r *Reader) {
	c.Path = r.String()
	c.Type = r.Int()
}

// WatcherEvent is the body of a notification (see AppendNotification).
// Path is the client's view: the chroot, if any, already stripped.
type WatcherEvent struct {
	Type  EventType
	State State
	Path  string
}

// Append appends w in jute order.
func (w *WatcherEvent) Append(dst []byte) []byte {
	dst = AppendInt(dst, int32(w.Type))
	dst = AppendInt(dst, int32(w.State))
	return AppendString(dst, w.Path)
}

// Decode reads w from r.
func (w *WatcherEvent) Decode(r *Reader) {
	w.Type = EventType(r.Int())
	w.State = State(r.Int())
	w.Path = r.String()
}
