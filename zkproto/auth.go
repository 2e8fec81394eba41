package zkproto

// AuthPacket is the body of auth (xid XidAuth). Type is unused and 0.
// ZooKeeper answers an unknown scheme or a rejected credential with
// ErrAuthFailed and then closes the connection.
type AuthPacket struct {
	Type   int32
	Scheme string
	Auth   []byte
}

// Append appends a in jute order.
func (a *AuthPacket) Append(dst []byte) []byte {
	dst = AppendInt(dst, a.Type)
	dst = AppendString(dst, a.Scheme)
	return AppendBuffer(dst, a.Auth)
}

// Decode reads a from r.
func (a *AuthPacket) Decode(r *Reader) {
	a.Type = r.Int()
	a.Scheme = r.String()
	a.Auth = r.Buffer()
}

// ClientInfo is one identity of a session, as whoAmI reports it.
type ClientInfo struct {
	AuthScheme string
	User       string
}

// WhoAmIResponse is the reply to whoAmI (whose request has no body).
type WhoAmIResponse struct {
	ClientInfo []ClientInfo
}

// Append appends w in jute order.
func (w *WhoAmIResponse) Append(dst []byte) []byte {
	dst = AppendInt(dst, int32(len(w.ClientInfo)))
	for _, c := range w.ClientInfo {
		dst = AppendString(AppendString(dst, c.AuthScheme), c.User)
	}
	return dst
}

// Decode reads w from r.
func (w *WhoAmIResponse) Decode(r *Reader) {
	w.ClientInfo = nil
	n := r.VectorLen(8)
	if n == 0 {
		return
	}
	w.ClientInfo = make([]ClientInfo, n)
	for i := range w.ClientInfo {
		w.ClientInfo[i] = ClientInfo{AuthScheme: r.String(), User: r.String()}
	}
}

// GetSASLRequest is the body of sasl (opcode 102): one SASL token.
type GetSASLRequest struct {
	Token []byte
}

// Append appends g in jute order.
func (g *GetSASLRequest) Append(dst []byte) []byte { return AppendBuffer(dst, g.Token) }

// Decode reads g from r.
func (g *GetSASLRequest) Decode(r *Reader) { g.Token = r.Buffer() }

// SetSASLResponse is the reply to sasl: the server's SASL token.
type SetSASLResponse struct {
	Token []byte
}

// Append appends s in jute order.
func (s *SetSASLResponse) Append(dst []byte) []byte { return AppendBuffer(dst, s.Token) }

// Decode reads s from r.
func (s *SetSASLResponse) Decode(r *Reader) { s.Token = r.Buffer() }
