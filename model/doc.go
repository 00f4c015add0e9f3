// Package model holds Promela models of redlock-proxy's lock protocol
// (mutex.pml: acquire, release, extend, rollback, restart quarantine,
// drift padding; sessions.pml: a session lock's renewals, its release
// when its connection closes and its re-attach through another replica,
// by the round each names; tokens.pml: fencing tokens, their raise, repair
// and first read) and a test that runs spin on each configuration: the
// unmutated ones must verify with no error, each mutant (a check removed
// from the model) must be caught. See README.md for what is modelled, the
// bounds, and what is outside the model.
package model
