package ckpt

import (
	"encoding/json"
	"testing"
)

func TestSplitAncestry(t *testing.T) {
	for rev, want := range map[string]struct {
		base  string
		steps int
	}{
		"HEAD": {"HEAD", 0}, "HEAD~": {"HEAD", 1}, "HEAD~3": {"HEAD", 3}, "HEAD^^": {"HEAD", 2},
		"abc1~2^": {"abc1", 3}, "tags/v1~1": {"tags/v1", 1}, "name~x": {"name~x", 0},
	} {
		base, steps, err := splitAncestry(rev)
		if err != nil || base != want.base || steps != want.steps {
			t.Errorf("splitAncestry(%q) = %q, %d, %v; want %q, %d", rev, base, steps, err, want.base, want.steps)
		}
	}
	for _, bad := range []string{"", "~", "^"} {
		if _, _, err := splitAncestry(bad); err == nil {
			t.Errorf("splitAncestry(%q) accepted", bad)
		}
	}
}

func FuzzSplitAncestry(f *testing.F) {
	f.Add("HEAD~12^")
	f.Fuzz(func(t *testing.T, rev string) {
		splitAncestry(rev)
	})
}

// Paths in JSON round-trip, whatever their bytes.
func FuzzPathJSON(f *testing.F) {
	for _, s := range []string{"a/b", "caf\xe9", "\"quoted", "back\\slash", "tab\tnl\n", "日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		b, err := json.Marshal(Path(p))
		if err != nil {
			t.Fatal(err)
		}
		var back Path
		if err := json.Unmarshal(b, &back); err != nil || string(back) != p {
			t.Fatalf("%q -> %s -> %q (%v)", p, b, back, err)
		}
	})
}

func FuzzManifestJSON(f *testing.F) {
	f.Add([]byte(`{"files": {"a": {"sha256": "x", "size": 1, "mode": "644"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m Manifest
		if m.UnmarshalJSON(data) != nil {
			return
		}
		out, err := m.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var again Manifest
		if err := again.UnmarshalJSON(out); err != nil || len(again.Files) != len(m.Files) {
			t.Fatalf("manifest does not round-trip: %v", err)
		}
	})
}
