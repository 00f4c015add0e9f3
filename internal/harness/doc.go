// Package harness runs redlock-proxy in-process, wired by the same
// app.Start as the binary, in front of real redis-server backends on free
// ports, for the end-to-end tests (the top-level redcon_test.go and e2e/).
package harness
