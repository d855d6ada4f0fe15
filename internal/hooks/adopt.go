package hooks

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed1cedbf7c/ckpt"
)

// A hook finds its workspace from a directory the agent reports, and the
// payload's cwd is wherever the agent was started or its shell went: a
// Codex session started in the home directory would make a checkpoint of
// the whole of it, and every later command in a project below would find
// that store. So a hook never adopts as a new workspace the home
// directory (or one above it), the root directory, or a directory above
// workspaces ckpt already protects; it says so (an error the hook reports, exiting 0) and
// checkpoints nothing. A directory the user made a workspace themselves
// (`ckpt -C DIR save`) is adopted, except home and root.

// WorkspaceRefusedError is a hook's refusal to make a directory its
// workspace.
type WorkspaceRefusedError struct {
	Dir string
	// What the directory is: "your home directory", "the root
	// directory", or "above workspaces ckpt protects" (then Below).
	What  string
	Below []string
}

// Error implements error.
func (e *WorkspaceRefusedError) Error() string {
	what := e.What
	if len(e.Below) > 0 {
		what += " (" + strings.Join(clipList(e.Below, 3), ", ") + ")"
	}
	return fmt.Sprintf("the workspace would be %s, %s: a hook does not checkpoint all of it, so this turn is not recorded", e.Dir, what)
}

// Hint says what to do.
func (e *WorkspaceRefusedError) Hint() string {
	if len(e.Below) > 0 {
		return fmt.Sprintf("start the agent in the project's directory; or, to protect all of %s, make it a workspace yourself first: ckpt -C %s save", e.Dir, e.Dir)
	}
	return "start the agent in the project's directory (ckpt checkpoints a project, not " + e.What + ")"
}

func clipList(l []string, n int) []string {
	if len(l) <= n {
		return l
	}
	return append(l[:n:n], fmt.Sprintf("%d more", len(l)-n))
}

// checkAdopt refuses a workspace a hook must not adopt (see above). store
// is the store named by --store or CKPT_STORE, if any; explicit says the
// user named the workspace (--workspace DIR), which may lie above others.
func checkAdopt(ws, store string, explicit bool) error {
	if ws == filepath.Dir(ws) {
		return &WorkspaceRefusedError{Dir: ws, What: "the root directory"}
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		if real, err := filepath.EvalSymlinks(home); err == nil {
			home = real
		}
		if ws == home {
			return &WorkspaceRefusedError{Dir: ws, What: "your home directory"}
		}
		if strings.HasPrefix(home, ws+string(filepath.Separator)) {
			return &WorkspaceRefusedError{Dir: ws, What: "above your home directory"}
		}
	}
	if explicit || ownHistory(ws, store) {
		return nil
	}
	below, err := ckpt.WorkspacesBelow(ws)
	if err == nil && len(below) > 0 {
		return &WorkspaceRefusedError{Dir: ws, What: "above workspaces ckpt protects", Below: below}
	}
	return nil
}

// ownHistory reports whether ws already is a workspace with checkpoints:
// in the store named, its default store or its git directory.
func ownHistory(ws, store string) bool {
	if store != "" {
		return ckpt.StoreHasHistory(store)
	}
	if sd, err := ckpt.DefaultStoreDir(ws); err == nil && ckpt.StoreHasHistory(sd) {
		return true
	}
	if gd, err := ckpt.GitStoreLocation(ws); err == nil && ckpt.StoreHasHistory(gd) {
		return true
	}
	return false
}
