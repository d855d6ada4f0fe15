package ckpt

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/seed1cedbf7c/ckpt/internal/atomicfile"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// ConfigFile is the name of the store's settings file, in the store
// directory.
const ConfigFile = "config.toml"

// Config is a store's settings: config.toml in the store directory, every
// key optional. [DefaultConfig] gives the values of absent keys.
type Config struct {
	// Backend is "sqlite" or "git" (see [Options.Backend]).
	Backend string `json:"backend"`
	// GitRefPrefix is where the git backend keeps its refs.
	GitRefPrefix string `json:"git_ref_prefix"`
	// SnapshotTTL is the default lifetime of a named snapshot (0: forever).
	SnapshotTTL time.Duration `json:"snapshot_ttl"`
	// Keep is how many checkpoints gc keeps per branch.
	Keep int `json:"keep"`
	// MaxAge is the age beyond which gc drops checkpoints.
	MaxAge time.Duration `json:"max_age"`
	// MaxSize bounds the store's size on disk, in bytes.
	MaxSize int64 `json:"max_size"`
	// KeepHourly, KeepDaily, KeepWeekly and KeepMonthly are how many
	// hours, days, ISO weeks and months gc keeps a checkpoint of per
	// branch, besides Keep (see [Retention]).
	KeepHourly  int `json:"keep_hourly"`
	KeepDaily   int `json:"keep_daily"`
	KeepWeekly  int `json:"keep_weekly"`
	KeepMonthly int `json:"keep_monthly"`
	// TimelineMax is how many timeline checkpoints the git backend keeps
	// as refs.
	TimelineMax int `json:"timeline_max"`
	// Summarizer is a command that reads a session transcript (JSON) on
	// stdin and prints a summary ("": the built-in summarizer).
	Summarizer string `json:"summarizer"`
}

// DefaultConfig returns the settings of a store without config.toml.
func DefaultConfig() Config {
	return Config{
		Backend:      BackendSQLite,
		GitRefPrefix: "refs/ckpt",
		Keep:         100,
		MaxAge:       30 * 24 * time.Hour,
		MaxSize:      1 << 30,
		TimelineMax:  50,
	}
}

// ConfigKey describes one setting.
type ConfigKey struct {
	Name string `json:"name"`
	Doc  string `json:"doc"`
	// Kind is "string", "int", "duration" or "size".
	Kind string `json:"kind"`
	get  func(*Config) string
	set  func(*Config, string) error
}

// ConfigKeys lists the settings config.toml may hold.
func ConfigKeys() []ConfigKey { return configKeys }

