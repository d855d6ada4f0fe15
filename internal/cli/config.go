package cli

import (
	"fmt"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

type configOptions struct {
	unset bool
	json  bool
}

func newConfigCmd(e *env) *cobra.Command {
	o := &configOptions{}
	c := &cobra.Command{
		Use:   "config [KEY [VALUE]]",
		Short: "Show or change the store's settings (config.toml)",
		Long: `Config shows or changes the settings of the workspace's store, kept in
config.toml in the store directory (on the git backend, <gitdir>/ckpt; the
backend setting itself always lives with the default or --store store,
whose config selects the backend). Without arguments it lists every setting
with its value (set ones marked with *); with KEY it prints one value; with
KEY VALUE it sets it; --unset KEY returns it to the default.

Settings:
  backend          store backend: sqlite or git
  git_ref_prefix   ref namespace of the git backend (default refs/ckpt)
  snapshot_ttl     default lifetime of a named snapshot (0: forever)
  keep             checkpoints gc keeps per branch (default 100)
  keep_hourly      hours gc keeps the newest checkpoint of (default 0)
  keep_daily       days gc keeps the newest checkpoint of (default 0)
  keep_weekly      ISO weeks gc keeps the newest checkpoint of (default 0)
  keep_monthly     months gc keeps the newest checkpoint of (default 0)
  max_age          gc's keep counts only checkpoints younger than this (30d)
  max_size         gc keeps the store under this size (default 1GiB)
  timeline_max     timeline checkpoints the git backend keeps as refs (50)
  summarizer       command that summarizes a transcript (default: built-in)

Durations: 90m, 24h, 30d, 2w. Sizes: 500MiB, 1GiB.`,
		Example: `  ckpt config
  ckpt config keep 200
  ckpt config max_age 14d
  ckpt config --unset max_age
  ckpt config --json`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return runConfig(e, o, args) },
	}
	c.Flags().BoolVar(&o.unset, "unset", false, "remove KEY, returning it to its default")
	jsonFlag(c, &o.json, "")
	return c
}

// storeDir finds the directory whose config.toml holds key the way open
// resolves the store, without opening it (so a broken config.toml can
// still be repaired): the sqlite store, or on the git backend
// <gitdir>/ckpt (see ckpt.ConfigDir).
func (e *env) storeDir(key string) (string, error) {
	opts, err := e.storeOptions()
	if err != nil {
		return "", err
	}
	ws, err := e.findWorkspace(opts.Store)
	if err != nil {
		return "", err
	}
	return ckpt.ConfigDir(ws, ckpt.Options{Store: opts.Store, Backend: opts.Backend}, key)
}

// configRow is one setting in --json output.
type configRow struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	Set   bool   `json:"set"`
	Doc   string `json:"doc,omitempty"`
}

func runConfig(e *env, o *configOptions, args []string) error {
	// bsd holds the backend setting; sd every other one (they differ once
	// a git backend store exists).
	bsd, err := e.storeDir("backend")
	if err != nil {
		return err
	}
	sd, err := e.storeDir("")
	if len(args) == 2 || o.unset {
		dir := sd
		if len(args) > 0 && args[0] == "backend" {
			// Setting the backend needs no other store: it is how a
			// workspace with two stores is told which one to use.
			dir, err = bsd, nil
		}
		if err != nil {
			return err
		}
		if o.unset {
			if len(args) != 1 {
				return usagef("--unset takes one KEY")
			}
			if _, err := new(ckpt.Config).Get(args[0]); err != nil {
				return usagef("%v", err) // an unknown key, as for ckpt config KEY
			}
			if err := ckpt.WriteConfig(dir, args[0], nil); err != nil {
				return err
			}
			if o.json {
				dc := ckpt.DefaultConfig()
				def, _ := dc.Get(args[0])
				return e.printJSON(configRow{Key: args[0], Value: def, Set: false})
			}
			return nil
		}
		v := args[1]
		if err := new(ckpt.Config).Set(args[0], v); err != nil {
			return usagef("%v", err) // an unknown key or a bad value
		}
		if err := ckpt.WriteConfig(dir, args[0], &v); err != nil {
			return err
		}
		if args[0] == "backend" {
			e.noteBackendSwitch(bsd, v)
		}
		if o.json {
			c := ckpt.DefaultConfig()
			c.Set(args[0], v)
			norm, _ := c.Get(args[0])
			return e.printJSON(configRow{Key: args[0], Value: norm, Set: true})
		}
		return nil
	}
	if err != nil {
		return err
	}
	set, err := ckpt.ConfigSet(sd)
	if err != nil {
		return err
	}
	cfg, err := ckpt.LoadConfig(sd)
	if err != nil {
		return err
	}
	if sd != bsd {
		// The git backend's store: the backend is selected by the sqlite
		// store's setting, or found by itself.
		delete(set, "backend")
		cfg.Backend = ckpt.BackendGit
		if bset, err := ckpt.ConfigSet(bsd); err == nil && bset["backend"] != "" {
			set["backend"] = bset["backend"]
			cfg.Backend = bset["backend"]
		}
	}
	if len(args) == 1 {
		v, err := cfg.Get(args[0])
		if err != nil {
			return usagef("%v", err)
		}
		if o.json {
			return e.printJSON(map[string]string{args[0]: v})
		}
		e.printf("%s\n", v)
		return nil
	}
	var rows []configRow
	for _, k := range ckpt.ConfigKeys() {
		v, _ := cfg.Get(k.Name)
		_, isSet := set[k.Name]
		rows = append(rows, configRow{k.Name, v, isSet, k.Doc})
	}
	if o.json {
		return e.printJSON(rows)
	}
	for _, r := range rows {
		mark := " "
		if r.Set {
			mark = "*"
		}
		e.printf("%-15s %s %s\n", r.Key, mark, r.Value)
	}
	return nil
}

// noteBackendSwitch says where the history stays when the backend setting
// moves away from a store that holds checkpoints: each backend has its own
// store, and nothing is copied between them.
func (e *env) noteBackendSwitch(sqliteStore, to string) {
	if e.quiet {
		return
	}
	ws, err := e.findWorkspace("")
	if err != nil {
		return
	}
	from, other := ckpt.BackendSQLite, sqliteStore
	if to == ckpt.BackendSQLite {
		from = ckpt.BackendGit
		if other, err = ckpt.GitStoreLocation(ws); err != nil {
			return
		}
	}
	if ckpt.StoreHasHistory(other) {
		fmt.Fprintf(e.stderr, "ckpt: note: the checkpoints made on the %s backend stay in its store (%s): the %s backend starts its own history; `ckpt config backend %s` goes back to them\n", from, other, to, from)
	}
}
