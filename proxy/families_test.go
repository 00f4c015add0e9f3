package proxy

import (
	"strings"
	"testing"
)

// kindRole is the role each script kind plays in its family.
var kindRole = map[scriptKind]role{
	scriptRelease: roleRelease, scriptReleaseMissing: roleRelease, scriptHashRelease: roleRelease,
	scriptSpringRelease: roleRelease, scriptSpringReleaseNotify: roleRelease, scriptSpringReleaseNotifyKey: roleRelease,
	scriptBsmRelease: roleRelease, scriptReleaseAll: roleRelease,
	scriptExtend: roleRenew, scriptExtendPy: roleRenew, scriptExtendOrAcquire: roleRenew, scriptExtendAll: roleRenew,
	scriptHashExtend: roleRenew, scriptHashExtendAll: roleRenew, scriptSpringRenew: roleRenew, scriptBsmRefresh: roleRenew,
	scriptObtain: roleAcquire, scriptAcquireAll: roleAcquire, scriptHashAcquire: roleAcquire, scriptFencedAcquire: roleAcquire,
	scriptFencedTryAcquire: roleAcquire, scriptSpringObtain: roleAcquire, scriptBsmObtain: roleAcquire,
	scriptForceUnlock: roleForceRelease, scriptSpringDeleteNotify: roleForceRelease,
	scriptOwnerPTTL: roleRead, scriptBsmPTTL: roleRead, scriptReadLocked: roleRead,
	scriptHashLeaseAll: roleLease,
	scriptFairAcquire:  roleAcquire, scriptFairTryAcquire: roleAcquire, scriptFairLeave: roleLeave,
}

// permitRole is the role each step of RPermitExpirableSemaphore plays.
var permitRole = map[permitStep]role{
	permitAcquire: roleAcquire, permitRelease: roleRelease, permitReleaseAny: roleRelease, permitReleaseAll: roleRelease,
	permitLease: roleRenew, permitAvailable: roleRead, permitTotal: roleRead, permitAcquired: roleRead, permitLeaseLeft: roleRead,
	permitSet: roleSetup, permitTrySet: roleSetup, permitAdd: roleSetup,
}

// roleOf is the role a script with spec sp plays.
func roleOf(sp *spec) role {
	if sp.kind == scriptPermits {
		return permitRole[sp.permit]
	}
	return kindRole[sp.kind]
}

// Every family is served whole (its acquire, release, renew where the
// client renews, force release where it has one) or its acquire is refused;
// every script in the book belongs to a family, in the role its kind says.
func TestFamiliesServedWhole(t *testing.T) {
	inFamily := map[string]bool{}
	for _, f := range families {
		for _, mb := range f.members {
			inFamily[mb.sha] = true
			if sp := book[mb.sha]; sp != nil && roleOf(sp) != mb.role {
				t.Errorf("%s: %.8s is listed as %s, but the proxy runs it as %s (%s)", f, mb.sha, mb.role, roleOf(sp), sp.kind)
			}
		}
		why := f.missing(inBook)
		switch {
		case why == "":
		case f.gap != "":
			t.Logf("KNOWN GAP %s: %s; not refused: %s", f, why, f.gap)
		default:
			for _, mb := range f.members {
				if mb.role == roleAcquire && refusedAcquires[mb.sha] == nil {
					t.Errorf("%s is not served whole (%s), yet its acquire %.8s is not refused", f, why, mb.sha)
				}
			}
		}
	}
	for sha, sp := range book {
		if !inFamily[sha] {
			t.Errorf("script %s (%s) is in the book but in no family", sha, sp.kind)
		}
		if roleOf(sp) == 0 {
			t.Errorf("kind %s (%d) has no role", sp.kind, sp.permit)
		}
	}
	// A served family's acquire is never refused.
	for _, f := range families {
		if f.missing(inBook) != "" {
			continue
		}
		for _, mb := range f.members {
			if err := refusedAcquires[mb.sha]; mb.role == roleAcquire && err != nil {
				t.Errorf("%s is served whole, but its acquire %.8s is refused: %v", f, mb.sha, err)
			}
		}
	}
}

// The walk catches a family that lacks its release: with RSpinLock 3.52's
// unlock unserved (as on main before issue 26), its lock text, shared with
// RLock 3.12.3-3.18, is refused naming the object and version.
func TestFamilyWithoutReleaseIsRefusedAtAcquire(t *testing.T) {
	served := func(sha string) bool { return inBook(sha) && sha != redissonSpinUnlock352 }
	got := refusals(families, served)[rLock312]
	want := "ERR redlock-proxy does not serve Redisson RSpinLock (3.52): its unlock script 73ac2729… is not recognised; use RLock"
	if got == nil || got.Error() != want {
		t.Errorf("RSpinLock 3.52's acquire with its unlock unserved: %v; want %q", got, want)
	}
	noRelease := []family{{object: "X", version: "1", members: []member{m(rLock, roleAcquire)}}}
	if err := refusals(noRelease, inBook)[rLock]; err == nil || !strings.Contains(err.Error(), "it has no unlock script") {
		t.Errorf("a family without a release: %v; want its acquire refused", err)
	}
	noRenew := []family{{object: "X", version: "1", renews: true, members: []member{m(rLock, roleAcquire), m(rUnlock, roleRelease)}}}
	if err := refusals(noRenew, inBook)[rLock]; err == nil || !strings.Contains(err.Error(), "no renew") {
		t.Errorf("a renewing family without a renew: %v; want its acquire refused", err)
	}
}

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
