// Package history is the record of what clients saw: every lock operation a
// test or the nemesis sent, with the times it was sent and answered on the
// recording process's monotonic clock, and what it was told. The fault suite
// and the nemesis (e2e/nemesis) write histories; Check reads a whole history
// and reports every anomaly against the contract of a lock with fencing
// (DESIGN.md), so an anomaly nobody wrote an assertion for still fails.
package history
