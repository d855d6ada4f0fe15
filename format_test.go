package ckpt

import "testing"

// TestHumanSize: the sizes go-humanize v1.1.0's IBytes wrote for these
// values, before HumanSize replaced it.
func TestHumanSize(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"},
		{1, "1 B"},
		{9, "9 B"},
		{10, "10 B"},
		{512, "512 B"},
		{999, "999 B"},
		{1000, "1000 B"},
		{1023, "1023 B"},
		{1024, "1.0 KiB"},
		{1025, "1.0 KiB"},
		{1536, "1.5 KiB"},
		{10035, "9.8 KiB"},
		{10188, "9.9 KiB"},
		{10239, "10 KiB"},
		{10240, "10 KiB"},
		{10752, "11 KiB"},
		{10753, "11 KiB"},
		{12582912, "12 MiB"},
		{102400, "100 KiB"},
		{1048063, "1023 KiB"},
		{1048064, "1024 KiB"},
		{1048575, "1024 KiB"},
		{1048576, "1.0 MiB"},
		{1572864, "1.5 MiB"},
		{5242881, "5.0 MiB"},
		{10485759, "10 MiB"},
		{103809024, "99 MiB"},
		{104805171, "100 MiB"},
		{104857600, "100 MiB"},
		{1073741823, "1024 MiB"},
		{1073741824, "1.0 GiB"},
		{1610612736, "1.5 GiB"},
		{1099511627776, "1.0 TiB"},
		{1125899906842624, "1.0 PiB"},
		{1152921504606846976, "1.0 EiB"},
		{9223372036854775807, "8.0 EiB"},
		// Not from go-humanize, which takes no negative sizes.
		{-1536, "-1.5 KiB"},
		{-9223372036854775808, "-8.0 EiB"},
	} {
		if got := HumanSize(c.n); got != c.want {
			t.Errorf("HumanSize(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestFormatCounts(t *testing.T) {
	if got, want := FormatCounts(3, 1, 2), "+3 ~1 -2"; got != want {
		t.Errorf("FormatCounts(3, 1, 2) = %q, want %q", got, want)
	}
	fs := []TurnFile{{Path: "a", Status: "added"}, {Path: "b", Status: "modified"}, {Path: "c", Status: "type-changed"},
		{Path: "d", Status: "deleted"}, {Path: "e", Status: "added"}}
	if got, want := FormatTurnFiles(fs), "+2 ~2 -1"; got != want {
		t.Errorf("FormatTurnFiles = %q, want %q", got, want)
	}
	cs := []FileChange{{Path: "a", Status: "deleted"}, {Path: "b", Status: "type-changed"}}
	if got, want := FormatChanges(cs), "+0 ~1 -1"; got != want {
		t.Errorf("FormatChanges = %q, want %q", got, want)
	}
	if got, want := FormatChanges(nil), "+0 ~0 -0"; got != want {
		t.Errorf("FormatChanges(nil) = %q, want %q", got, want)
	}
}
