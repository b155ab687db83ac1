package load

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// errText turns an error into the short message recorded in the CSV. It
// leaves out addresses and ports so that identical failures group together
// in the error distribution.
func errText(ctx context.Context, op string, err error) string {
	if cerr := ctx.Err(); cerr != nil {
		if errors.Is(cerr, context.Canceled) {
			return "canceled: run stopped"
		}
		return "canceled: " + cerr.Error()
	}
	var ue x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	var ae tls.AlertError
	var re *net.OpError
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded), isTimeout(err):
		return op + ": timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return op + ": connection refused"
	case isConnReset(err):
		return op + ": connection reset by peer"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return op + ": connection closed by server"
	case errors.As(err, &ue), errors.As(err, &hn), errors.As(err, &ci), errors.As(err, &ae):
		return op + ": " + err.Error()
	case errors.As(err, &re) && re.Err != nil:
		// Drop "read tcp 127.0.0.1:5555->127.0.0.1:443:" and keep the cause.
		return op + ": " + re.Err.Error()
	}
	return op + ": " + err.Error()
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func isConnReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
