package ckpt

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestParseFormatDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"0": 0, "90m": 90 * time.Minute, "24h": 24 * time.Hour,
		"30d": 30 * 24 * time.Hour, "2w": 14 * 24 * time.Hour, "1.5d": 36 * time.Hour} {
		got, err := ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
		back, err := ParseDuration(FormatDuration(got))
		if err != nil || back != got {
			t.Errorf("round trip of %v via %q", got, FormatDuration(got))
		}
	}
	for _, bad := range []string{"-1h", "soon", "3x", "-2d"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
}

func TestParseFormatSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "100": 100, "1KiB": 1024, "1k": 1024, "500MiB": 500 << 20,
		"1GiB": 1 << 30, "2GB": 2e9, "1.5 MiB": 3 << 19} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %v, %v; want %v", in, got, err, want)
		}
		if back, _ := ParseSize(FormatSize(got)); back != got {
			t.Errorf("round trip of %d via %q", got, FormatSize(got))
		}
	}
	for in, want := range map[string]int64{"10mib": 10 << 20, "10MIB": 10 << 20, "10 MiB": 10 << 20, "3kb": 3000} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"-1", "lots", "1XB", "inf", "NaN", "0x10", "1e30", "9999999TiB", ""} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
}

func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	c, err := LoadConfig(dir)
	if err != nil || c != DefaultConfig() {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	v := "git"
	if err := WriteConfig(dir, "backend", &v); err != nil {
		t.Fatal(err)
	}
	v = "refs/sandbox/"
	if err := WriteConfig(dir, "git_ref_prefix", &v); err != nil {
		t.Fatal(err)
	}
	v = "7"
	if err := WriteConfig(dir, "keep", &v); err != nil {
		t.Fatal(err)
	}
	c, err = LoadConfig(dir)
	if err != nil || c.Backend != "git" || c.GitRefPrefix != "refs/sandbox" || c.Keep != 7 || c.MaxAge != DefaultConfig().MaxAge {
		t.Fatalf("got %+v %v", c, err)
	}
	if err := WriteConfig(dir, "keep", nil); err != nil {
		t.Fatal(err)
	}
	if c, _ := LoadConfig(dir); c.Keep != 100 {
		t.Fatalf("unset keep: %d", c.Keep)
	}
	bad := "refs/../x"
	if err := WriteConfig(dir, "git_ref_prefix", &bad); err == nil {
		t.Fatal("bad prefix accepted")
	}
	os.WriteFile(filepath.Join(dir, ConfigFile), []byte("keep = [1]\n"), 0o600)
	if _, err := LoadConfig(dir); err == nil {
		t.Fatal("array accepted")
	}
}
