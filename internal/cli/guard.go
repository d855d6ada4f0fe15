package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

// How a command opens a store that does not exist yet.
const (
	createStore = iota // create it (save, restore, config...)
	// noStoreError: the command only looks, and needs history (diff,
	// show): it fails with a *ckpt.NoStoreError, creating nothing.
	noStoreError
	// noStoreEmpty: the command only looks, and an empty history is an
	// answer (listings, status): it sees an empty store that lives in
	// memory, creating nothing.
	noStoreEmpty
)

// lookOnlyCommands only read the store: in a directory without one they
// say so and create nothing (ckpt.Options.NoCreate).
var lookOnlyCommands = map[string]int{
	"list": noStoreEmpty, "log": noStoreEmpty, "status": noStoreEmpty, "tags": noStoreEmpty,
	"runs": noStoreEmpty, "session": noStoreEmpty, "session list": noStoreEmpty,
	"snapshot list": noStoreEmpty, "op log": noStoreEmpty,
	"diff": noStoreError, "show": noStoreError, "ancestor": noStoreError, "stats": noStoreError,
	"runs show": noStoreError, "session show": noStoreError, "snapshot diff": noStoreError,
	"op restore": noStoreError,
}

// lookOnly returns how c run with args opens a store that does not exist.
func lookOnly(c *cobra.Command, args []string) int {
	path := strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")
	switch path {
	case "branch", "tag":
		// Listing: no NAME, no -d.
		if len(args) == 0 && !c.Flags().Changed("delete") {
			return noStoreEmpty
		}
		return createStore
	}
	return lookOnlyCommands[path]
}
