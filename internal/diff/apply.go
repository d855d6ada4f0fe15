package diff

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ApplyError reports a file patch that does not apply to the content given.
type ApplyError struct {
	Path string // the file patch's path (NewPath, or OldPath when deleted)
	Err  error
}

// Error formats the error as "apply path: reason".
func (e *ApplyError) Error() string {
	return fmt.Sprintf("apply %s: %v", QuotePath(e.Path), e.Err)
}

// Unwrap returns the reason.
func (e *ApplyError) Unwrap() error { return e.Err }

// Name returns the path that identifies the file patch: NewPath, or OldPath
// for a deletion.
func (fp *FilePatch) Name() string {
	if fp.NewPath != "" {
		return fp.NewPath
	}
	return fp.OldPath
}

// Apply returns the content of the file after applying fp to cur, or, when
// reverse is set, before it. cur is the file at the path the patch reads
// (OldPath, or NewPath in reverse), nil when the file is absent. The result
// is nil when the file must not exist afterwards.
//
// Apply verifies everything the patch records: that cur exists exactly when
// the patch expects it to, its mode (git's normalized 100644/100755 match
// any permission bits with the same owner execute bit), the index line's
// git blob ids (or prefixes; SHA-1, or SHA-256 from a repository that uses
// it) of cur and of the result, the size and SHA-256 of both base64 blocks
// of a binary patch and that cur equals the one it replaces, a git binary
// patch's full ids, and every hunk's context and deleted lines exactly. A hunk may
// be found at an offset from the line its header names, but never with
// fuzz; a hunk starting at line 1 (or 0) must match at the start of the file
// and one without trailing context at its end, as with git apply.
func (fp *FilePatch) Apply(cur *Side, reverse bool) (*Side, error) {
	res, err := fp.apply(cur, reverse)
	if err != nil {
		return nil, &ApplyError{Path: fp.Name(), Err: err}
	}
	return res, nil
}

func (fp *FilePatch) apply(cur *Side, reverse bool) (*Side, error) {
	fromPath, toPath := fp.OldPath, fp.NewPath
	fromMode, toMode := fp.OldMode, fp.NewMode
	fromIdx, toIdx := fp.OldIndex, fp.NewIndex
	fromBlk, toBlk := fp.Old, fp.New
	if reverse {
		fromPath, toPath = toPath, fromPath
		fromMode, toMode = toMode, fromMode
		fromIdx, toIdx = toIdx, fromIdx
		fromBlk, toBlk = toBlk, fromBlk
	}
	fromExists, toExists := fromPath != "", toPath != ""
	switch {
	case !fromExists && !toExists:
		return nil, errors.New("patch names no file")
	case fromExists && cur == nil:
		return nil, errors.New("file does not exist")
	case !fromExists && cur != nil:
		return nil, errors.New("file already exists")
	}
	var src []byte
	if cur != nil {
		src = cur.Content
		if fromMode != 0 && !modeMatches(cur.Mode, fromMode) {
			return nil, fmt.Errorf("file has mode %06o, patch expects %06o", cur.Mode, fromMode)
		}
		if err := checkIndex(fromIdx, src); err != nil {
			return nil, fmt.Errorf("file does not match the patch: %w", err)
		}
	}

	var out []byte
	switch {
	case fp.Binary && (fp.Forward != nil || fp.Reverse != nil):
		var err error
		if out, err = fp.applyGitBinary(src, fromIdx, toIdx, reverse); err != nil {
			return nil, err
		}
	case fp.Binary:
		if cur != nil && fromBlk != nil {
			if err := fromBlk.verify(); err != nil {
				return nil, fmt.Errorf("base64 block: %w", err)
			}
			if int64(len(src)) != fromBlk.Size || sha256.Sum256(src) != fromBlk.SHA256 {
				return nil, errors.New("file does not match the patch's binary content")
			}
		}
		if toExists {
			if toBlk == nil {
				return nil, errors.New("binary patch carries no content (a diff made without git diff --binary?)")
			}
			if err := toBlk.verify(); err != nil {
				return nil, fmt.Errorf("base64 block: %w", err)
			}
			out = bytes.Clone(toBlk.Data)
		}
	default:
		var err error
		if out, err = applyHunks(src, fp.Hunks, reverse); err != nil {
			return nil, err
		}
	}
	if out == nil {
		out = []byte{}
	}

	if !toExists {
		if len(out) != 0 {
			return nil, errors.New("deleted file would keep content")
		}
		return nil, nil
	}
	if err := checkIndex(toIdx, out); err != nil {
		return nil, fmt.Errorf("result does not match the patch: %w", err)
	}
	mode := toMode
	switch {
	case mode == 0 && cur != nil:
		mode = cur.Mode
	case mode == 0:
		mode = 0o100644
	case cur != nil && fromMode == toMode:
		mode = cur.Mode // unchanged: keep the exact permission bits
	}
	return &Side{Mode: mode, Content: out}, nil
}

// applyGitBinary applies the forward hunk of a git binary patch to src, or
// in reverse the reverse hunk. Like git apply, it needs full blob ids on
// the index line: they are all that ties a literal hunk to the content it
// replaces (the caller checks src against fromIdx, and the result against
// toIdx).
func (fp *FilePatch) applyGitBinary(src []byte, fromIdx, toIdx string, reverse bool) ([]byte, error) {
	h := fp.Forward
	if reverse {
		h = fp.Reverse
	}
	if h == nil {
		return nil, errors.New("git binary patch has no reverse hunk, so it cannot be applied in reverse")
	}
	for _, id := range []string{fromIdx, toIdx} {
		if len(id) != 40 && len(id) != 64 {
			return nil, errors.New("git binary patch without a full index line (git diff --binary writes one)")
		}
	}
	out, err := h.apply(src)
	if err != nil {
		return nil, fmt.Errorf("git binary patch: %w", err)
	}
	return out, nil
}

