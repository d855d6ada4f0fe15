package ckpt

import (
	"fmt"
	"math"
)

// The words every face prints the same way: a change summary and a size.

// FormatCounts is the change summary every command, tool and screen
// prints: "+3 ~1 -2" for 3 paths added, 1 modified and 2 deleted.
func FormatCounts(added, modified, deleted int) string {
	return fmt.Sprintf("+%d ~%d -%d", added, modified, deleted)
}

// FormatTurnFiles is the change summary of a turn's files (see
// FormatCounts): a type change counts as modified.
func FormatTurnFiles(fs []TurnFile) string {
	var a, m, d int
	for _, f := range fs {
		countStatus(f.Status, &a, &m, &d)
	}
	return FormatCounts(a, m, d)
}

// FormatChanges is the change summary of a list of changes (see
// FormatCounts): a type change counts as modified.
func FormatChanges(cs []FileChange) string {
	var a, m, d int
	for _, c := range cs {
		countStatus(c.Status, &a, &m, &d)
	}
	return FormatCounts(a, m, d)
}

func countStatus(status string, added, modified, deleted *int) {
	switch status {
	case "added":
		*added++
	case "deleted":
		*deleted++
	default:
		*modified++
	}
}

// HumanSize writes a byte count for people to read: "512 B", "9.8 KiB",
// "12 MiB", "1.5 GiB" — a binary unit, one decimal below 10 and none
// from 10 on (what go-humanize's IBytes writes). FormatSize writes a size
// for settings instead, exactly ("500MiB").
func HumanSize(n int64) string {
	sign, u := "", uint64(n)
	if n < 0 {
		sign, u = "-", -u
	}
	if u < 10 {
		return fmt.Sprintf("%s%d B", sign, u)
	}
	const base = 1024
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	e := math.Floor(math.Log(float64(u)) / math.Log(base))
	val := float64(u) / math.Pow(base, e)
	// Two significant digits (at least the integer part), rounded once;
	// a carry into another integer digit (9.96 -> 10) drops a decimal.
	intDigits := countDigits(int64(val))
	digits := max(2-intDigits, 0)
	scale := math.Pow10(digits)
	val = math.Floor(val*scale+0.5) / scale
	if d := countDigits(int64(val)); d > intDigits {
		digits = max(digits-(d-intDigits), 0)
	}
	return fmt.Sprintf("%s%.*f %s", sign, digits, val, units[int(e)])
}

func countDigits(n int64) int {
	d := 0
	for ; n != 0; n /= 10 {
		d++
	}
	return d
}
