// Package scriptbook is what the proxy knows of the Lua scripts lock
// clients send, and nothing else: it holds no connection, no server and no
// lock state, and imports nothing of the proxy's.
//
//	scriptbook.go  Kind (what a script means as a lock operation), Spec (where its
//	               key, owner, TTL, channel, latch, queue... are), each kind's
//	               layout and the per-version differences, Book (every known
//	               script's spec by SHA1), Registry (texts seen by EVAL and
//	               SCRIPT LOAD, per tenant, bounded; operators' scripts)
//	places.go      the positions a spec reads, and how a short call is told
//	scriptfacts.go a row per client script: its SHA1, the SHA1 of its normalised
//	               text, its kind, client, versions and the recorded session that
//	               carries its text; never the text itself
//	normalize.go   the normaliser (a copy in other spacing, comments or quoting is
//	               the same script) and the canonical unlock and extend shapes
//	fairspecs.go, rwspecs.go, permitspecs.go
//	               Redisson's RFairLock, RReadWriteLock and
//	               RPermitExpirableSemaphore scripts by SHA1, with their layouts
//	families.go    each client object in one version as a family of scripts by
//	               role (acquire, renew, release, ...): served whole, or its
//	               acquire refused naming the object (RefusedAcquires)
//	conventions.go an operator-registered script's reply convention
//
// The proxy (proxy/scriptcmds.go) runs a recognised script's meaning as
// quorum rounds; specoperands.go there reads a call's operands through its
// Spec. TestScriptFactsRecorded checks every fact against the recorded
// sessions (compat/transcripts), TestFamiliesServedWhole every family
// against the book.
package scriptbook
