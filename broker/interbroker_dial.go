package broker

import (
	"context"
	"crypto/tls"
	"net"

	"github.com/twmb/franz-go/pkg/kgo"
)

// InterBrokerDialer opens a connection to addr (host:port of another
// broker's inter-broker listener) as net.Dialer.DialContext does.
type InterBrokerDialer func(ctx context.Context, network, addr string) (net.Conn, error)

// interBrokerDialOpts are the dialing options of the broker's clients of
// other brokers: TLS over a plain dial when tlsCfg is set, and
// Config.InterBrokerDial in place of the plain dial when that is set (kgo
// takes either a Dialer or a TLS config, so with both the dialer's
// connection is wrapped here, its server name the host dialed, as kgo's
// DialTLSConfig sets it).
func (b *Broker) interBrokerDialOpts(tlsCfg *tls.Config) []kgo.Opt {
	dial := b.cfg.InterBrokerDial
	switch {
	case dial == nil && tlsCfg == nil:
		return nil
	case dial == nil:
		return []kgo.Opt{kgo.DialTLSConfig(tlsCfg)}
	case tlsCfg == nil:
		return []kgo.Opt{kgo.Dialer(dial)}
	}
	return []kgo.Opt{kgo.Dialer(func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		cfg := tlsCfg.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		tc := tls.Client(nc, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, err
		}
		return tc, nil
	})}
}
