package quorum

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/zkafka/zkafka/internal/jaas"
	"github.com/zkafka/zkafka/internal/properties"
)

// JAASConfigKey is zkafka's own zoo.cfg key for the JAAS file of the SASL
// users: the plain way to say what Java users say with
// -Djava.security.auth.login.config=FILE in SERVER_JVMFLAGS or JVMFLAGS
// (which zkafka reads too; the zoo.cfg key wins).
const JAASConfigKey = "zkafka.jaasConfigFile"

// The authentication provider classes of authProvider.N that zkafka has.
const (
	saslProviderClass = "org.apache.zookeeper.server.auth.SASLAuthenticationProvider"
	x509ProviderClass = "org.apache.zookeeper.server.auth.X509AuthenticationProvider"
)

// SASLConfig is client SASL (DIGEST-MD5) and the enforcement of
// authentication, as ZooKeeper 3.8 configures them: users from the
// Server section of a JAAS file, the sasl ACL scheme when authProvider.N
// names SASLAuthenticationProvider, and AuthenticationHelper's
// enforce.auth.enabled / enforce.auth.schemes / sessionRequireClientSASLAuth.
type SASLConfig struct {
	// JAASFile is the JAAS file ("" none); JAASFrom says where its name
	// came from (zoo.cfg's key or the environment variable).
	JAASFile, JAASFrom string
	// Section is zookeeper.sasl.serverconfig: the section of the users
	// (default "Server").
	Section string
	// Users are the user_NAME="password" options of the section; nil
	// without a JAAS file or without the section (no SASL, as ZooKeeper
	// without a login).
	Users map[string]string
	// SuperUser is zookeeper.superUser: the sasl user whose sessions are
	// super. SuperPassword is
	// zookeeper.SASLAuthenticationProvider.superPassword: the password of
	// the user "super" in place of the JAAS file's.
	SuperUser, SuperPassword string
	// Provider: authProvider.N names SASLAuthenticationProvider, so the
	// sasl scheme exists for ACLs (and for enforce.auth.schemes).
	Provider bool
	// X509Provider: authProvider.N names X509AuthenticationProvider.
	X509Provider bool
	// EnforceAuth refuses every request of a connection that holds no
	// identity of EnforceSchemes (enforce.auth.enabled, or
	// sessionRequireClientSASLAuth=true with the scheme sasl).
	EnforceAuth    bool
	EnforceSchemes []string
	// AllowFailedClients is zookeeper.allowSaslFailedClients: a failed
	// SASL exchange leaves the connection open (unless SASL is enforced).
	AllowFailedClients bool

	requireSASL bool // sessionRequireClientSASLAuth=true
}

// saslRequired is AuthenticationHelper.isSaslAuthRequired.
func (s *SASLConfig) saslRequired() bool {
	return s.EnforceAuth && slices.Contains(s.EnforceSchemes, "sasl")
}

// password is SaslServerCallbackHandler's lookup: a JAAS user, with
// superPassword for "super".
func (s *SASLConfig) password(user string) (string, bool) {
	p, ok := s.Users[user]
	if ok && user == "super" && s.SuperPassword != "" {
		p = s.SuperPassword
	}
	return p, ok
}

// applySASL handles the keys of SASL and authentication enforcement; it
// reports false for keys it does not know.
func (p *configParser) applySASL(prop properties.Property) (bool, error) {
	s := &p.c.SASL
	v := prop.Trimmed()
	var err error
	key := strings.TrimPrefix(prop.Key, "zookeeper.")
	switch key {
	case JAASConfigKey:
		s.JAASFile, s.JAASFrom = v, "zoo.cfg "+JAASConfigKey
	case "sasl.serverconfig":
		s.Section = v
	case "superUser":
		s.SuperUser = v
	case "SASLAuthenticationProvider.superPassword":
		s.SuperPassword = prop.Value
	case "enforce.auth.enabled":
		s.EnforceAuth, err = prop.Bool()
	case "enforce.auth.schemes":
		s.EnforceSchemes = nil
		for _, scheme := range strings.Split(v, ",") {
			if scheme = strings.TrimSpace(scheme); scheme != "" {
				s.EnforceSchemes = append(s.EnforceSchemes, scheme)
			}
		}
	case "sessionRequireClientSASLAuth":
		s.requireSASL, err = prop.Bool()
	case "allowSaslFailedClients":
		s.AllowFailedClients, err = prop.Bool()
	case "quorum.auth.enableSasl", "quorum.auth.learnerRequireSasl", "quorum.auth.serverRequireSasl":
		var on bool
		if on, err = prop.Bool(); err == nil && on {
			p.log.Warn("zoo.cfg: quorum SASL is not done; the servers of the ensemble do not authenticate each other by SASL (sslQuorum=true makes them show certificates)", "key", prop.Key, "line", prop.Line)
		}
	case "requireClientAuthScheme":
		// Named in old guides; ZooKeeper 3.8 reads it nowhere.
		p.log.Warn("zoo.cfg: requireClientAuthScheme has no effect (as in ZooKeeper 3.8); refuse unauthenticated clients with enforce.auth.enabled=true and enforce.auth.schemes=sasl, or sessionRequireClientSASLAuth=true", "line", prop.Line)
	default:
		if !strings.HasPrefix(key, "authProvider.") {
			return false, nil
		}
		switch v {
		case saslProviderClass:
			s.Provider = true
		case x509ProviderClass:
			s.X509Provider = true
		default:
			p.log.Warn("zoo.cfg: authentication provider zkafka does not have ignored", "key", prop.Key, "class", v, "line", prop.Line)
		}
	}
	return true, err
}

