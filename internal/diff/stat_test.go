package diff

import (
	"bytes"
	"strings"
	"testing"
)

func TestWriteStatGolden(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stats []FileStat
	}{
		{"mixed", []FileStat{
			{Path: "README.md", Insertions: 3, Deletions: 1},
			{Path: "img/logo.png", Binary: true, OldSize: 1024, NewSize: 2048},
			{Path: "run.sh"},
			{Path: "t\xc3\xa9st", Insertions: 1},
			{Path: "mode.bin", Binary: true},
		}},
		{"scaled", []FileStat{
			{Path: "small", Insertions: 1, Deletions: 1},
			{Path: "generated/" + strings.Repeat("deep/", 12) + "big.go", Insertions: 900, Deletions: 250},
		}},
		{"deletions", []FileStat{{Path: "gone", Deletions: 1}}},
		{"nothing", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteStat(&buf, tc.stats); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "stat/"+tc.name+".txt", buf.Bytes())
		})
	}
}

func TestStat(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Change
		want FileStat
	}{
		{"modified", Change{Path: "f", Old: reg("a\nb\nc\n"), New: reg("a\nB\nc\nd\n")}, FileStat{Path: "f", Insertions: 2, Deletions: 1}},
		{"added", Change{Path: "f", New: reg("a\nb")}, FileStat{Path: "f", Insertions: 2}},
		{"mode only", Change{Path: "f", Old: reg("a\n"), New: execf("a\n")}, FileStat{Path: "f"}},
		{"binary", Change{Path: "f", Old: reg("\x00"), New: reg("\x00\x00")}, FileStat{Path: "f", Binary: true, OldSize: 1, NewSize: 2}},
		{"binary mode only", Change{Path: "f", Old: reg("\x00"), New: execf("\x00")}, FileStat{Path: "f", Binary: true}},
		{"file to symlink", Change{Path: "f", Old: reg("t\n"), New: link("t")}, FileStat{Path: "f", Insertions: 1, Deletions: 1}},
	} {
		if got := Stat(tc.c); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
