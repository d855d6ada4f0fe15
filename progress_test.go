package ckpt

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// TestSaveProgressTotals checks what a save's scan reports while it still
// reads directories: a growing total marked Counting, then a final one
// that never changes, and never more done than the total. A directory
// read is held back until a report has shown the first directory's files
// hashed, so the scan is seen counting whatever the machine's speed.
func TestSaveProgressTotals(t *testing.T) {
	files := map[string]string{}
	for i := range 10 {
		files[fmt.Sprintf("a%d.txt", i)] = fmt.Sprintf("top %d\n", i)
		files[fmt.Sprintf("late/b%d.txt", i)] = fmt.Sprintf("below %d, a longer line\n", i)
	}
	ws := t.TempDir()
	testutil.WriteFiles(t, ws, files)

	var mu sync.Mutex
	var reports []Progress
	seenTop := make(chan struct{})
	var once sync.Once
	r, err := Open(context.Background(), ws, Options{Store: t.TempDir(), Progress: func(p Progress) {
		mu.Lock()
		reports = append(reports, p)
		mu.Unlock()
		if p.Op == "scan" && p.Counting && p.Files == 10 {
			once.Do(func() { close(seenTop) })
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	disarm := failpoint.Set("scan/read-dir(late)", func(string) error {
		select {
		case <-seenTop:
			return nil
		case <-time.After(time.Minute):
			return fmt.Errorf("no report showed the top directory's files hashed")
		}
	})
	defer disarm()
	if _, err := r.Save(context.Background(), SaveOptions{Message: "m"}); err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()
	var last Progress
	final := false
	counting := 0
	for i, p := range reports {
		if p.Op != "scan" {
			continue
		}
		if p.Files > p.TotalFiles || p.Bytes > p.TotalBytes {
			t.Errorf("report %d: done %d files %d bytes, of %d files %d bytes", i, p.Files, p.Bytes, p.TotalFiles, p.TotalBytes)
		}
		if p.TotalFiles < last.TotalFiles || p.TotalBytes < last.TotalBytes || p.Files < last.Files {
			t.Errorf("report %d went back: %+v after %+v", i, p, last)
		}
		if final && (p.Counting || p.TotalFiles != last.TotalFiles || p.TotalBytes != last.TotalBytes) {
			t.Errorf("report %d: %+v after the final total %d files %d bytes", i, p, last.TotalFiles, last.TotalBytes)
		}
		if p.Counting {
			counting++
		}
		final = final || !p.Counting
		last = p
	}
	if counting == 0 {
		t.Errorf("no report while counting: %+v", reports)
	}
	if want := (Progress{Op: "scan", Files: 20, TotalFiles: 20, Bytes: last.TotalBytes, TotalBytes: last.TotalBytes}); last != want || last.TotalBytes == 0 {
		t.Errorf("last report %+v, want %+v", last, want)
	}
}
