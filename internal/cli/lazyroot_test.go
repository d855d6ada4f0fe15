package cli

import (
	"slices"
	"testing"
)

// Main makes only the command args name first: the table it finds it in
// must name every top-level command, each as the command names itself,
// and a root made for one command must hold it (and no other).
func TestInvokedCommandTable(t *testing.T) {
	var table []string
	for _, g := range commandGroups {
		for _, sc := range g.cmds {
			if got := sc.new(&env{}).Name(); got != sc.name {
				t.Errorf("the table calls %q the command named %q", sc.name, got)
			}
			table = append(table, sc.name)
		}
	}
	for _, c := range newRootCmd(&env{}).Commands() {
		if n := c.Name(); !slices.Contains(table, n) && n != "man" && n != "help" && n != "completion" {
			t.Errorf("command %q is not in the table: Main would not find it alone", n)
		}
	}
	for _, name := range table {
		if got := invokedCommand([]string{name, "--help"}); got != name {
			t.Errorf("invokedCommand(%s --help) = %q", name, got)
		}
		root := newRootCmdFor(&env{}, name)
		c, _, err := root.Find([]string{name})
		if err != nil || c.Name() != name {
			t.Errorf("a root made for %s finds %v, %v", name, c, err)
		}
		if n := len(root.Commands()); n != 1 {
			t.Errorf("a root made for %s holds %d commands", name, n)
		}
	}
	for _, args := range [][]string{nil, {"-C", "d", "save"}, {"--version"}, {"help", "save"}, {"completion", "bash"},
		{"__complete", "sa"}, {"man", "d"}, {"sav"}, {"./save"}} {
		if got := invokedCommand(args); got != "" {
			t.Errorf("invokedCommand(%q) = %q: every command must be made", args, got)
		}
	}
}
