package broker

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/zkafka/zkafka/internal/jaas"
	"github.com/zkafka/zkafka/internal/properties"
)

// SASLConfig is the SASL keys of the broker, as Kafka's
// BrokerSecurityConfigs and SaslConfigs have them. A SASL_PLAINTEXT or
// SASL_SSL listener offers the mechanisms of
// listener.name.X.sasl.enabled.mechanisms, else sasl.enabled.mechanisms;
// PLAIN's users are the user_NAME options of the PlainLoginModule in
// listener.name.X.plain.sasl.jaas.config, else in the JAAS file's
// x.KafkaServer or KafkaServer section; SCRAM's credentials are in
// ZooKeeper (/config/users, scram_store.go).
type SASLConfig struct {
	// EnabledMechanisms is sasl.enabled.mechanisms; Kafka's default is
	// GSSAPI, which zkafka does not offer (PLAIN, SCRAM-SHA-256 and
	// SCRAM-SHA-512 are).
	EnabledMechanisms []string
	// Listeners are the listener.name.X.* SASL keys, by upper-case
	// listener name.
	Listeners map[string]*SASLListenerConfig
	// JAASFile is the JAAS file, the java.security.auth.login.config
	// system property of KAFKA_OPTS as Kafka's users give it (LoadConfig
	// reads the environment).
	JAASFile string
	// ReauthMax is connections.max.reauth.ms (0: sessions never expire):
	// the session lifetime a client is told (KIP-368), after which a
	// request on a connection that did not re-authenticate closes it.
	ReauthMax time.Duration
	// FailedAuthDelay is connection.failed.authentication.delay.ms (100 ms):
	// how long a failed authentication waits before its answer and close.
	FailedAuthDelay time.Duration
	// MaxReceiveSize is sasl.server.max.receive.size (512 KiB): the largest
	// frame read before authentication.
	MaxReceiveSize int32
}

// SASLListenerConfig is one listener's listener.name.X.* SASL keys.
type SASLListenerConfig struct {
	// EnabledMechanisms is listener.name.X.sasl.enabled.mechanisms (nil:
	// the broker's).
	EnabledMechanisms []string
	// JAAS is listener.name.X.MECH.sasl.jaas.config, by lower-case mechanism.
	JAAS map[string][]jaas.Entry
	// ReauthMax is listener.name.X.MECH.connections.max.reauth.ms, by
	// lower-case mechanism.
	ReauthMax map[string]time.Duration
}

// DefaultSASLConfig has Kafka's defaults.
func DefaultSASLConfig() SASLConfig {
	return SASLConfig{EnabledMechanisms: []string{"GSSAPI"}, FailedAuthDelay: 100 * time.Millisecond, MaxReceiveSize: 524288}
}

// saslMechanisms are the mechanisms zkafka offers.
var saslMechanisms = []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}

// jaasFileProperty is the JVM system property naming the JAAS file.
const jaasFileProperty = "java.security.auth.login.config"

// listener returns the listener.name.X config of listener name, made when
// missing.
func (s *SASLConfig) listener(name string) *SASLListenerConfig {
	name = strings.ToUpper(name)
	if s.Listeners == nil {
		s.Listeners = map[string]*SASLListenerConfig{}
	}
	l := s.Listeners[name]
	if l == nil {
		l = &SASLListenerConfig{JAAS: map[string][]jaas.Entry{}, ReauthMax: map[string]time.Duration{}}
		s.Listeners[name] = l
	}
	return l
}

// parseProperty reads one SASL key; ok is false for keys it does not own.
// A sasl.jaas.config value is a secret: errors about it never show it.
func (s *SASLConfig) parseProperty(p properties.Property, log *slog.Logger) (ok bool, err error) {
	k, v := p.Key, p.Trimmed()
	switch k {
	case "sasl.enabled.mechanisms":
		s.EnabledMechanisms = splitList(v)
		return true, nil
	case "connections.max.reauth.ms":
		return true, millisIn(v, 0, math.MaxInt64, &s.ReauthMax)
	case "connection.failed.authentication.delay.ms":
		return true, millisIn(v, 0, math.MaxInt32, &s.FailedAuthDelay)
	case "sasl.server.max.receive.size":
		return true, intIn(v, 1, math.MaxInt32, &s.MaxReceiveSize)
	case "sasl.jaas.config":
		// Kafka's JaasContext.loadServerContext: a broker reads only the
		// listener- and mechanism-prefixed key, and warns.
		log.Warn("server.properties: sasl.jaas.config should be prefixed with the listener and SASL mechanism name (listener.name.X.MECH.sasl.jaas.config); ignoring it", "line", p.Line)
		return true, nil
	}
	rest, ok := strings.CutPrefix(strings.ToLower(k), "listener.name.")
	if !ok {
		return false, nil
	}
	name, key, ok := strings.Cut(rest, ".")
	if !ok {
		return false, nil
	}
	if key == "sasl.enabled.mechanisms" {
		s.listener(name).EnabledMechanisms = splitList(v)
		return true, nil
	}
	mech, sub, ok := strings.Cut(key, ".")
	if !ok || !slices.Contains(saslMechanisms, strings.ToUpper(mech)) && mech != "gssapi" && mech != "oauthbearer" {
		return false, nil
	}
	switch sub {
	case "sasl.jaas.config":
		mods, err := jaas.ParseEntries(p.Value)
		if err == nil && len(mods) == 0 {
			err = errors.New("no login module")
		}
		if err != nil {
			// The parser's message may quote the value's text: only say
			// what is wanted.
			return true, hiddenValue(p, errors.New(`not a JAAS login module configuration: want ClassName required key="value" ...;`))
		}
		s.listener(name).JAAS[mech] = mods
		return true, nil
	case "connections.max.reauth.ms":
		var d time.Duration
		err := millisIn(v, 0, math.MaxInt64, &d)
		s.listener(name).ReauthMax[mech] = d
		return true, err
	}
	return false, nil
}

