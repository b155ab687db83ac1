// Command credhub-sim is a CredHub-API-compatible server with a real
// database, for demos, tests and calibrating the load tester.
//
//	credhub-sim serve [flags]
//	credhub-sim certs --out DIR [flags]
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/credhub-perf/credhub-sim/internal/api"
	"github.com/credhub-perf/credhub-sim/internal/auth"
	"github.com/credhub-perf/credhub-sim/internal/certgen"
	"github.com/credhub-perf/credhub-sim/internal/store"
)

const usage = `usage:
  credhub-sim serve [flags]        run the server (see credhub-sim serve -h)
  credhub-sim certs --out DIR      write ca, server and client certificates and keys
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:], os.Stdout, os.Stderr)
	case "certs":
		err = certs(os.Args[2:], os.Stdout)
	case "-h", "--help", "help":
		fmt.Fprint(os.Stdout, usage)
		return
	default:
		fmt.Fprintf(os.Stderr, "credhub-sim: unknown command %q\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(os.Stderr, "credhub-sim: %v\n", err)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "credhub-sim: error: %v\n", err)
		os.Exit(1)
	}
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func certs(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("credhub-sim certs", flag.ContinueOnError)
	var o certgen.Options
	var hosts listFlag
	fs.StringVar(&o.Dir, "out", "", "directory to write ca.crt ca.key server.crt server.key client.crt client.key into (required)")
	fs.StringVar(&o.KeyType, "key-type", "ecdsa", "key algorithm: ecdsa (P-256) or rsa (2048 bits)")
	fs.DurationVar(&o.Validity, "validity", 365*24*time.Hour, "certificate lifetime")
	fs.BoolVar(&o.ClientOnly, "client-only", false, "reuse DIR/ca.crt and DIR/ca.key; write only NAME.crt and NAME.key (an extra or deliberately wrong client)")
	fs.StringVar(&o.ClientName, "client-name", "client", "base name of the client certificate files")
	fs.StringVar(&o.ClientCN, "client-cn", "credhub-perf", "client certificate common name (CredHub ignores it)")
	fs.StringVar(&o.ClientOU, "client-ou", "", "client certificate OU, CredHub's identity; default app:<random v4 uuid>")
	fs.BoolVar(&o.NoOU, "no-ou", false, "write the client certificate without any OU (CredHub answers 401)")
	fs.BoolVar(&o.NoClientAuth, "no-client-auth", false, "leave the clientAuth extended key usage out of the client certificate (CredHub answers 401)")
	fs.Var(&hosts, "host", "server certificate name or IP (repeatable); default 127.0.0.1, ::1, localhost")
	fs.BoolVar(&o.Force, "force", false, "replace existing keys and certificates in DIR (without it, existing files are an error)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q; usage: credhub-sim certs --out DIR", fs.Arg(0))
	}
	if o.Dir == "" {
		return errors.New("--out DIR is required: credhub-sim certs --out DIR")
	}
	if o.Validity <= 0 || o.Validity > maxValidity {
		return usageError{fmt.Errorf("--validity %v must be positive and at most %v (100 years), e.g. --validity 8760h", o.Validity, maxValidity)}
	}
	o.ServerHosts = hosts
	res, err := certgen.Write(o)
	if err != nil {
		return err
	}
	for _, f := range res.Files {
		fmt.Fprintf(stdout, "wrote %s\n", f)
	}
	if res.ClientOU != "" {
		fmt.Fprintf(stdout, "client identity (OU): %s (actor mtls-%s)\n", res.ClientOU, res.ClientOU)
	}
	return nil
}

// usageError is a flag out of range: exit status 2, nothing started.
type usageError struct{ error }

// maxValidity bounds certs --validity: 100 years, well inside what a
// time.Duration and an X.509 date hold.
const maxValidity = 100 * 365 * 24 * time.Hour

// checkServeFlags refuses, before anything is opened or listened on, a
// number that is not finite or lies outside what the model can mean: NaN
// passes every comparison, and a huge duration or worker count would hang
// the simulator instead of modelling CredHub.
func checkServeFlags(o serveOptions) error {
	bad := func(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }
	finite := func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
	dur := func(name string, d, max time.Duration, eg string) error {
		switch {
		case d < 0:
			return bad("-%s %v must not be negative, e.g. -%s %s", name, d, name, eg)
		case d > max:
			return bad("-%s %v must be at most %v, e.g. -%s %s", name, d, max, name, eg)
		}
		return nil
	}
	switch {
	case !finite(o.dbCapacity) || o.dbCapacity < 0 || o.dbCapacity > 1e7:
		return bad("-db-capacity %v must be requests/s from 0 (no limit) to 10000000, e.g. -db-capacity 300", o.dbCapacity)
	case o.dbCores < 1 || o.dbCores > 1024:
		return bad("-db-cores %d must be 1 to 1024, e.g. -db-cores 4", o.dbCores)
	case !finite(o.errorRate) || o.errorRate < 0 || o.errorRate > 1:
		return bad("-error-rate %v must be a fraction from 0 to 1, e.g. -error-rate 0.05", o.errorRate)
	case !finite(o.warmupFactor) || o.warmupFactor < 0 || o.warmupFactor > 1000:
		return bad("-warmup-factor %v must be a number from 0 to 1000 (0 or 1 = no warm-up), e.g. -warmup-factor 5", o.warmupFactor)
	case o.errorStatus < 100 || o.errorStatus > 599:
		return bad("-error-status %d is not an HTTP status (100 to 599), e.g. -error-status 503", o.errorStatus)
	case o.workers < 0 || o.workers > 100000:
		return bad("-workers %d must be from 0 (unlimited) to 100000", o.workers)
	case o.cores > 1024:
		return bad("-cores %d must be at most 1024", o.cores)
	case o.sharedCores < 0 || o.sharedCores > 1024:
		return bad("-shared-cores %d must be from 0 (none) to 1024, e.g. -shared-cores 1", o.sharedCores)
	case o.sharedCores > 0 && o.workers == 0:
		return bad("-shared-cores %d needs -workers K (the instances that share the machine), e.g. -workers 2 -shared-cores 1", o.sharedCores)
	case o.sharedCores == 0 && (o.neighbour != 0 || o.steal != 0):
		return bad("-neighbour %v and -steal %v take CPU from the shared machine; add -shared-cores N, e.g. -shared-cores 1 -neighbour 0.5", o.neighbour, o.steal)
	case !finite(o.neighbour) || o.neighbour < 0 || o.neighbour >= 1:
		return bad("-neighbour %v must be a share of the machine from 0 to below 1, e.g. -neighbour 0.5", o.neighbour)
	case !finite(o.steal) || o.steal < 0 || o.steal >= 1:
		return bad("-steal %v must be a share of the machine from 0 to below 1, e.g. -steal 0.1", o.steal)
	case o.neighbour+o.steal > 0.95:
		return bad("-neighbour %v and -steal %v together leave CredHub and its database under 5 %% of the machine; use less, e.g. -neighbour 0.5", o.neighbour, o.steal)
	}
	for _, d := range []struct {
		name    string
		v, max  time.Duration
		example string
	}{
		{"service-time", o.serviceTime, time.Hour, "5ms"},
		{"write-service-time", o.writeServiceTime, time.Hour, "10ms"},
		{"added-latency", o.addedLatency, time.Hour, "50ms"},
		{"warmup-time", o.warmupTime, 24 * time.Hour, "2m"},
		{"pause-every", o.pauseEvery, 24 * time.Hour, "2s"},
		{"pause", o.pause, time.Hour, "50ms"},
		{"token-ttl", o.tokenTTL, 30 * 24 * time.Hour, "12h"},
	} {
		if err := dur(d.name, d.v, d.max, d.example); err != nil {
			return err
		}
	}
	if (o.pauseEvery > 0) != (o.pause > 0) || (o.pause > 0 && o.pause >= o.pauseEvery) {
		return bad("-pause-every %v -pause %v: give both, the pause shorter than its period (the target must serve between pauses), e.g. -pause-every 2s -pause 50ms", o.pauseEvery, o.pause)
	}
	if o.tokenClockSkew > 24*time.Hour {
		return bad("-token-clock-skew %v must be at most 24h (0 = none), e.g. -token-clock-skew 60s", o.tokenClockSkew)
	}
	return nil
}

type serveOptions struct {
	listen, certDir, tlsCert, tlsKey, clientCA    string
	db, encryptionPassword, addrFile, externalURL string
	auditLog                                      string
	workers, cores                                int
	serviceTime, writeServiceTime                 time.Duration
	warmupTime                                    time.Duration
	warmupFactor                                  float64
	pauseEvery, pause                             time.Duration
	addedLatency, tokenTTL, tokenClockSkew        time.Duration
	serviceDist                                   string
	dbCapacity                                    float64
	dbCores                                       int
	sharedCores                                   int
	neighbour, steal                              float64
	errorRate                                     float64
	errorStatus                                   int
	uaaClients, permissions                       listFlag
	acls, http2                                   bool
}

// minEncryptionPassword is CredHub's own minimum length for an internal
// provider's encryption password.
const minEncryptionPassword = 16

func serve(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("credhub-sim serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o serveOptions
	fs.StringVar(&o.listen, "listen", "127.0.0.1:8844", "address to listen on (port 0 picks a free port)")
	fs.StringVar(&o.certDir, "cert-dir", "", "directory with ca.crt (trusted client CA), server.crt and server.key, as written by credhub-sim certs")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "server certificate PEM (instead of -cert-dir)")
	fs.StringVar(&o.tlsKey, "tls-key", "", "server private key PEM (instead of -cert-dir)")
	fs.StringVar(&o.clientCA, "client-ca", "", "PEM file of CA certificates trusted for client certificates (instead of -cert-dir)")
	fs.StringVar(&o.db, "db", "sqlite::memory:", "database: sqlite:PATH, sqlite::memory:, postgres://user:pass@host:port/db?sslmode=disable or mysql://user:pass@host:port/db")
	fs.StringVar(&o.encryptionPassword, "encryption-password", "", "password the encryption key is derived from (default: $CREDHUB_SIM_ENCRYPTION_PASSWORD)")
	fs.StringVar(&o.addrFile, "addr-file", "", "write the server URL to this file once listening")
	fs.StringVar(&o.externalURL, "external-url", "", "URL clients use to reach this server, advertised in /info and token issuer (default https://LISTEN-ADDR)")
	fs.IntVar(&o.workers, "workers", 0, "capacity model: K emulated instances, FIFO queue (0 = unlimited)")
	fs.IntVar(&o.cores, "cores", 1, "capacity model: cores per instance; reads use any core, writes also hold the instance's write lock")
	fs.DurationVar(&o.serviceTime, "service-time", 0, "capacity model: service time per request (mean for exponential)")
	fs.DurationVar(&o.writeServiceTime, "write-service-time", 0, "capacity model: service time of set, generate and regenerate (0 = -service-time)")
	fs.StringVar(&o.serviceDist, "service-dist", "fixed", "capacity model: service time distribution, fixed or exponential")
	fs.Float64Var(&o.dbCapacity, "db-capacity", 0, "capacity model: a database every instance shares, serving at most this many requests/s (0 = never the limit); reported with the instances at GET /utilisation")
	fs.IntVar(&o.dbCores, "db-cores", 1, "capacity model: the database's parallel servers (with -db-capacity); each request takes cores/capacity of one")
	fs.IntVar(&o.sharedCores, "shared-cores", 0, "capacity model: every instance and the database draw CPU from one machine of N cores (colocated, as in credhub-postgres.yml); reported as machine \"host\" at GET /utilisation (0 = each has its own cores)")
	fs.Float64Var(&o.neighbour, "neighbour", 0, "capacity model: with -shared-cores, a neighbour process busy with this share 0..1 of the machine's cores")
	fs.Float64Var(&o.steal, "steal", 0, "capacity model: with -shared-cores, the share 0..1 of the machine's cores the hypervisor steals")
	fs.DurationVar(&o.warmupTime, "warmup-time", 0, "capacity model: a fresh JVM's warm-up; service times fall from -warmup-factor times normal to normal over this time, as 1+(K-1)(1-t/D)^2")
	fs.Float64Var(&o.warmupFactor, "warmup-factor", 0, "capacity model: how many times longer service times are at start (with -warmup-time; 0 or 1 = no warm-up)")
	fs.DurationVar(&o.pauseEvery, "pause-every", 0, "capacity model: a JVM's stop-the-world pauses; every this often the whole target stops serving for -pause (0 = none)")
	fs.DurationVar(&o.pause, "pause", 0, "capacity model: how long each pause of -pause-every lasts, e.g. 50ms")
	fs.Float64Var(&o.errorRate, "error-rate", 0, "fault injection: fraction 0..1 of API requests answered at once (no queue, no service time) with -error-status")
	fs.IntVar(&o.errorStatus, "error-status", 500, "fault injection: status of injected failures")
	fs.DurationVar(&o.addedLatency, "added-latency", 0, "fault injection: extra delay per API request, outside the capacity model")
	fs.Var(&o.uaaClients, "uaa-client", "enable the token endpoint for client ID:SECRET[:SCOPE,SCOPE...] (repeatable; default scopes credhub.read,credhub.write)")
	fs.DurationVar(&o.tokenTTL, "token-ttl", 12*time.Hour, "lifetime of issued access tokens")
	fs.DurationVar(&o.tokenClockSkew, "token-clock-skew", api.DefaultClockSkew, "how long past its expiry a token is still accepted, as CredHub's 60 s; 0 = none (tests of token renewal)")
	fs.BoolVar(&o.http2, "http2", false, "also offer HTTP/2 by ALPN (CredHub 2.15 serves HTTP/1.1 only)")
	fs.StringVar(&o.auditLog, "audit-log", "", "append CredHub's CEF audit records (credhub_security_events.log's format) to this file (created 0600: it names credentials and actors)")
	fs.BoolVar(&o.acls, "acls", false, "enforce permissions (CredHub's security.authorization.acls.enabled); off like CredHub's perf setup")
	fs.Var(&o.permissions, "permission", "with -acls: seed a permission \"PATH ACTOR[,ACTOR] OP[,OP]\" (repeatable), e.g. \"/* mtls-app:<uuid> read,write,delete\"")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q; flags go before it, see credhub-sim serve -h", fs.Arg(0))
	}
	if err := checkServeFlags(o); err != nil {
		return err
	}
	if o.encryptionPassword == "" {
		o.encryptionPassword = os.Getenv("CREDHUB_SIM_ENCRYPTION_PASSWORD")
	}
	if o.encryptionPassword == "" {
		return errors.New("-encryption-password is required (or set CREDHUB_SIM_ENCRYPTION_PASSWORD); values are encrypted at rest with a key derived from it")
	}
	if n := utf8.RuneCountInString(o.encryptionPassword); n < minEncryptionPassword {
		return fmt.Errorf("the encryption password has %d characters; CredHub requires at least %d: use a longer one, e.g. $(openssl rand -hex 16)", n, minEncryptionPassword)
	}
	cert, pool, err := loadTLS(o)
	if err != nil {
		return err
	}
	clients, err := parseUAAClients(o.uaaClients)
	if err != nil {
		return err
	}
	perms, err := parsePermissions(o.permissions)
	if err != nil {
		return err
	}
	if o.cores < 1 {
		return fmt.Errorf("-cores %d must be 1 or more (cores per emulated instance)", o.cores)
	}
	if len(perms) > 0 && !o.acls {
		return errors.New("-permission only has an effect with -acls; add -acls or drop -permission")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := log.New(stderr, "credhub-sim ", log.LstdFlags|log.LUTC)

	st, err := store.Open(ctx, o.db, o.encryptionPassword)
	if err != nil {
		return err
	}
	defer st.Close()
	audit, err := openAuditLog(o.auditLog)
	if err != nil {
		return err
	}
	defer audit.Close()
	srv, err := api.New(api.Config{
		AuditLog: audit.w,
		Store:    st, ClientCAs: pool,
		Workers: o.workers, Cores: o.cores, ServiceTime: o.serviceTime, WriteServiceTime: o.writeServiceTime, ServiceDist: o.serviceDist,
		WarmupTime: o.warmupTime, WarmupFactor: o.warmupFactor, PauseEvery: o.pauseEvery, Pause: o.pause, DBCapacity: o.dbCapacity, DBCores: o.dbCores,
		SharedCores: o.sharedCores, Neighbour: o.neighbour, Steal: o.steal,
		ErrorRate: o.errorRate, ErrorStatus: o.errorStatus, AddedLatency: o.addedLatency,
		UAAClients: clients, TokenTTL: o.tokenTTL, TokenClockSkew: skewFlag(o.tokenClockSkew), ACLs: o.acls, Permissions: perms, HTTP2: o.http2,
		Logger: logger,
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", o.listen, err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	url := "https://" + ln.Addr().String()
	advertised := o.externalURL
	if advertised == "" {
		host := addr.IP
		if host.IsUnspecified() {
			host = net.IPv4(127, 0, 0, 1)
		}
		advertised = "https://" + net.JoinHostPort(host.String(), fmt.Sprint(addr.Port))
	}
	srv.SetURL(advertised)
	hs := srv.HTTPServer(cert)
	hs.ReadHeaderTimeout = 30 * time.Second
	hs.IdleTimeout = 2 * time.Minute
	hs.ErrorLog = logger
	// The address file first, atomically, so that whoever sees either
	// signal (file or stdout line) can use both.
	if o.addrFile != "" {
		if err := writeAtomic(o.addrFile, []byte(url+"\n")); err != nil {
			ln.Close()
			return fmt.Errorf("writing -addr-file: %w", err)
		}
	}
	fmt.Fprintf(stdout, "credhub-sim listening on %s\n", url)
	writeTime := o.writeServiceTime
	if writeTime == 0 {
		writeTime = o.serviceTime
	}
	auth := "mutual TLS only (no -uaa-client: CredHub without OAuth2)"
	if len(clients) > 0 {
		auth = "mutual TLS and UAA bearer tokens"
	}
	logger.Printf("serving CredHub API %s on %s (database %s, workers %d, cores %d, service time %v, writes %v, %s, acls %v, %s, http2 %v)",
		api.Version, url, st.Dialect(), o.workers, o.cores, o.serviceTime, writeTime, o.serviceDist, o.acls, auth, o.http2)
	if o.dbCapacity > 0 {
		logger.Printf("shared database: at most %g requests/s on %d servers, whatever the number of instances", o.dbCapacity, o.dbCores)
	}
	if o.sharedCores > 0 {
		logger.Printf("shared machine: the instances and the database draw CPU from %d core(s), a neighbour takes %g of them, the hypervisor steals %g", o.sharedCores, o.neighbour, o.steal)
	}
	if o.pause > 0 {
		logger.Printf("pausing like a JVM: the whole target stops serving for %v every %v", o.pause, o.pauseEvery)
	}
	if o.warmupFactor > 1 {
		logger.Printf("warming up like a fresh JVM: service times %gx normal now, normal after %v", o.warmupFactor, o.warmupTime)
	}

	errc := make(chan error, 1)
	go func() { errc <- hs.ServeTLS(ln, "", "") }()
	select {
	case err := <-errc:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	logger.Printf("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	return nil
}

func loadTLS(o serveOptions) (tls.Certificate, *x509.CertPool, error) {
	certFile, keyFile, caFile := o.tlsCert, o.tlsKey, o.clientCA
	if o.certDir != "" {
		if certFile == "" {
			certFile = filepath.Join(o.certDir, "server.crt")
		}
		if keyFile == "" {
			keyFile = filepath.Join(o.certDir, "server.key")
		}
		if caFile == "" {
			caFile = filepath.Join(o.certDir, "ca.crt")
		}
	}
	if certFile == "" || keyFile == "" || caFile == "" {
		return tls.Certificate{}, nil, errors.New("TLS material missing: pass -cert-dir DIR (made by: credhub-sim certs --out DIR) or all of -tls-cert, -tls-key and -client-ca")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("loading server certificate %s and key %s: %w", certFile, keyFile, err)
	}
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("reading client CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return tls.Certificate{}, nil, fmt.Errorf("client CA file %s holds no PEM certificate", caFile)
	}
	return cert, pool, nil
}

func parseUAAClients(specs []string) ([]api.UAAClient, error) {
	var out []api.UAAClient
	for _, spec := range specs {
		parts := strings.SplitN(spec, ":", 3)
		if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
			return nil, fmt.Errorf("-uaa-client %q: want ID:SECRET or ID:SECRET:SCOPE,SCOPE", redactClient(spec))
		}
		c := api.UAAClient{ID: parts[0], Secret: parts[1], Scopes: []string{"credhub.read", "credhub.write"}}
		if len(parts) == 3 {
			c.Scopes = nil
			for _, sc := range strings.Split(parts[2], ",") {
				if sc = strings.TrimSpace(sc); sc != "" {
					c.Scopes = append(c.Scopes, sc)
				}
			}
		}
		out = append(out, c)
	}
	return out, nil
}

func redactClient(spec string) string {
	if i := strings.IndexByte(spec, ':'); i >= 0 {
		return spec[:i] + ":REDACTED"
	}
	return spec
}

func parsePermissions(specs []string) ([]api.Permission, error) {
	var out []api.Permission
	for _, spec := range specs {
		f := strings.Fields(spec)
		if len(f) != 3 {
			return nil, fmt.Errorf("-permission %q: want \"PATH ACTOR[,ACTOR] OP[,OP]\"", spec)
		}
		p := api.Permission{Path: f[0], Actors: strings.Split(f[1], ","), Operations: strings.Split(f[2], ",")}
		if _, err := auth.ParseOperations(p.Operations); err != nil {
			return nil, fmt.Errorf("-permission %q: %w", spec, err)
		}
		out = append(out, p)
	}
	return out, nil
}

func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// skewFlag maps the flag's 0 (no skew) to the Config's negative value (its
// zero value means CredHub's default).
func skewFlag(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

// auditFile is the -audit-log file; w is nil without one.
type auditFile struct {
	w io.Writer
	f *os.File
}

func openAuditLog(path string) (auditFile, error) {
	if path == "" {
		return auditFile{}, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return auditFile{}, fmt.Errorf("-audit-log: %w", err)
	}
	return auditFile{w: f, f: f}, nil
}

func (a auditFile) Close() {
	if a.f != nil {
		a.f.Close()
	}
}
