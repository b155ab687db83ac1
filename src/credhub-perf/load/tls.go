package load

import (
	"crypto/tls"

	"github.com/credhub-perf/credhub-perf/tlsclient"
)

// TLSOptions configures the client side of (mutual) TLS: tlsclient's
// options, the same the CredHub API client is built from.
type TLSOptions = tlsclient.Options

// buildTLSConfig is tlsclient.Build plus the engine's cached server chain
// verification (verify.go), which only pays off at handshake rates.
func buildTLSConfig(o TLSOptions) (*tls.Config, error) {
	c, err := tlsclient.Build(o)
	if err != nil {
		return nil, err
	}
	if !o.Insecure {
		installChainVerifier(c.TLS)
	}
	return c.TLS, nil
}
