package diff

import "strings"

// MaxScore is the similarity of identical contents, as in git's
// diffcore: [Similarity] returns a score from 0 to MaxScore, and git's
// "similarity index N%" is score*100/MaxScore, rounded down.
const MaxScore = 60000

// chunkMax is the longest chunk Similarity counts, git's.
const chunkMax = 64

// Chunks are the pieces of a content [Similarity] compares: its lines,
// long lines cut into 64-byte pieces, each counted by its length in
// bytes. Compute them once per file and compare many pairs.
type Chunks struct {
	size   int
	counts map[string]int
}

// NewChunks cuts content into chunks as git's diffcore-delta does: a chunk
// ends after a newline or at 64 bytes; in a text file a carriage return
// before a newline is not counted.
func NewChunks(content []byte) *Chunks {
	c := &Chunks{size: len(content), counts: map[string]int{}}
	text := !IsBinary(content)
	var b strings.Builder
	n := 0
	flush := func() {
		if n > 0 {
			c.counts[b.String()] += n
		}
		b.Reset()
		n = 0
	}
	for i, ch := range content {
		if text && ch == '\r' && i+1 < len(content) && content[i+1] == '\n' {
			continue
		}
		b.WriteByte(ch)
		n++
		if ch == '\n' || n >= chunkMax {
			flush()
		}
	}
	flush()
	return c
}

// Similarity estimates how much of a survives in b, as git's rename
// detection does: the bytes of a's chunks found again in b, over the size
// of the larger side, scaled to [MaxScore]. It returns 0 without counting
// when the sizes alone rule out minScore.
func Similarity(a, b *Chunks, minScore int) int {
	maxSize, baseSize := max(a.size, b.size), min(a.size, b.size)
	if maxSize == 0 {
		return MaxScore // two empty files
	}
	if maxSize*(MaxScore-minScore) < (maxSize-baseSize)*MaxScore {
		return 0
	}
	copied := 0
	for k, n := range a.counts {
		copied += min(n, b.counts[k])
	}
	return int(int64(copied) * MaxScore / int64(maxSize))
}

// RenameName is a rename's name as git diff --stat writes it: "a => b",
// or with the common leading directories and trailing path outside
// braces, "dir/{a => b}/file".
func RenameName(from, to string) string {
	a, b := QuotePath(from), QuotePath(to)
	pfx := 0
	for i := 0; i < len(a) && i < len(b) && a[i] == b[i]; i++ {
		if a[i] == '/' {
			pfx = i + 1
		}
	}
	// The common suffix starts at a slash; with a common prefix it may
	// reach back to the prefix's own slash.
	sfx := 0
	adjust := 0
	if pfx > 0 {
		adjust = 1
	}
	for i, j := len(a)-1, len(b)-1; i >= pfx-adjust && j >= pfx-adjust && a[i] == b[j]; i, j = i-1, j-1 {
		if a[i] == '/' {
			sfx = len(a) - i
		}
	}
	if pfx+sfx == 0 {
		return a + " => " + b
	}
	amid := max(len(a)-pfx-sfx, 0)
	bmid := max(len(b)-pfx-sfx, 0)
	return a[:pfx] + "{" + a[pfx:pfx+amid] + " => " + b[pfx:pfx+bmid] + "}" + a[len(a)-sfx:]
}
