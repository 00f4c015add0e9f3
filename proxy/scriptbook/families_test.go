package scriptbook

import (
	"strings"
	"testing"
)

// kindRole is the role each script kind plays in its family.
var kindRole = map[Kind]role{
	Release: roleRelease, ReleaseMissing: roleRelease, HashRelease: roleRelease,
	SpringRelease: roleRelease, SpringReleaseNotify: roleRelease, SpringReleaseNotifyKey: roleRelease,
	BsmRelease: roleRelease, ReleaseAll: roleRelease,
	Extend: roleRenew, ExtendPy: roleRenew, ExtendOrAcquire: roleRenew, ExtendAll: roleRenew,
	HashExtend: roleRenew, HashExtendAll: roleRenew, SpringRenew: roleRenew, BsmRefresh: roleRenew,
	Obtain: roleAcquire, AcquireAll: roleAcquire, HashAcquire: roleAcquire, FencedAcquire: roleAcquire,
	FencedTryAcquire: roleAcquire, SpringObtain: roleAcquire, BsmObtain: roleAcquire,
	ForceUnlock: roleForceRelease, SpringDeleteNotify: roleForceRelease,
	OwnerPTTL: roleRead, BsmPTTL: roleRead, ReadLocked: roleRead,
	HashLeaseAll: roleLease,
	FairAcquire:  roleAcquire, FairTryAcquire: roleAcquire, FairLeave: roleLeave,
}

// permitRole is the role each step of RPermitExpirableSemaphore plays.
var permitRole = map[PermitStep]role{
	PermitAcquire: roleAcquire, PermitRelease: roleRelease, PermitReleaseAny: roleRelease, PermitReleaseAll: roleRelease,
	PermitLease: roleRenew, PermitAvailable: roleRead, PermitTotal: roleRead, PermitAcquired: roleRead, PermitLeaseLeft: roleRead,
	PermitSet: roleSetup, PermitTrySet: roleSetup, PermitAdd: roleSetup,
}

// roleOf is the role a script with spec sp plays.
func roleOf(sp *Spec) role {
	if sp.Kind == Permits {
		return permitRole[sp.Permit]
	}
	return kindRole[sp.Kind]
}

// Every family is served whole (its acquire, release, renew where the
// client renews, force release where it has one) or its acquire is refused;
// every script in the book belongs to a family, in the role its kind says.
func TestFamiliesServedWhole(t *testing.T) {
	inFamily := map[string]bool{}
	for _, f := range families {
		for _, mb := range f.members {
			inFamily[mb.sha] = true
			if sp := Book[mb.sha]; sp != nil && roleOf(sp) != mb.role {
				t.Errorf("%s: %.8s is listed as %s, but the proxy runs it as %s (%s)", f, mb.sha, mb.role, roleOf(sp), sp.Kind)
			}
		}
		why := f.missing(inBook)
		switch {
		case why == "":
		case f.gap != "":
			t.Logf("KNOWN GAP %s: %s; not refused: %s", f, why, f.gap)
		default:
			for _, mb := range f.members {
				if mb.role == roleAcquire && RefusedAcquires[mb.sha] == "" {
					t.Errorf("%s is not served whole (%s), yet its acquire %.8s is not refused", f, why, mb.sha)
				}
			}
		}
	}
	for sha, sp := range Book {
		if !inFamily[sha] {
			t.Errorf("script %s (%s) is in the book but in no family", sha, sp.Kind)
		}
		if roleOf(sp) == 0 {
			t.Errorf("kind %s (%d) has no role", sp.Kind, sp.Permit)
		}
	}
	// A served family's acquire is never refused.
	for _, f := range families {
		if f.missing(inBook) != "" {
			continue
		}
		for _, mb := range f.members {
			if err := RefusedAcquires[mb.sha]; mb.role == roleAcquire && err != "" {
				t.Errorf("%s is served whole, but its acquire %.8s is refused: %s", f, mb.sha, err)
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
	if got != want {
		t.Errorf("RSpinLock 3.52's acquire with its unlock unserved: %q; want %q", got, want)
	}
	noRelease := []family{{object: "X", version: "1", members: []member{m(rLock, roleAcquire)}}}
	if err := refusals(noRelease, inBook)[rLock]; !strings.Contains(err, "it has no unlock script") {
		t.Errorf("a family without a release: %q; want its acquire refused", err)
	}
	noRenew := []family{{object: "X", version: "1", renews: true, members: []member{m(rLock, roleAcquire), m(rUnlock, roleRelease)}}}
	if err := refusals(noRenew, inBook)[rLock]; !strings.Contains(err, "no renew") {
		t.Errorf("a renewing family without a renew: %q; want its acquire refused", err)
	}
}