var configKeys = []ConfigKey{
	{Name: "backend", Kind: "string", Doc: "store backend: sqlite or git",
		get: func(c *Config) string { return c.Backend },
		set: func(c *Config, v string) error {
			if v != BackendSQLite && v != BackendGit {
				return fmt.Errorf("want sqlite or git, not %q", v)
			}
			c.Backend = v
			return nil
		}},
	{Name: "git_ref_prefix", Kind: "string", Doc: "ref namespace of the git backend (refs/sandbox reproduces the sandbox snapshot tools' refs)",
		get: func(c *Config) string { return c.GitRefPrefix },
		set: func(c *Config, v string) error {
			v = strings.TrimSuffix(v, "/")
			if !strings.HasPrefix(v, "refs/") || strings.Contains(v, "..") || strings.ContainsAny(v, " ~^:?*[\\\x7f") || strings.Contains(v, "//") {
				return fmt.Errorf("want a ref namespace like refs/ckpt, not %q", v)
			}
			c.GitRefPrefix = v
			return nil
		}},
	{Name: "snapshot_ttl", Kind: "duration", Doc: "default lifetime of a named snapshot (0: forever)",
		get: func(c *Config) string { return FormatDuration(c.SnapshotTTL) },
		set: func(c *Config, v string) (err error) { c.SnapshotTTL, err = ParseDuration(v); return }},
	{Name: "keep", Kind: "int", Doc: "checkpoints gc keeps per branch",
		get: func(c *Config) string { return strconv.Itoa(c.Keep) },
		set: func(c *Config, v string) (err error) { c.Keep, err = parseCount(v); return }},
	{Name: "keep_hourly", Kind: "int", Doc: "hours gc keeps the newest checkpoint of, per branch, besides keep",
		get: func(c *Config) string { return strconv.Itoa(c.KeepHourly) },
		set: func(c *Config, v string) (err error) { c.KeepHourly, err = parseCount(v); return }},
	{Name: "keep_daily", Kind: "int", Doc: "days gc keeps the newest checkpoint of, per branch, besides keep",
		get: func(c *Config) string { return strconv.Itoa(c.KeepDaily) },
		set: func(c *Config, v string) (err error) { c.KeepDaily, err = parseCount(v); return }},
	{Name: "keep_weekly", Kind: "int", Doc: "ISO weeks gc keeps the newest checkpoint of, per branch, besides keep",
		get: func(c *Config) string { return strconv.Itoa(c.KeepWeekly) },
		set: func(c *Config, v string) (err error) { c.KeepWeekly, err = parseCount(v); return }},
	{Name: "keep_monthly", Kind: "int", Doc: "months gc keeps the newest checkpoint of, per branch, besides keep",
		get: func(c *Config) string { return strconv.Itoa(c.KeepMonthly) },
		set: func(c *Config, v string) (err error) { c.KeepMonthly, err = parseCount(v); return }},
	{Name: "max_age", Kind: "duration", Doc: "gc drops checkpoints older than this unless a keep_* bucket keeps them (0: no limit)",
		get: func(c *Config) string { return FormatDuration(c.MaxAge) },
		set: func(c *Config, v string) (err error) { c.MaxAge, err = ParseDuration(v); return }},
	{Name: "max_size", Kind: "size", Doc: "gc keeps the store under this size on disk (0: no limit)",
		get: func(c *Config) string { return FormatSize(c.MaxSize) },
		set: func(c *Config, v string) (err error) { c.MaxSize, err = ParseSize(v); return }},
	{Name: "timeline_max", Kind: "int", Doc: "timeline checkpoints the git backend keeps as refs",
		get: func(c *Config) string { return strconv.Itoa(c.TimelineMax) },
		set: func(c *Config, v string) (err error) { c.TimelineMax, err = parseCount(v); return }},
	{Name: "summarizer", Kind: "string", Doc: "command that summarizes a transcript (JSON on stdin); empty: built-in",
		get: func(c *Config) string { return c.Summarizer },
		set: func(c *Config, v string) error { c.Summarizer = v; return nil }},
}

func configKey(name string) (*ConfigKey, error) {
	for i := range configKeys {
		if configKeys[i].Name == name {
			return &configKeys[i], nil
		}
	}
	var names []string
	for _, k := range configKeys {
		names = append(names, k.Name)
	}
	return nil, fmt.Errorf("unknown setting %q (settings: %s)", name, strings.Join(names, ", "))
}

// Get returns the value of a setting in its text form.
func (c *Config) Get(key string) (string, error) {
	k, err := configKey(key)
	if err != nil {
		return "", err
	}
	return k.get(c), nil
}

// Set parses and sets a setting.
func (c *Config) Set(key, value string) error {
	k, err := configKey(key)
	if err != nil {
		return err
	}
	if err := k.set(c, value); err != nil {
		return fmt.Errorf("setting %s: %w", key, err)
	}
	return nil
}

func parseCount(v string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("want a whole number >= 0, not %q", v)
	}
	return n, nil
}

// configFile is the raw content of config.toml: the keys that are set, as
// text.
type configFile map[string]string

func readConfigFile(path string) (configFile, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return configFile{}, nil // no store there yet (creating it will say why, if it cannot be)
	}
	if err != nil {
		return nil, err
	}
	var raw map[string]any
	if _, err := toml.Decode(string(data), &raw); err != nil {
		return nil, &ConfigError{Path: path, Err: err}
	}
	f := configFile{}
	for k, v := range raw {
		switch x := v.(type) {
		case string:
			f[k] = x
		case int64:
			f[k] = strconv.FormatInt(x, 10)
		default:
			return nil, &ConfigError{Path: path, Err: fmt.Errorf("%s: want a string or a number", k)}
		}
	}
	return f, nil
}

// LoadConfig reads the config.toml of a store directory (defaults for
// absent keys; a missing file is all defaults).
func LoadConfig(storeDir string) (Config, error) {
	c := DefaultConfig()
	if storeDir == "" {
		return c, nil
	}
	path := filepath.Join(storeDir, ConfigFile)
	f, err := readConfigFile(path)
	if err != nil {
		return c, err
	}
	for _, k := range sortedKeys(f) {
		if err := c.Set(k, f[k]); err != nil {
			return DefaultConfig(), &ConfigError{Path: path, Err: err}
		}
	}
	return c, nil
}

