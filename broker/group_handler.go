package broker

import (
	"fmt"
	"net"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// groupRequest is what the group handlers need beyond the body: who
// asked (client id and host, shown by DescribeGroups).
type groupRequest struct {
	c        *conn
	clientID string
	host     string
}

// groupHandler is kmsgHandler for the group APIs, passing the client id
// from the request header.
func groupHandler[Req kmsg.Request](fn func(r groupRequest, req Req) kmsg.Response) handler {
	return func(c *conn, hdr *kproto.RequestHeader, body []byte) (*response, error) {
		// kmsg copies strings but not bytes: protocol metadata and
		// assignments outlive the frame buffer, so decode from a copy.
		body = append([]byte(nil), body...)
		kr, err := kproto.DecodeKmsg(hdr.APIKey, hdr.APIVersion, body)
		if err != nil {
			return nil, err
		}
		req, ok := kr.(Req)
		if !ok {
			return nil, fmt.Errorf("decoded %T for key %d", kr, hdr.APIKey)
		}
		host := c.nc.RemoteAddr().String()
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		kresp := fn(groupRequest{c: c, clientID: string(hdr.ClientID), host: "/" + host}, req)
		kresp.SetVersion(hdr.APIVersion)
		resp := newResponse()
		resp.buf = kproto.AppendKmsgResponseFrame(resp.buf[:0], hdr.CorrelationID, kresp)
		return resp, nil
	}
}
