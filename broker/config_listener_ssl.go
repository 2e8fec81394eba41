package broker

import (
	"strings"
)

// Per-listener SSL: listener.name.x.ssl.* sets an ssl.* key for listener
// X only, over the unprefixed one (Kafka's
// valuesWithPrefixOverride(listenerName.configPrefix)), so one listener
// can have its own keystore, truststore, client auth, protocols or
// cipher suites.

// listenerSSLPrefix is the prefix of the per-listener keys.
const listenerSSLPrefix = "listener.name."

// parseListenerSSL reads one listener.name.x.ssl.* key; ok is false for
// keys it does not own. The value is checked as the ssl.* key's.
func (c *Config) parseListenerSSL(k, v string) (ok bool, err error) {
	rest, ok := strings.CutPrefix(k, listenerSSLPrefix)
	if !ok {
		return false, nil
	}
	name, key, ok := strings.Cut(rest, ".")
	if !ok || !strings.HasPrefix(key, "ssl.") || name == "" {
		return false, nil
	}
	scratch := DefaultSSLConfig()
	if _, err := scratch.parseProperty(key, v); err != nil {
		return true, err
	}
	name = strings.ToUpper(name)
	if c.ListenerSSL == nil {
		c.ListenerSSL = map[string]map[string]string{}
	}
	if c.ListenerSSL[name] == nil {
		c.ListenerSSL[name] = map[string]string{}
	}
	c.ListenerSSL[name][key] = v
	return true, nil
}

// sslFor is the ssl.* config of listener name: SSL with its
// listener.name.x.ssl.* keys applied. The error names the key to blame.
func (c *Config) sslFor(name string) (SSLConfig, string, error) {
	s := c.SSL
	for key, v := range c.ListenerSSL[strings.ToUpper(name)] {
		if _, err := s.parseProperty(key, v); err != nil {
			return s, listenerSSLPrefix + strings.ToLower(name) + "." + key, err
		}
	}
	return s, "", nil
}
