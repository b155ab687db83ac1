package auth

import (
	"crypto/x509"
	"errors"
	"regexp"
)

// CredHub's mTLS identity texts (messages.properties), verbatim.
const (
	MsgInvalidMTLSIdentity = "The provided authentication mechanism does not provide a valid identity. Please contact your system administrator."
	MsgMTLSNotClientAuth   = "The provided certificate is not authorized to be used for client authentication."
)

// mtlsOU is CredHub's identity rule: OU "app:" + a lowercase v4 UUID.
var mtlsOU = regexp.MustCompile(`^app:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// CertActor applies CredHub's X.509 identity rule to a client certificate
// that already chains to a trusted CA: it must allow client
// authentication and carry an "app:<v4 uuid>" OU, which names the actor.
// The error's text is CredHub's 401 body.
func CertActor(cert *x509.Certificate) (string, error) {
	clientAuth := false
	for _, u := range cert.ExtKeyUsage {
		if u == x509.ExtKeyUsageClientAuth {
			clientAuth = true
		}
	}
	if !clientAuth {
		return "", errors.New(MsgMTLSNotClientAuth)
	}
	for _, ou := range cert.Subject.OrganizationalUnit {
		if mtlsOU.MatchString(ou) {
			return "mtls-" + ou, nil
		}
	}
	return "", errors.New(MsgInvalidMTLSIdentity)
}
