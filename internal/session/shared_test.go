package session

import (
	"fmt"
	"testing"
)

// sharedHit: a shared path, one above it (a directory another session's
// turn changed something in) or one below it counts; a sibling or a path
// that only shares a name prefix does not.
func TestSharedHit(t *testing.T) {
	set := map[string]bool{"d/e/f.txt": true, "top": true}
	above := dirsAbove(set)
	for p, want := range map[string]bool{
		"d/e/f.txt": true, "d/e": true, "d": true, // the path, directories above it
		"top/x/y":   true, // below a shared path
		"d/e/g.txt": false, "d/ee": false, "d/e/f.txt2": false, "to": false, "topx": false,
	} {
		if got := sharedHit(set, above, p); got != want {
			t.Errorf("sharedHit(%q) = %v, want %v", p, got, want)
		}
	}
	if sharedHit(nil, nil, "d") {
		t.Error("hit in an empty set")
	}
}

// A rewind's own paths against a large shared set (another session's turn
// ran `npm install` meanwhile): each look-up is a constant number of map
// reads, not a pass over the set (that took 24 s for 10,000 paths against
// 50,000 shared ones).
func TestSharedHitLargeSet(t *testing.T) {
	set := map[string]bool{}
	for i := range 50000 {
		set[fmt.Sprintf("node_modules/p%d/index.js", i)] = true
	}
	above := dirsAbove(set)
	if len(above) != 50001 {
		t.Fatalf("%d directories above", len(above))
	}
	for i := range 10000 {
		if sharedHit(set, above, fmt.Sprintf("gen/f%d.go", i)) {
			t.Fatalf("gen/f%d.go shared", i)
		}
	}
	if !sharedHit(set, above, "node_modules") || !sharedHit(set, above, "node_modules/p7") {
		t.Fatal("directories above the shared paths not hit")
	}
}
