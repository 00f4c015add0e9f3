package proxy

import (
	"github.com/redlock-proxy/redlock-proxy/proxy/scriptbook"
	"github.com/redlock-proxy/redlock-proxy/quorum"
	"github.com/redlock-proxy/redlock-proxy/wake"
)

// scriptService is the scripts family: EVAL, EVALSHA and SCRIPT, and what
// each kind of client script does as lock operations (scriptcmds.go,
// specoperands.go, registered.go, hashops.go, hashlease.go, rwlock.go,
// fairlock.go, permits.go, multikey.go, bsm.go), run through the lock
// service. Its state is the script registry: the texts each tenant loaded
// (EVAL, SCRIPT LOAD) and the operators' scripts; which script is which is
// scriptbook's.
type scriptService struct {
	engine   *quorum.Engine
	opts     *options
	metrics  *Metrics
	bus      *wake.Bus
	native   *lockService
	registry scriptbook.Registry
}
