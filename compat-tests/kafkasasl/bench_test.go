package kafkasasl

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/xdg-go/scram"
)

// BenchmarkSCRAMAuthentications measures SCRAM-SHA-256 and SCRAM-SHA-512
// logins per second against an in-process broker: each op dials the
// SASL_PLAINTEXT listener and runs SaslHandshake and the two
// SaslAuthenticate round trips, in parallel on GOMAXPROCS×4 goroutines.
// The client side is xdg-go/scram with its derived keys cached, so the
// PBKDF2 of the 4096 iterations is paid once, as a broker's stored keys
// spare it too; what is left is the exchange: HMACs, nonces, round trips.
func BenchmarkSCRAMAuthentications(b *testing.B) {
	e := saslBroker(b, nil)
	for _, mech := range []string{"SCRAM-SHA-256", "SCRAM-SHA-512"} {
		user := "bench-" + mech[len(mech)-3:]
		addSCRAM(b, e, user, "bench-pw", mech)
		hash := scram.SHA256
		if mech == "SCRAM-SHA-512" {
			hash = scram.SHA512
		}
		client, err := hash.NewClient(user, "bench-pw", "")
		if err != nil {
			b.Fatal(err)
		}
		b.Run(mech, func(b *testing.B) {
			b.SetParallelism(4)
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := scramLogin(saslAddr(e), mech, client); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "auths/s")
		})
	}
}

// scramLogin logs in once on a new connection.
func scramLogin(addr, mech string, client *scram.Client) error {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Mechanism = mech
	var hsResp kmsg.SASLHandshakeResponse
	if err := rawCall(nc, hs, &hsResp, 1); err != nil || hsResp.ErrorCode != 0 {
		return fmt.Errorf("handshake: %v %d", err, hsResp.ErrorCode)
	}
	conv := client.NewConversation()
	msg, err := conv.Step("")
	for err == nil && !conv.Done() {
		req := kmsg.NewPtrSASLAuthenticateRequest()
		req.SASLAuthBytes = []byte(msg)
		var resp kmsg.SASLAuthenticateResponse
		if err := rawCall(nc, req, &resp, 1); err != nil || resp.ErrorCode != 0 {
			return fmt.Errorf("authenticate: %v %d", err, resp.ErrorCode)
		}
		msg, err = conv.Step(string(resp.SASLAuthBytes))
	}
	if err != nil || !conv.Valid() {
		return fmt.Errorf("SCRAM exchange: %v", err)
	}
	return nil
}

// rawCall sends req at version (header v1) and decodes the response.
func rawCall(nc net.Conn, req kmsg.Request, resp kmsg.Response, version int16) error {
	req.SetVersion(version)
	buf := make([]byte, 4, 256)
	buf = binary.BigEndian.AppendUint16(buf, uint16(req.Key()))
	buf = binary.BigEndian.AppendUint16(buf, uint16(version))
	buf = binary.BigEndian.AppendUint32(buf, 1)      // correlation id
	buf = binary.BigEndian.AppendUint16(buf, 0xffff) // null client id
	buf = req.AppendTo(buf)
	binary.BigEndian.PutUint32(buf, uint32(len(buf)-4))
	if _, err := nc.Write(buf); err != nil {
		return err
	}
	var size [4]byte
	if _, err := io.ReadFull(nc, size[:]); err != nil {
		return err
	}
	frame := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(nc, frame); err != nil {
		return err
	}
	resp.SetVersion(version)
	return resp.ReadFrom(frame[4:])
}
