package cli

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/rogpeppe/go-internal/testscript"
)

// hookpayload SRC DST: copy a recorded agent payload, pointing its cwd
// (Cursor's workspace_roots) at the script's current directory and its
// transcript_path into $AGENTDIR.
func cmdHookPayload(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: hookpayload src dst")
	}
	data, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	var m map[string]any
	ts.Check(json.Unmarshal(data, &m))
	if _, ok := m["cwd"]; ok {
		m["cwd"] = ts.MkAbs(".")
	}
	if _, ok := m["workspace_roots"]; ok {
		m["workspace_roots"] = []string{ts.MkAbs(".")}
	}
	if tp, ok := m["transcript_path"].(string); ok {
		m["transcript_path"] = filepath.Join(ts.Getenv("AGENTDIR"), filepath.Base(tp))
	}
	out, err := json.MarshalIndent(m, "", "  ")
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), out, 0o644))
}
