package ckpt

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/tree"
)

// Stats counts in the store what it used to list: the same numbers as
// the gc index and every tree read (the distinct contents' sizes), and
// the same ten largest files as sorting all of HEAD's, over a history
// with edits, removals, shared contents, ties in size and a symlink.
func TestStatsMatchesAFullCount(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, nil)
	for turn := 0; turn < 6; turn++ {
		for i := 0; i < 40; i++ {
			name := fmt.Sprintf("d%d/f%02d.txt", i%4, i)
			size := (i % 7) * 100 // sizes repeat: ties broken by path
			if turn%2 == 1 && i%5 == 0 {
				os.Remove(filepath.Join(ws, name))
				continue
			}
			writeFile(t, ws, name, strings.Repeat(fmt.Sprint(turn%3), size)+fmt.Sprint(i%9))
		}
		if turn == 2 {
			if err := os.Symlink("d0/f00.txt", filepath.Join(ws, "link")); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := r.Save(ctx, SaveOptions{Kind: KindTurn}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := r.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}

	idx, err := r.st.Index(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sizes := map[object.ID]int64{}
	for id := range idx.Trees {
		tr, err := r.st.ReadTree(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range tr.Entries {
			if !object.IsDir(e.Mode) {
				sizes[e.ID] = e.Size
			}
		}
	}
	var unique int64
	for _, n := range sizes {
		unique += n
	}
	_, head, err := r.head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var all []FileSize
	load := func(ctx context.Context, id object.ID) (*object.Tree, error) { return r.st.ReadTree(ctx, id) }
	if err := tree.Walk(ctx, load, head.Tree, nil, func(p string, e object.Entry) error {
		all = append(all, FileSize{Path: Path(p), Size: e.Size})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Size != all[j].Size {
			return all[i].Size > all[j].Size
		}
		return all[i].Path < all[j].Path
	})
	all = all[:min(len(all), maxLargest)]

	if got.Blobs != len(idx.Blobs) || got.Trees != len(idx.Trees) || got.Chunks != len(idx.Chunks) || got.Stored != idx.Total {
		t.Errorf("stats: %d blobs, %d trees, %d chunks, %d bytes stored; the index: %d, %d, %d, %d",
			got.Blobs, got.Trees, got.Chunks, got.Stored, len(idx.Blobs), len(idx.Trees), len(idx.Chunks), idx.Total)
	}
	if got.Unique != unique {
		t.Errorf("stats: unique %d bytes; every tree read: %d", got.Unique, unique)
	}
	if !slices.Equal(got.Largest, all) {
		t.Errorf("stats: largest %v\nsorting all of HEAD: %v", got.Largest, all)
	}
	if len(got.Largest) != maxLargest || got.Largest[0].Size != got.Largest[1].Size {
		t.Fatalf("the test wants ten largest files with a tie at the top: %v", got.Largest)
	}
}
