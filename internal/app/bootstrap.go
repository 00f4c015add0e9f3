package app

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/redlock-proxy/redlock-proxy/backend"
	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// ErrBootstrap starts every error of the bootstrap subcommand.
var ErrBootstrap = errors.New("bootstrap")

// Bootstrap is `redlock-proxy bootstrap [flags]`: the operator's one-time
// act that marks the backends of a brand-new deployment so that replicas
// count them at once (quorum.Bootstrap), with the configuration the
// replicas use (flags, REDLOCK_* and -config as for serving). It serves
// nothing; it prints what it marked to out, or returns why it refused.
func Bootstrap(args []string, getenv func(string) string, out io.Writer) error {
	cfg, err := config.Load(args, getenv, out)
	if err != nil {
		return err
	}
	return BootstrapConfig(cfg, out)
}

// BootstrapConfig is Bootstrap with the configuration loaded.
func BootstrapConfig(cfg config.Config, out io.Writer) error {
	if len(cfg.Backends) == 0 {
		return fmt.Errorf("%w: no backends configured (-backends or REDLOCK_BACKENDS); embedded backends need no bootstrap", ErrBootstrap)
	}
	if !cfg.Quarantine {
		return fmt.Errorf("%w: quarantine is off, so nothing waits for a bootstrap", ErrBootstrap)
	}
	backendTLS, err := cfg.BackendTLS()
	if err != nil {
		return err
	}
	nodes := make([]quorum.Node, len(cfg.Backends))
	for i, b := range cfg.Backends {
		nodes[i] = backend.NewNode(backendOptions(b, backendTLS))
	}
	defer func() {
		for _, n := range nodes {
			_ = n.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*cfg.NodeTimeout)
	defer cancel()
	done, err := quorum.Bootstrap(ctx, nodes, quorum.BootstrapWindow(cfg.Settings))
	for _, line := range done {
		fmt.Fprintln(out, line)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBootstrap, err)
	}
	fmt.Fprintf(out, "bootstrap done: %d backends marked as a new deployment; start the replicas (never run bootstrap on this deployment again)\n", len(done))
	return nil
}
