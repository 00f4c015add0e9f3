package backend

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// The single-node scripts Node runs, embedded from scripts/.
var (
	//go:embed scripts/acquire.lua
	acquireLua string
	//go:embed scripts/undo.lua
	undoLua string
	//go:embed scripts/delifeq.lua
	delIfEqLua string
	//go:embed scripts/pexpireifeq.lua
	pexpireIfEqLua string
	//go:embed scripts/extend.lua
	extendLua string
	//go:embed scripts/reattach.lua
	reattachLua string
	//go:embed scripts/getpttl.lua
	getPTTLLua string
	//go:embed scripts/hashacquire.lua
	hashAcquireLua string
	//go:embed scripts/hashrelease.lua
	hashReleaseLua string
	//go:embed scripts/hashextend.lua
	hashExtendLua string
	//go:embed scripts/hashlease.lua
	hashLeaseLua string
	//go:embed scripts/hashunhold.lua
	hashUnholdLua string
	//go:embed scripts/hashsetholds.lua
	hashSetHoldsLua string
	//go:embed scripts/hashget.lua
	hashGetLua string
	//go:embed scripts/raise.lua
	raiseLua string
	//go:embed scripts/setxx.lua
	setXXLua string
	//go:embed scripts/del.lua
	delLua string
	//go:embed scripts/unmark.lua
	unmarkLua string
	//go:embed scripts/record.lua
	recordLua string
	//go:embed scripts/repair.lua
	repairLua string
	//go:embed scripts/queue.lua
	queueLua string
	//go:embed scripts/queuebeats.lua
	queueBeatsLua string
	//go:embed scripts/marknew.lua
	markNewLua string
	//go:embed scripts/tokenpart.lua
	tokenPartLua string // the prelude of the scripts that read a fenced lock's token part

	acquireScript      = redis.NewScript(acquireLua)
	queueScript        = redis.NewScript(queueLua)
	queueBeatsScript   = redis.NewScript(queueBeatsLua)
	undoScript         = redis.NewScript(undoLua)
	delIfEqScript      = redis.NewScript(delIfEqLua)
	pexpireIfEqScript  = redis.NewScript(pexpireIfEqLua)
	extendScript       = redis.NewScript(extendLua)
	reattachScript     = redis.NewScript(tokenPartLua + reattachLua)
	getPTTLScript      = redis.NewScript(tokenPartLua + getPTTLLua)
	hashAcquireScript  = redis.NewScript(hashAcquireLua)
	hashReleaseScript  = redis.NewScript(hashReleaseLua)
	hashExtendScript   = redis.NewScript(hashExtendLua)
	hashLeaseScript    = redis.NewScript(hashLeaseLua)
	hashUnholdScript   = redis.NewScript(hashUnholdLua)
	hashSetHoldsScript = redis.NewScript(hashSetHoldsLua)
	hashGetScript      = redis.NewScript(hashGetLua)
	raiseScript        = redis.NewScript(tokenPartLua + raiseLua)
	setXXScript        = redis.NewScript(setXXLua)
	recordScript       = redis.NewScript(recordLua)
	delScript          = redis.NewScript(delLua)
	unmarkScript       = redis.NewScript(unmarkLua)
	repairScript       = redis.NewScript(repairLua)
	markNewScript      = redis.NewScript(markNewLua)
)
