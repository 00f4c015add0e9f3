package e2e

import (
	"testing"
)

// review110: as review108's restore, but the replica that serves b is
// started after backend 0 came back from the copy (a scale-up, or a
// restart of that replica during the maintenance). Replica 1, running
// throughout, quarantines backend 0 (its presence reads older); replica 2
// has no presence history there: a persistent backend carrying an old
// run's marker counts at once, and b is granted on 0 and 2 while a holds
// the lock on 1.
func TestReview110RestoredCopyVotesForANewReplica(t *testing.T) {
	restoredFromCopy(t, "r110:k", true)
}