// modeMatches reports whether a file's mode satisfies a patch's mode: equal,
// or equal after git's normalization to 100644/100755.
func modeMatches(have, want uint32) bool {
	if have == want {
		return true
	}
	switch have & modeTypeMask {
	case modeRegular:
		if have&0o100 != 0 {
			return want == 0o100755
		}
		return want == 0o100644
	case modeSymlink:
		return want == modeSymlink
	}
	return false
}

// checkIndex verifies content against a git blob id, or a prefix of one,
// from an index line: SHA-1 as git writes it, or SHA-256 from a repository
// that uses it (an abbreviated id may be either; the chance that a wrong
// content matches one of them by accident is negligible). Empty and
// all-zero ids are not checked.
func checkIndex(id string, content []byte) error {
	if isNullID(id) {
		return nil
	}
	id = strings.ToLower(id)
	sha1ID := GitBlobID(content)
	if strings.HasPrefix(sha1ID, id) || strings.HasPrefix(gitBlobID256(content), id) {
		return nil
	}
	if len(id) > len(sha1ID) {
		return fmt.Errorf("git blob id %s (SHA-256), index line says %s", gitBlobID256(content), id)
	}
	return fmt.Errorf("git blob id %s, index line says %s", sha1ID[:len(id)], id)
}

// gitBlobID256 is the blob id of content in a git repository that uses
// SHA-256: sha256("blob <len>\x00" + content), in hex.
func gitBlobID256(content []byte) string {
	h := sha256.New()
	h.Write([]byte("blob " + strconv.Itoa(len(content)) + "\x00"))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

// hunkSides returns the lines a hunk expects and the lines it leaves, with
// its start and line count on the side it reads.
func hunkSides(h *Hunk, reverse bool) (from, to []string, start, count int) {
	drop, add := byte('-'), byte('+')
	start, count = h.OldStart, h.OldLines
	if reverse {
		drop, add = add, drop
		start, count = h.NewStart, h.NewLines
	}
	for _, l := range h.Lines {
		switch l.Op {
		case ' ':
			from = append(from, l.Text)
			to = append(to, l.Text)
		case drop:
			from = append(from, l.Text)
		case add:
			to = append(to, l.Text)
		}
	}
	return from, to, start, count
}

// applyHunks applies text hunks to src.
func applyHunks(src []byte, hunks []Hunk, reverse bool) ([]byte, error) {
	lines := splitLines(string(src))
	var out lineWriter
	out.buf.Grow(len(src))
	pos, offset := 0, 0
	for i := range hunks {
		h := &hunks[i]
		from, to, start, count := hunkSides(h, reverse)
		toCount := h.NewLines
		if reverse {
			toCount = h.OldLines
		}
		if len(from) != count || len(to) != toCount {
			return nil, fmt.Errorf("hunk %d does not match its header counts", i+1)
		}
		trailing := 0
		for k := len(h.Lines) - 1; k >= 0 && h.Lines[k].Op == ' '; k-- {
			trailing++
		}
		want := start - 1
		if count == 0 {
			want = start
		}
		p, ok := findHunk(lines, from, pos, want+offset, start <= 1, trailing == 0)
		if !ok {
			return nil, fmt.Errorf("hunk %d (%s) does not apply", i+1, hunkHeader(h))
		}
		offset = p - want
		if err := out.add(lines[pos:p]); err != nil {
			return nil, err
		}
		if err := out.add(to); err != nil {
			return nil, err
		}
		pos = p + len(from)
	}
	if err := out.add(lines[pos:]); err != nil {
		return nil, err
	}
	return out.buf.Bytes(), nil
}

func hunkHeader(h *Hunk) string {
	return fmt.Sprintf("@@ -%d,%d +%d,%d @@", h.OldStart, h.OldLines, h.NewStart, h.NewLines)
}

// findHunk returns where from occurs in lines at or after pos, as near to
// want as possible; at 0 only if atStart, and ending at the last line only
// if atEnd.
func findHunk(lines, from []string, pos, want int, atStart, atEnd bool) (int, bool) {
	lo, hi := pos, len(lines)-len(from)
	if hi < lo {
		return 0, false
	}
	matches := func(p int) bool {
		for k, l := range from {
			if lines[p+k] != l {
				return false
			}
		}
		return true
	}
	switch {
	case atStart && atEnd:
		return 0, lo == 0 && hi == 0 && matches(0)
	case atStart:
		return 0, lo == 0 && matches(0)
	case atEnd:
		return hi, matches(hi)
	}
	want = min(max(want, lo), hi)
	for d := 0; want-d >= lo || want+d <= hi; d++ {
		if p := want - d; p >= lo && matches(p) {
			return p, true
		}
		if p := want + d; d > 0 && p <= hi && matches(p) {
			return p, true
		}
	}
	return 0, false
}

// lineWriter assembles a file from lines, refusing a line without "\n"
// anywhere but at the end.
type lineWriter struct {
	buf  bytes.Buffer
	open bool // the last line written lacks "\n"
}

func (w *lineWriter) add(lines []string) error {
	for _, l := range lines {
		if w.open {
			return errors.New("a line without newline would not be the last line")
		}
		w.buf.WriteString(l)
		w.open = !strings.HasSuffix(l, "\n")
	}
	return nil
}
