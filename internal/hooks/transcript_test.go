package hooks

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/seed1cedbf7c/ckpt"
)

// A transcript_path naming something other than a regular file — a
// device, a FIFO, a directory, a symlink to one — is a note, read neither
// forever nor at all.
func TestTranscriptMustBeRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"/dev/zero", fifo, dir} {
		link := filepath.Join(dir, "link-"+filepath.Base(target))
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{target, link} {
			if _, err := claudeTurn(p, "the prompt"); !errors.Is(err, ckpt.ErrNotRegular) {
				t.Errorf("claude %s: %v, want not a regular file", p, err)
			}
			if _, err := geminiTurn(p, "the prompt"); !errors.Is(err, ckpt.ErrNotRegular) {
				t.Errorf("gemini %s: %v, want not a regular file", p, err)
			}
		}
	}
}

// A transcript far larger than maxTail is read only as far back as
// maxTail from its end (a sparse file: nothing is written).
func TestHugeTranscriptReadFromItsEndOnly(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	tail := `{"type":"user","message":{"role":"user","content":"the prompt"}}` + "\n" +
		`{"type":"assistant","message":{"role":"assistant","id":"m","content":[{"type":"text","text":"the answer"}]}}` + "\n"
	if _, err := f.WriteAt([]byte("\n"+tail), 64<<30); err != nil { // 64 GiB of holes first
		t.Skip("no sparse files here:", err)
	}
	f.Close()
	data, whole, err := readTail(p, maxTail)
	if err != nil || whole || int64(len(data)) > maxTail {
		t.Fatalf("read %d bytes (whole %v), %v; want at most %d", len(data), whole, err, maxTail)
	}
	got, err := claudeTurn(p, "the prompt")
	if err != nil || len(got) != 1 || got[0].Content != "the answer" {
		t.Fatalf("%+v, %v", got, err)
	}
	// A legacy Gemini transcript is read from its start, at most maxTail.
	if _, err := geminiTurn(p, "the prompt"); err == nil {
		t.Fatal("a 64 GiB legacy transcript was read")
	}
}
