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
	e, parent, store := pruneEnv(t)
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
	prunedKeeps(t, e, store)
}

// DEFECT. A workspace moved to another disk and replaced by a symlink to
// its new place (mv ~/proj /mnt/usb/proj; ln -s /mnt/usb/proj ~/proj):
// while the disk is not mounted, the symlink dangles, os.Stat (which
// follows it) says ENOENT, and workspaceState (stats.go) takes that for
// "provably gone" — the parent is there, on the same file system — so the
// store's history is deleted. A symlink at the workspace's path is not a
// workspace that is gone: look the path up with Lstat.
func TestPruneDanglingSymlinkWorkspace(t *testing.T) {
	e, parent, store := pruneEnv(t)
	ws := filepath.Join(parent, "proj")
	if err := os.RemoveAll(ws); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(t.TempDir(), "unmounted", "proj"), ws); err != nil {
		t.Fatal(err)
	}
	prunedKeeps(t, e, store)
}

// pruneEnv makes a workspace at <tmp>/mnt/proj with a default store (under
// the env's own XDG_STATE_HOME) holding one checkpoint.
func pruneEnv(t *testing.T) (e *env, parent, store string) {
	t.Helper()
	e = newEnv(t)
	parent = filepath.Join(t.TempDir(), "mnt")
	e.WS = filepath.Join(parent, "proj")
	e.Extra = []string{"CKPT_STORE="}
	e.Write(map[string]string{"a.txt": "a"})
	e.Must("save", "-q")
	e.WS = t.TempDir() // commands run from elsewhere from now on
	var list []struct {
		Store string `json:"store"`
	}
	if err := json.Unmarshal([]byte(e.Must("workspaces", "--json")), &list); err != nil || len(list) != 1 {
		t.Fatalf("workspaces --json: %v %v", list, err)
	}
	return e, parent, list[0].Store
}

// prunedKeeps runs workspaces --prune and checks it kept the store.
func prunedKeeps(t *testing.T, e *env, store string) {
	t.Helper()
	code, out, errs := e.Run("workspaces", "--prune")
	if _, err := os.Stat(filepath.Join(store, "ckpt.db")); err != nil {
		t.Fatalf("prune deleted the store of a workspace it cannot prove gone (exit %d):\n%s%s", code, out, errs)
	}
	if code != 0 || !strings.Contains(errs, "kept the store of") {
		t.Errorf("prune does not say why it kept the store (exit %d):\n%s%s", code, out, errs)
	}
}
