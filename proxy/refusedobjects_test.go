package proxy

import (
	"strings"
	"testing"
)

// An object the proxy does not serve is refused at its first script by
// name, by EVALSHA as by EVAL.
func TestUnservedObjectRefusedByName(t *testing.T) {
	_, addr := serve(t)
	got := converse(t, addr, "EVALSHA 2A52D54A6F35BC8AF5E84A2930B2CA1AA2A15892 1 {k} 30000 a:1\r\n", 1)
	if !strings.HasPrefix(got[0], "-ERR redlock-proxy does not serve Redisson RCountDownLatch (3.23-3.52)") {
		t.Errorf("RCountDownLatch's first script = %q; want refused naming it", got[0])
	}
	for sha, want := range map[string]string{
		"38060fab26b0e7c5982a5cfd7ad542e44d3da19b": "Redisson RCountDownLatch (3.23)",
		"c7dc9d189c1715465a31a06ddbc008585e0c20be": "Redisson RSemaphore (3.23-3.52)", // tryAcquire
		"98238d408c6755085344670d3a2ddaa55cf177a9": "Redisson RSemaphore (3.23-3.52)", // addPermits
	} {
		got := converse(t, addr, "EVALSHA "+sha+" 1 {k} 30000 a:1\r\n", 1)
		if !strings.HasPrefix(got[0], "-ERR redlock-proxy does not serve "+want) {
			t.Errorf("EVALSHA %.8s = %q; want refused naming %s", sha, got[0], want)
		}
	}
}
