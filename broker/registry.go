package broker

import (
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// The API registry. Each API file registers its key with the version range
// it implements (regKey, in an init func); ApiVersions advertises exactly
// these ranges. Registering a key twice panics at init.
//
// Dispatch rules, as Kafka:
//   - a key that is not registered: the connection is closed with a log
//     line (Kafka fails to parse the header and closes);
//   - a registered key at a version outside its range: ApiVersions gets
//     the v0-shaped UNSUPPORTED_VERSION reply (KIP-511); any other key
//     closes the connection;
//   - a body that does not decode closes the connection;
//   - request-level failures are error codes in the response.

// handler handles one request and returns its response; nil means no
// response (Produce with acks=0). An error closes the connection.
type handler func(c *conn, hdr *kproto.RequestHeader, body []byte) (*response, error)

type apiDef struct {
	key, min, max int16
	handle        handler
	advertised    bool
}

var apis = map[int16]*apiDef{}

// regKey registers an advertised API.
func regKey(key, minV, maxV int16, h handler) { register(key, minV, maxV, h, true) }

// regHidden registers an API that is answered (with errors) but not
// advertised, such as the group APIs before the coordinator exists.
func regHidden(key, minV, maxV int16, h handler) { register(key, minV, maxV, h, false) }

func register(key, minV, maxV int16, h handler, advertised bool) {
	if _, dup := apis[key]; dup {
		panic(fmt.Sprintf("broker: api key %d (%s) registered twice", key, kmsg.NameForKey(key)))
	}
	apis[key] = &apiDef{key: key, min: minV, max: maxV, handle: h, advertised: advertised}
}

// advertisedVersions lists the advertised keys and ranges, by key.
func advertisedVersions() []kproto.ApiVersionsRange {
	var out []kproto.ApiVersionsRange
	for _, d := range apis {
		if d.advertised {
			out = append(out, kproto.ApiVersionsRange{APIKey: d.key, MinVersion: d.min, MaxVersion: d.max})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].APIKey < out[j].APIKey })
	return out
}

// dispatch routes one request to its handler.
func (c *conn) dispatch(hdr *kproto.RequestHeader, body []byte) (*response, error) {
	d := apis[hdr.APIKey]
	if d == nil {
		return nil, fmt.Errorf("unknown api key %d", hdr.APIKey)
	}
	if hdr.APIVersion < d.min || hdr.APIVersion > d.max {
		if hdr.APIKey == kproto.KeyApiVersions {
			return apiVersionsUnsupported(hdr), nil
		}
		return nil, fmt.Errorf("unsupported version %d of %s (serving %d-%d)",
			hdr.APIVersion, kmsg.NameForKey(hdr.APIKey), d.min, d.max)
	}
	if resp, handled, err := c.hooked(hdr, body); handled {
		return resp, err
	}
	return d.handle(c, hdr, body)
}

// kmsgHandler adapts a handler written against franz-go's kmsg types:
// the body is decoded with kproto.DecodeKmsg and the response encoded at
// the request's version.
func kmsgHandler[Req kmsg.Request](fn func(c *conn, req Req) (kmsg.Response, error)) handler {
	return func(c *conn, hdr *kproto.RequestHeader, body []byte) (*response, error) {
		kr, err := kproto.DecodeKmsg(hdr.APIKey, hdr.APIVersion, body)
		if err != nil {
			return nil, err
		}
		req, ok := kr.(Req)
		if !ok {
			return nil, fmt.Errorf("decoded %T for key %d", kr, hdr.APIKey)
		}
		kresp, err := fn(c, req)
		if err != nil || kresp == nil {
			return nil, err
		}
		kresp.SetVersion(hdr.APIVersion)
		resp := newResponse()
		resp.buf = kproto.AppendKmsgResponseFrame(resp.buf[:0], hdr.CorrelationID, kresp)
		return resp, nil
	}
}

// frame wraps a body appended by fn into a response frame with the
// header for hdr.
func frame(hdr *kproto.RequestHeader, fn func(dst []byte) []byte) *response {
	resp := newResponse()
	buf, start := kproto.BeginFrame(resp.buf[:0])
	buf = kproto.AppendResponseHeader(buf, hdr.APIKey, hdr.APIVersion, hdr.CorrelationID)
	buf = fn(buf)
	kproto.EndFrame(buf, start, 0)
	resp.buf = buf
	return resp
}
