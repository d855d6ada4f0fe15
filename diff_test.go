package ckpt

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// A file that is not UTF-8 but has no NUL byte is text, as in git: its
// hunks are reported, and in JSON a line that is not valid UTF-8 is
// C-quoted like a path, so that no byte is lost.
func TestDiffReportNonUTF8Text(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"latin1.txt": "caf\xe9\nsame\n"})
	base := mustSave(t, r, "base")
	writeFile(t, ws, "latin1.txt", "caf\xe9 cr\xe8me\nsame\n")
	d, err := r.Diff(ctx, DiffOptions{From: base.ID.String()})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := d.Report(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Modified) != 1 || rep.Modified[0].Binary || len(rep.Modified[0].Hunks) != 1 {
		t.Fatalf("got %+v, want one text file with one hunk", rep.Modified)
	}
	want := []string{`"-caf\351"`, `"+caf\351 cr\350me"`, " same"}
	if got := rep.Modified[0].Hunks[0].Lines; !slices.Equal(got, want) {
		t.Errorf("got lines %q, want %q", got, want)
	}
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(js), "\ufffd") {
		t.Errorf("JSON lost bytes: %s", js)
	}
	var sb strings.Builder
	if err := d.WritePatch(ctx, &sb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sb.String(), "\n-caf\xe9\n+caf\xe9 cr\xe8me\n") {
		t.Errorf("patch does not carry the raw lines:\n%s", sb.String())
	}
}
