package attack

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// DEFECT. `workspaces --prune` proves a workspace gone partly by the
// device its store recorded (the parent must be on the same file system:
// an unmounted disk's empty mount point is not). Stores made by a ckpt
// before that change record no device until their workspace is opened
// again, and workspaceState (stats.go) then skips the check: the store of
// a workspace on a disk that is not mounted is deleted. Reproduced by
// hand: a workspace on a tmpfs, its store's workspace_dev row removed (as
// an older ckpt left it), the tmpfs unmounted, `ckpt workspaces --prune`
// printed "removed store of /tmp/pr/mnt/proj". Without a recorded device
// the workspace is not provably gone: the store must be kept, saying why.
// (No mount here: the test removes the workspace, which without a device
// looks exactly the same.)
func TestPruneLegacyStoreWithoutDevice(t *testing.T) {
	e := newEnv(t)
	parent := filepath.Join(t.TempDir(), "mnt")
	e.ws = filepath.Join(parent, "proj")
	e.extra = []string{"CKPT_STORE="}
	e.write(map[string]string{"a.txt": "a"})
	e.must("save", "-q")
	e.ws = t.TempDir()
	var list []struct {
		Store string `json:"store"`
	}
	if err := json.Unmarshal([]byte(e.must("workspaces", "--json")), &list); err != nil || len(list) != 1 {
		t.Fatalf("workspaces --json: %v %v", list, err)
	}
	store := list[0].Store
	db, err := sql.Open("sqlite", "file:"+filepath.Join(store, "ckpt.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM meta WHERE key='workspace_dev'`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	// The disk is not mounted: its mount point is there, empty.
	if err := os.RemoveAll(filepath.Join(parent, "proj")); err != nil {
		t.Fatal(err)
	}
	out := e.must("workspaces", "--prune")
	if _, err := os.Stat(filepath.Join(store, "ckpt.db")); err != nil {
		t.Fatalf("prune deleted a store that records no device, of a workspace it cannot prove gone:\n%s", out)
	}
	if !strings.Contains(out, "kept") {
		t.Errorf("prune does not say why it kept the store:\n%s", out)
	}
}
