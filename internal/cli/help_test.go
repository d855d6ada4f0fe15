package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	"github.com/spf13/cobra"
)

// Every command has help with examples, and the help text is what the
// golden files say (refresh with go test ./internal/cli -run TestHelp -update).
func TestHelp(t *testing.T) {
	root := newRootCmd(&env{})
	var walk func(c *cobra.Command)
	var cmds []*cobra.Command
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		cmds = append(cmds, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for _, c := range cmds {
		path := strings.Fields(c.CommandPath())[1:]
		name := strings.Join(append([]string{"ckpt"}, path...), "_")
		t.Run(name, func(t *testing.T) {
			if c.Example == "" {
				t.Errorf("%s has no examples", c.CommandPath())
			}
			if c.Short == "" {
				t.Errorf("%s has no short description", c.CommandPath())
			}
			var out, errb bytes.Buffer
			code := Main(context.Background(), append(path, "--help"), nil, &out, &errb)
			if code != 0 || errb.Len() > 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			if !strings.Contains(out.String(), "Examples:") {
				t.Errorf("%s --help shows no examples", c.CommandPath())
			}
			testutil.Golden(t, filepath.Join("testdata", "help", name+".golden"), out.Bytes())
		})
	}
}
