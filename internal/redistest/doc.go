// Package redistest starts real redis-server processes for tests, on free
// loopback ports, and kills, pauses and restarts them on demand.
package redistest