// ConfigSet returns the keys config.toml of a store directory sets
// explicitly, with their values.
func ConfigSet(storeDir string) (map[string]string, error) {
	if storeDir == "" {
		return map[string]string{}, nil
	}
	return readConfigFile(filepath.Join(storeDir, ConfigFile))
}

// WriteConfig sets (value != nil) or removes (value == nil) one key in the
// config.toml of a store directory, atomically. The value is validated
// first; other keys are kept as they are.
func WriteConfig(storeDir, key string, value *string) error {
	k, err := configKey(key)
	if err != nil {
		return err
	}
	path := filepath.Join(storeDir, ConfigFile)
	f, err := readConfigFile(path)
	if err != nil {
		return err
	}
	if value == nil {
		delete(f, key)
	} else {
		var c Config = DefaultConfig()
		if err := c.Set(key, *value); err != nil {
			return err
		}
		f[key] = k.get(&c)
	}
	var b bytes.Buffer
	b.WriteString("# ckpt store settings; see `ckpt config --help`\n")
	for _, name := range sortedKeys(f) {
		kk, err := configKey(name)
		if err == nil && (kk.Kind == "int") {
			fmt.Fprintf(&b, "%s = %s\n", name, f[name])
			continue
		}
		fmt.Fprintf(&b, "%s = %s\n", name, strconv.Quote(f[name]))
	}
	if _, err := os.Stat(filepath.Join(storeDir, store.DBName)); err != nil {
		// Settings may come before the store, in a new or empty
		// directory, never in someone else's (--store ~).
		if err := store.CheckNewStoreDir(storeDir); err != nil {
			return err
		}
	}
	if err := store.MkdirPrivate(storeDir); err != nil {
		return err
	}
	if err := writeFileAtomic(path, b.Bytes(), 0o600); err != nil {
		return err
	}
	if key == "summarizer" && value != nil {
		// The user set this command here: it may run (see trust.go).
		return approveCommand(storeDir, *value)
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// writeFileAtomic replaces path with data whole or not at all (see
// package atomicfile).
func writeFileAtomic(path string, data []byte, perm fs.FileMode) error {
	return atomicfile.WriteFile(path, data, perm)
}

// ParseDuration parses a duration: Go's syntax ("90m", "24h") plus days and
// weeks ("30d", "2w"); "0" is zero.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" || s == "" {
		return 0, nil
	}
	for _, u := range []struct {
		suffix string
		unit   time.Duration
	}{{"d", 24 * time.Hour}, {"w", 7 * 24 * time.Hour}} {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			f, err := strconv.ParseFloat(n, 64)
			if err != nil || f < 0 {
				return 0, fmt.Errorf("invalid duration %q (e.g. 90m, 24h, 30d)", s)
			}
			return time.Duration(f * float64(u.unit)), nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("invalid duration %q (e.g. 90m, 24h, 30d)", s)
	}
	return d, nil
}

// FormatDuration writes d in the shortest form ParseDuration reads back
// ("30d", "24h", "90m").
func FormatDuration(d time.Duration) string {
	day := 24 * time.Hour
	switch {
	case d == 0:
		return "0"
	case d%(7*day) == 0:
		return strconv.FormatInt(int64(d/(7*day)), 10) + "w"
	case d%day == 0:
		return strconv.FormatInt(int64(d/day), 10) + "d"
	case d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	}
	return d.String()
}

// ParseSize parses a byte size: a number with an optional unit (B, KB,
// KiB, MB, MiB, GB, GiB, TB, TiB; case-insensitive).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int64
	}{
		{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
		{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
		{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40}, {"b", 1},
	}
	lower := strings.ToLower(t)
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(lower, u.suffix) {
			mult, lower = u.mult, strings.TrimSpace(strings.TrimSuffix(lower, u.suffix))
			break
		}
	}
	f, err := strconv.ParseFloat(lower, 64)
	// ParseFloat also reads "inf", "nan" and hex floats: sizes are
	// decimal numbers that fit in an int64.
	if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) || strings.ContainsAny(lower, "xXpPnN") ||
		f*float64(mult) >= math.MaxInt64 {
		return 0, fmt.Errorf("invalid size %q (e.g. 500MiB, 1GiB)", s)
	}
	return int64(f * float64(mult)), nil
}

// FormatSize writes n with a binary unit when it is a whole multiple of one.
func FormatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}
