package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
)

// pki is a throwaway CA with a server certificate for 127.0.0.1 and a client
// certificate, written as PEM files.
type pki struct {
	dir                                              string
	ca, serverCert, serverKey, clientCert, clientKey string
	pool                                             *x509.CertPool
	client                                           tls.Certificate
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	p := &pki{dir: t.TempDir(), pool: x509.NewCertPool()}
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	p.pool.AddCert(caCert)
	p.ca = p.write(t, "ca.pem", "CERTIFICATE", caDER)
	issue := func(name string, serial int64, usage x509.ExtKeyUsage) (certFile, keyFile string) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			KeyUsage: x509.KeyUsageDigitalSignature}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, _ := x509.MarshalECPrivateKey(key)
		return p.write(t, name+".pem", "CERTIFICATE", der), p.write(t, name+"-key.pem", "EC PRIVATE KEY", keyDER)
	}
	p.serverCert, p.serverKey = issue("server", 2, x509.ExtKeyUsageServerAuth)
	p.clientCert, p.clientKey = issue("client", 3, x509.ExtKeyUsageClientAuth)
	if p.client, err = tls.LoadX509KeyPair(p.clientCert, p.clientKey); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *pki) write(t *testing.T, name, kind string, der []byte) string {
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTLS: clients reach the proxy over TLS with a client certificate, and
// the proxy reaches TLS-only redis-servers that demand one too.
func TestTLS(t *testing.T) {
	p := newPKI(t)
	clientTLS := &tls.Config{RootCAs: p.pool, Certificates: []tls.Certificate{p.client}, MinVersion: tls.VersionTLS12}
	backends := redistest.StartTLS(t, 3, redistest.TLS{CertFile: p.serverCert, KeyFile: p.serverKey, CAFile: p.ca, Client: clientTLS})
	h := harness.New(t, 0, func(c *config.Config) {
		for _, b := range backends {
			c.Backends = append(c.Backends, config.Backend{Addr: b.Addr, TLS: true})
		}
		c.TLSCert, c.TLSKey, c.TLSClientCA = p.serverCert, p.serverKey, p.ca
		c.BackendTLSCA, c.BackendTLSCert, c.BackendTLSKey = p.ca, p.clientCert, p.clientKey
	})
	ctx := t.Context()

	c := h.Client(func(o *redis.Options) { o.TLSConfig = clientTLS.Clone() })
	if ok, err := c.SetNX(ctx, "lock:tls", "tok", 10*time.Second).Result(); !ok || err != nil {
		t.Fatalf("acquire over TLS = %v, %v", ok, err)
	}
	for _, b := range backends {
		if v, err := b.Client().Get(ctx, "lock:tls").Result(); v != "tok" || err != nil {
			t.Fatalf("TLS backend %s holds %q, %v", b.Addr, v, err)
		}
	}
	if v, err := c.Eval(ctx, harness.UnlockScript, []string{"lock:tls"}, "tok").Int(); v != 1 || err != nil {
		t.Fatalf("release over TLS = %d, %v", v, err)
	}

	noCert := h.Client(func(o *redis.Options) {
		o.TLSConfig = &tls.Config{RootCAs: p.pool, MinVersion: tls.VersionTLS12}
	})
	if err := noCert.Ping(ctx).Err(); err == nil {
		t.Fatal("a client without a certificate was served")
	}
	plain := h.Client()
	if err := plain.Ping(ctx).Err(); err == nil {
		t.Fatal("a plain-TCP client was served by the TLS listener")
	}
}
