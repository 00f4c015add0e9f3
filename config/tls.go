package config

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// ServerTLS is the client listener's TLS configuration, or nil for plain TCP.
func (c Config) ServerTLS() (*tls.Config, error) {
	if c.TLSCert == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("config: tls_cert/tls_key: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if c.TLSClientCA != "" {
		if cfg.ClientCAs, err = loadPool("tls_client_ca", c.TLSClientCA); err != nil {
			return nil, err
		}
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// BackendTLS is the TLS configuration for backends marked TLS.
func (c Config) BackendTLS() (*tls.Config, error) {
	cfg := &tls.Config{ServerName: c.BackendTLSServerName, MinVersion: tls.VersionTLS12}
	var err error
	if c.BackendTLSCA != "" {
		if cfg.RootCAs, err = loadPool("backend_tls_ca", c.BackendTLSCA); err != nil {
			return nil, err
		}
	}
	if c.BackendTLSCert != "" {
		cert, err := tls.LoadX509KeyPair(c.BackendTLSCert, c.BackendTLSKey)
		if err != nil {
			return nil, fmt.Errorf("config: backend_tls_cert/backend_tls_key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

func loadPool(field, path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %s: %w", field, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("config: %s: no PEM certificate in %s", field, path)
	}
	return pool, nil
}
