package backend

import (
	"crypto/sha1"
	_ "embed"
	"encoding/hex"
	"fmt"

	"github.com/redis/go-redis/v9"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// script is a Lua script the lock path sends by its SHA1 (EVALSHA), and by
// its text (EVAL) to a server that lacks it (restarted, or flushed).
type script struct{ src, sha string }

func newScript(src string) *script {
	h := sha1.Sum([]byte(src))
	return &script{src: src, sha: hex.EncodeToString(h[:])}
}

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
	//go:embed scripts/print.lua
	printLua string // the prelude (after the hash prelude) of the scripts that act on a lock whoever holds it: its print
	//go:embed scripts/unmark.lua
	unmarkLua string
	//go:embed scripts/dellatch.lua
	delLatchLua string
	//go:embed scripts/record.lua
	recordLua string
	//go:embed scripts/repair.lua
	repairLua string
	//go:embed scripts/queue.lua
	queueLua string
	//go:embed scripts/queuebeats.lua
	queueBeatsLua string
	//go:embed scripts/semaphore.lua
	semaphoreLua string
	//go:embed scripts/marknew.lua
	markNewLua string
	//go:embed scripts/tokenpart.lua
	tokenPartLua string // the prelude of the scripts that read a fenced lock's token part
	//go:embed scripts/noteafter.lua
	noteAfterLua string // the prelude of the scripts that write a note beside a key they set
	//go:embed scripts/notelead.lua
	noteLeadLua string // the prelude of the scripts that keep a note's lead over its key
	//go:embed scripts/hashnote.lua
	hashNoteLua string // the prelude of the hash lock scripts (after noteAfterLua): a hash lock's lock-delay
	//go:embed scripts/rwlock.lua
	rwLockLua string // the prelude of the hash lock scripts (after hashNoteLua): read-write locks
	//go:embed scripts/lapsed.lua
	lapsedLua string // the prelude of the scripts that keep leases in the server's ms: its clock, and the lapsed ones' removal
	//go:embed scripts/roundorder.lua
	roundOrderLua string // the prelude of the scripts that compare a session lock's rounds
	//go:embed scripts/counterfloor.lua
	counterFloorLua string // the prelude of the marking scripts: every counter raised to a seed
	//go:embed scripts/counterseed.lua
	counterSeedLua string // the prelude of hashacquire.lua: where a lock's own fencing counter starts

	hashPrelude        = noteAfterLua + hashNoteLua + fmt.Sprintf("local rwHoldersPrefix, stampPrefix = %q, %q\n", quorum.HoldersKey(""), stampP) + rwLockLua
	printPrelude       = hashPrelude + fmt.Sprintf("local printPrefixes = {%q, %q, %q, %q}\n", quorum.HoldersKey(""), semP, semLeaseP, stampP) + printLua
	acquireScript      = newScript(lapsedLua + noteAfterLua + acquireLua)
	queueScript        = newScript(lapsedLua + queueLua)
	queueBeatsScript   = newScript(lapsedLua + queueBeatsLua)
	semaphoreScript    = newScript(lapsedLua + semaphoreLua)
	undoScript         = newScript(undoLua)
	delIfEqScript      = newScript(noteLeadLua + delIfEqLua)
	pexpireIfEqScript  = newScript(noteAfterLua + noteLeadLua + roundOrderLua + pexpireIfEqLua)
	extendScript       = newScript(noteLeadLua + extendLua)
	reattachScript     = newScript(noteLeadLua + tokenPartLua + roundOrderLua + reattachLua)
	getPTTLScript      = newScript(tokenPartLua + getPTTLLua)
	hashAcquireScript  = newScript(hashPrelude + lapsedLua + fmt.Sprintf("local tokenKey = %q\n", quorum.TokenKey) + counterSeedLua + hashAcquireLua)
	hashReleaseScript  = newScript(hashPrelude + hashReleaseLua)
	hashExtendScript   = newScript(hashPrelude + hashExtendLua)
	hashLeaseScript    = newScript(printPrelude + hashLeaseLua)
	hashUnholdScript   = newScript(hashPrelude + hashUnholdLua)
	hashSetHoldsScript = newScript(hashPrelude + hashSetHoldsLua)
	hashGetScript      = newScript(hashPrelude + hashGetLua)
	raiseScript        = newScript(tokenPartLua + raiseLua)
	setXXScript        = newScript(printPrelude + noteLeadLua + setXXLua)
	recordScript       = redis.NewScript(recordLua)
	delScript          = newScript(printPrelude + fmt.Sprintf("local semKeys = {%q, %q, %q, %d}\n", semP, semLeaseP, semGoneP, quorum.SemaphoreGoneTTL.Milliseconds()) + delLua)
	unmarkScript       = newScript(unmarkLua)
	delLatchScript     = newScript(delLatchLua)
	floorPrelude       = fmt.Sprintf("local tokenKey, lockCounterPrefix = %q, %q\n", quorum.TokenKey, quorum.LockCounterKey("")) + counterFloorLua
	repairScript       = redis.NewScript(floorPrelude + repairLua)
	markNewScript      = redis.NewScript(floorPrelude + markNewLua)
)