// hiddenValue is the error about a secret key, its value shown as Kafka
// shows a Password: [hidden].
func hiddenValue(p properties.Property, err error) *properties.Error {
	return &properties.Error{Line: p.Line, Key: p.Key, Value: "[hidden]", Allowed: err.Error()}
}

// mechanismsOf is the mechanisms listener name offers.
func (s *SASLConfig) mechanismsOf(name string) []string {
	if l := s.Listeners[name]; l != nil && l.EnabledMechanisms != nil {
		return l.EnabledMechanisms
	}
	return s.EnabledMechanisms
}

// mechanismKey is the key that set listener name's mechanisms.
func (s *SASLConfig) mechanismKey(name string) string {
	if l := s.Listeners[name]; l != nil && l.EnabledMechanisms != nil {
		return "listener.name." + strings.ToLower(name) + ".sasl.enabled.mechanisms"
	}
	return "sasl.enabled.mechanisms"
}

// reauthOf is the session lifetime of mechanism on listener name.
func (s *SASLConfig) reauthOf(name, mech string) time.Duration {
	if l := s.Listeners[name]; l != nil {
		if d, ok := l.ReauthMax[strings.ToLower(mech)]; ok {
			return d
		}
	}
	return s.ReauthMax
}

// checkSASLListener checks what a SASL listener needs: mechanisms zkafka
// offers, and PLAIN's users. The error is a *properties.Error naming the
// key to blame (a JAAS value shown as [hidden]).
func (c *Config) checkSASLListener(name string) error {
	mechs := c.SASL.mechanismsOf(name)
	bad := func(format string, args ...any) error {
		key := c.SASL.mechanismKey(name)
		return &properties.Error{Key: key, Value: strings.Join(mechs, ","), Allowed: fmt.Sprintf(format, args...)}
	}
	if len(mechs) == 0 {
		return bad("listener %s is SASL: no SASL mechanism is enabled (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)", name)
	}
	for _, m := range mechs {
		if !slices.Contains(saslMechanisms, m) {
			return bad("listener %s is SASL: mechanism %s is not offered by zkafka (PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 are)", name, m)
		}
	}
	if slices.Contains(mechs, "PLAIN") {
		if _, err := c.SASL.plainUsers(name); err != nil {
			return err
		}
	}
	return nil
}

// plainClass is the login module whose user_NAME options are PLAIN's users.
const plainClass = "org.apache.kafka.common.security.plain.PlainLoginModule"

// plainUsers are the PLAIN users of listener name (user_NAME="password"),
// from its listener.name.X.plain.sasl.jaas.config, else from the JAAS
// file's x.KafkaServer or KafkaServer section (JaasContext's order). An
// error is a *properties.Error naming where they were looked for.
func (s *SASLConfig) plainUsers(name string) (map[string]string, error) {
	lower := strings.ToLower(name)
	bad := &properties.Error{Key: "listener.name." + lower + ".plain.sasl.jaas.config", Value: "[hidden]"}
	mods := s.Listeners[name].jaasOf("plain")
	if mods == nil {
		if s.JAASFile == "" {
			bad.Value = ""
			bad.Allowed = fmt.Sprintf("listener %s offers PLAIN: set this key, or give a JAAS file with a KafkaServer section (-D%s=FILE in KAFKA_OPTS)", name, jaasFileProperty)
			return nil, bad
		}
		bad.Key, bad.Value = jaasFileProperty, s.JAASFile
		f, err := jaas.Load(s.JAASFile)
		if err != nil {
			bad.Allowed = jaasFileError(s.JAASFile, err)
			return nil, bad
		}
		if mods = f[lower+".KafkaServer"]; mods == nil {
			mods = f["KafkaServer"]
		}
		if mods == nil {
			bad.Allowed = fmt.Sprintf("listener %s offers PLAIN: the JAAS file has no 'KafkaServer' or '%s.KafkaServer' section", name, lower)
			return nil, bad
		}
	}
	users := map[string]string{}
	found := false
	for _, m := range mods {
		if m.LoginModule != plainClass {
			continue
		}
		found = true
		for k, v := range m.Options {
			if u, ok := strings.CutPrefix(k, "user_"); ok && u != "" {
				users[u] = v
			}
		}
	}
	if !found {
		bad.Allowed = fmt.Sprintf("listener %s offers PLAIN: no %s login module", name, plainClass)
		return nil, bad
	}
	return users, nil
}

// jaasFileError says why the JAAS file at path was not read, without the
// parser's quote of its text (a password, maybe): only its line.
func jaasFileError(path string, err error) string {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return err.Error()
	}
	msg := strings.TrimPrefix(err.Error(), path+": ")
	if line, _, ok := strings.Cut(msg, ":"); ok && strings.HasPrefix(line, "line ") {
		return path + ": " + line + ": not a JAAS login configuration"
	}
	return path + ": not a JAAS login configuration"
}

func (l *SASLListenerConfig) jaasOf(mech string) []jaas.Entry {
	if l == nil {
		return nil
	}
	return l.JAAS[mech]
}