// checkSASL settles enforcement as AuthenticationHelper does at start:
// sessionRequireClientSASLAuth=true means enforce sasl;
// enforce.auth.enabled needs schemes, each one a registered provider (ip
// and digest always, sasl and x509 through authProvider.N).
func (p *configParser) checkSASL() error {
	s := &p.c.SASL
	if s.requireSASL {
		s.EnforceAuth, s.EnforceSchemes = true, []string{"sasl"}
	}
	if !s.EnforceAuth {
		return nil
	}
	key := p.given("enforce.auth.enabled")
	if s.requireSASL {
		key = p.given("sessionRequireClientSASLAuth")
	}
	if len(s.EnforceSchemes) == 0 {
		return key.Bad("needs enforce.auth.schemes (the schemes a client must have authenticated with, such as sasl)")
	}
	for _, scheme := range s.EnforceSchemes {
		if !s.hasProvider(scheme) {
			return key.Bad(fmt.Sprintf("enforce.auth.schemes names %q, which is no authentication provider of this server (ip, digest, and those of authProvider.N: sasl for %s, x509 for %s)",
				scheme, saslProviderClass, x509ProviderClass))
		}
	}
	return nil
}

// given is the property of key, in its plain or zookeeper.-prefixed form.
func (p *configParser) given(key string) properties.Property {
	if prop, ok := p.set[key]; ok {
		return prop
	}
	return p.set["zookeeper."+key]
}

func (s *SASLConfig) hasProvider(scheme string) bool {
	switch scheme {
	case "ip", "digest":
		return true
	case "sasl":
		return s.Provider
	case "x509":
		return s.X509Provider
	}
	return false
}

// loadJAAS finds the JAAS file (zoo.cfg's key, else
// java.security.auth.login.config among $SERVER_JVMFLAGS $JVMFLAGS, as
// zkServer.sh puts them on the java command line) and reads the users of
// its section. A file that is missing or malformed stops the start, as
// ZooKeeper's login does; a file without the section means no SASL (with a
// warning), as in ZooKeeper.
func (s *SASLConfig) loadJAAS(getenv func(string) string, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	flags := []string{getenv("SERVER_JVMFLAGS"), getenv("JVMFLAGS")}
	if s.JAASFile == "" {
		if f, ok := jaas.JVMProperty("java.security.auth.login.config", flags...); ok {
			s.JAASFile, s.JAASFrom = strings.TrimPrefix(f, "="), "-Djava.security.auth.login.config in SERVER_JVMFLAGS/JVMFLAGS"
		}
	}
	if s.Section == "" {
		s.Section = "Server"
		if sec, ok := jaas.JVMProperty("zookeeper.sasl.serverconfig", flags...); ok {
			s.Section = sec
		}
	}
	if s.SuperUser == "" {
		s.SuperUser, _ = jaas.JVMProperty("zookeeper.superUser", flags...)
	}
	if s.JAASFile == "" {
		return nil
	}
	f, err := jaas.Load(s.JAASFile)
	if err != nil {
		return &properties.Error{File: s.JAASFile, Allowed: fmt.Sprintf("the JAAS file (%s) must be readable and well formed: %v", s.JAASFrom, err)}
	}
	entries, ok := f[s.Section]
	if !ok {
		log.Warn("no JAAS section for the server: SASL is off", "file", s.JAASFile, "section", s.Section)
		return nil
	}
	s.Users = jaas.DigestUsers(entries)
	log.Info("SASL DIGEST-MD5 users loaded", "file", s.JAASFile, "section", s.Section, "users", len(s.Users))
	return nil
}
