// Package digestmd5 is the DIGEST-MD5 SASL mechanism of RFC 2831, with
// quality of protection "auth" only (authentication; no integrity or
// privacy layer), as ZooKeeper's clients and servers use it.
//
// No maintained Go library does DIGEST-MD5 (RFC 6331 made it historic;
// the Go SASL libraries stop at PLAIN, SCRAM and OAUTHBEARER), so the
// exchange is written here against the RFC, and checked against its
// example (section 4) and against an exchange of Java's own
// implementation (com.sun.security.sasl.digest), whose server ZooKeeper
// runs.
//
// The server side, one exchange per Server:
//
//	client                                   server
//	  │ (empty token)                           │
//	  │ ───────────────────────────────────────►│ Next: the challenge
//	  │ realm="zk-sasl-md5",nonce="…",charset=utf-8,algorithm=md5-sess
//	  │ ◄───────────────────────────────────────│
//	  │ username="u",realm=…,nonce=…,nc=00000001,cnonce=…,
//	  │ digest-uri="zookeeper/zk-sasl-md5",response=<32 hex>,qop=auth
//	  │ ───────────────────────────────────────►│ Next: checks the response
//	  │ rspauth=<32 hex>                        │ (Complete: User is the user)
//	  │ ◄───────────────────────────────────────│
//
// The challenge is the one Java's DigestMD5Server sends: the realm, a
// nonce of 30 random bytes in base64, charset=utf-8, algorithm=md5-sess,
// and no qop directive (which means auth). A response is refused, with an
// *Error, when it is malformed, names another realm, nonce or digest-uri,
// counts past 1, asks for another qop, names an unknown user or carries a
// wrong digest. The hashes (section 2.1.2.1):
//
//	A1       = H(user ":" realm ":" password) ":" nonce ":" cnonce [":" authzid]
//	A2       = "AUTHENTICATE:" digest-uri      (rspauth: ":" digest-uri)
//	response = HEX(H(HEX(H(A1)) ":" nonce ":" nc ":" cnonce ":" qop ":" HEX(H(A2))))
//
// where user, realm and password are in ISO 8859-1 when every character
// fits, else in UTF-8 (charset=utf-8), as the RFC and Java do.
//
// Client is the other side, for ZooKeeper clients (and tests).
package digestmd5
