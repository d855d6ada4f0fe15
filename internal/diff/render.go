package diff

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Side is one version of a file. Mode is a git-style mode number: 0o100644
// or 0o100755 for a regular file (other permission bits are allowed and
// kept exactly), 0o120000 for a symbolic link whose Content is the link
// target.
type Side struct {
	Mode    uint32
	Content []byte
}

// Change is one path's difference between two trees. Old or New is nil when
// the path is absent on that side.
type Change struct {
	Path     string
	Old, New *Side
	// OldPath, when set and not Path, makes the change a rename of
	// OldPath to Path (both sides must be set), written as git diff -M
	// writes it with "similarity index Similarity%".
	OldPath    string
	Similarity int
}

const (
	modeTypeMask = 0o170000
	modeRegular  = 0o100000
	modeSymlink  = 0o120000

	// contextLines is the number of unchanged lines around each change.
	contextLines = 3
	// binarySniff is how many leading bytes are searched for a NUL.
	binarySniff = 8000
	// base64Width is the length of a full base64 data line.
	base64Width = 76
)

// IsBinary reports whether content is treated as binary: it has a NUL byte
// in its first 8000 bytes, as git's buffer_is_binary decides. Content that
// is not UTF-8, such as a Latin-1 file, is text, and its diff carries its
// lines byte for byte, as git writes them.
func IsBinary(content []byte) bool {
	return bytes.IndexByte(content[:min(len(content), binarySniff)], 0) >= 0
}

// GitBlobID returns git's SHA-1 object id of content stored as a blob, in
// hex: sha1("blob <len>\x00" + content).
func GitBlobID(content []byte) string {
	h := sha1.New()
	h.Write([]byte("blob " + strconv.Itoa(len(content)) + "\x00"))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

// validMode reports whether m is a regular-file or symlink mode.
func validMode(m uint32) bool {
	if m&^0o177777 != 0 {
		return false
	}
	t := m & modeTypeMask
	return t == modeRegular || t == modeSymlink
}

// BinaryFormat selects how a diff carries the content of binary files.
type BinaryFormat int

const (
	// GitBinaryPatch writes git's binary patches, as git diff --binary
	// does: git apply applies the diff forward and in reverse.
	GitBinaryPatch BinaryFormat = iota
	// Base64Blocks writes Decree's base64 blocks after git's "Binary
	// files ... differ" line, the format of a run's changes.diff. Only
	// ckpt applies them; git apply refuses them and patch(1) skips them.
	Base64Blocks
	// BinaryNotice writes only git's "Binary files a/P and b/P differ"
	// line, as git diff does without --binary: for people to read; it
	// does not carry the content, so no tool can apply it.
	BinaryNotice
)

// Options select how [WriteOptions] renders a diff.
type Options struct {
	// Binary is how the content of binary files is written.
	Binary BinaryFormat
	// Color adds git's default ANSI colours: headers bold, hunk headers
	// cyan, deleted lines red, added lines green.
	Color bool
}

// Write renders every change in order with git's binary patches; see
// WriteChange.
func Write(w io.Writer, changes []Change) error {
	return WriteFormat(w, changes, GitBinaryPatch)
}

// WriteFormat renders every change in order, binary content in format f.
func WriteFormat(w io.Writer, changes []Change, f BinaryFormat) error {
	return WriteOptions(w, changes, Options{Binary: f})
}

// WriteOptions renders every change in order as o says.
func WriteOptions(w io.Writer, changes []Change, o Options) error {
	if o.Binary < GitBinaryPatch || o.Binary > BinaryNotice {
		return fmt.Errorf("write diff: unknown binary format %d", o.Binary)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	pw := &patchWriter{bw: bw, o: o}
	for _, c := range changes {
		if err := pw.change(c); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write diff: %w", err)
	}
	return nil
}

// WriteChange renders one change as git diff --binary does, with 3 lines
// of context (see the package documentation). It writes nothing when Old
// and New are identical.
func WriteChange(w io.Writer, c Change) error {
	return Write(w, []Change{c})
}

// patchWriter renders changes into bw. Write errors are sticky in bw and
// reported by Flush.
type patchWriter struct {
	bw *bufio.Writer
	o  Options
}

// git's default colours (color.diff.*): meta bold, frag cyan, old red,
// new green; context and function names plain, each line reset.
const (
	colorMeta  = "\x1b[1m"
	colorFrag  = "\x1b[36m"
	colorOld   = "\x1b[31m"
	colorNew   = "\x1b[32m"
	colorReset = "\x1b[m"
)

// meta writes one header line (without its newline).
func (p *patchWriter) meta(line string) { p.metaTail(line, "") }

// metaTail writes a header line and, after its colour ends, tail: git
// leaves the tab after a ---/+++ name with a space outside the bold.
func (p *patchWriter) metaTail(line, tail string) {
	if p.o.Color {
		line = colorMeta + line + colorReset
	}
	p.bw.WriteString(line + tail + "\n")
}

func (p *patchWriter) change(c Change) error {
	if err := checkPath(c.Path, false); err != nil {
		return fmt.Errorf("write diff %s: %w", QuotePath(c.Path), err)
	}
	if c.OldPath != "" && c.OldPath != c.Path {
		if err := checkPath(c.OldPath, false); err != nil {
			return fmt.Errorf("write diff %s: %w", QuotePath(c.OldPath), err)
		}
		if c.Old == nil || c.New == nil || c.Old.Mode&modeTypeMask != c.New.Mode&modeTypeMask {
			return fmt.Errorf("write diff %s: a rename from %s needs both sides, of one type", QuotePath(c.Path), QuotePath(c.OldPath))
		}
	} else {
		c.OldPath = ""
	}
	for _, s := range []*Side{c.Old, c.New} {
		if s != nil && !validMode(s.Mode) {
			return fmt.Errorf("write diff %s: unsupported mode %06o", QuotePath(c.Path), s.Mode)
		}
	}
	o, n := c.Old, c.New
	switch {
	case o == nil && n == nil:
		return nil
	case o != nil && n != nil:
		if c.OldPath == "" && o.Mode == n.Mode && bytes.Equal(o.Content, n.Content) {
			return nil
		}
		if o.Mode&modeTypeMask != n.Mode&modeTypeMask {
			// git shows a type change as a deletion and an addition.
			p.file(c.Path, c.Path, 0, o, nil)
			p.file(c.Path, c.Path, 0, nil, n)
			return nil
		}
	}
	from := c.Path
	if c.OldPath != "" {
		from = c.OldPath
	}
	p.file(from, c.Path, c.Similarity, o, n)
	return nil
}

// file renders one "diff --git" section: from and to differ for a rename.
func (p *patchWriter) file(from, to string, similarity int, o, n *Side) {
	bw, f := p.bw, p.o.Binary
	aName := QuotePath("a/" + from)
	bName := QuotePath("b/" + to)
	p.meta("diff --git " + aName + " " + bName)
	switch {
	case o == nil:
		p.meta(fmt.Sprintf("new file mode %06o", n.Mode))
	case n == nil:
		p.meta(fmt.Sprintf("deleted file mode %06o", o.Mode))
	case o.Mode != n.Mode:
		p.meta(fmt.Sprintf("old mode %06o", o.Mode))
		p.meta(fmt.Sprintf("new mode %06o", n.Mode))
	}
	if from != to {
		p.meta(fmt.Sprintf("similarity index %d%%", similarity))
		p.meta("rename from " + QuotePath(from))
		p.meta("rename to " + QuotePath(to))
	}
	if o != nil && n != nil && bytes.Equal(o.Content, n.Content) {
		return
	}

	var oc, nc []byte
	oldLabel, newLabel := "/dev/null", "/dev/null"
	if o != nil {
		oc = o.Content
		oldLabel = aName
	}
	if n != nil {
		nc = n.Content
		newLabel = bName
	}
	binary := (o != nil && IsBinary(oc)) || (n != nil && IsBinary(nc))
	// git apply needs full blob ids to apply a binary patch.
	idLen := 7
	if binary && f == GitBinaryPatch {
		idLen = 40
	}
	index := "index " + indexID(o, idLen) + ".." + indexID(n, idLen)
	if o != nil && n != nil && o.Mode == n.Mode {
		index += fmt.Sprintf(" %06o", o.Mode)
	}
	p.meta(index)

	if binary && f == GitBinaryPatch {
		writeGitBinary(bw, oc, nc)
		return
	}
	if binary {
		bw.WriteString("Binary files " + oldLabel + " and " + newLabel + " differ\n")
		if f == Base64Blocks && o != nil {
			writeBase64(bw, "old", oc)
		}
		if f == Base64Blocks && n != nil {
			writeBase64(bw, "new", nc)
		}
		return
	}
	if len(oc) == 0 && len(nc) == 0 {
		return // an added or deleted empty file: header only, like git
	}
	p.metaTail("--- "+oldLabel, labelTab(oldLabel))
	p.metaTail("+++ "+newLabel, labelTab(newLabel))
	p.hunks(splitLines(string(oc)), splitLines(string(nc)))
}

// indexID returns the first n hex digits of a side's git blob id, zeros
// for a missing side.
func indexID(s *Side, n int) string {
	if s == nil {
		return strings.Repeat("0", n)
	}
	return GitBlobID(s.Content)[:n]
}

// labelTab returns the tab git appends to a ---/+++ name containing a space,
// so that patch(1) does not take the rest of the name for a timestamp.
func labelTab(label string) string {
	if strings.IndexByte(label, ' ') >= 0 {
		return "\t"
	}
	return ""
}

// writeBase64 writes one block of the base64 extension.
func writeBase64(bw *bufio.Writer, which string, data []byte) {
	sum := sha256.Sum256(data)
	fmt.Fprintf(bw, "base64 %s %d %x\n", which, len(data), sum)
	const chunk = base64Width / 4 * 3
	var line [base64Width]byte
	for i := 0; i < len(data); i += chunk {
		part := data[i:min(i+chunk, len(data))]
		n := base64.StdEncoding.EncodedLen(len(part))
		base64.StdEncoding.Encode(line[:n], part)
		bw.Write(line[:n])
		bw.WriteByte('\n')
	}
}

// hunks writes the unified-diff hunks turning a into b.
func (p *patchWriter) hunks(a, b []string) {
	bw := p.bw
	ds := diffLines(a, b)
	funcPrev := -1
	funcLine := ""
	for i := 0; i < len(ds); {
		j := i
		for j+1 < len(ds) && ds[j+1].Start-ds[j].End <= 2*contextLines {
			j++
		}
		first, last := ds[i], ds[j]
		s1 := max(first.Start-contextLines, 0)
		e1 := min(last.End+contextLines, len(a))
		s2 := first.ReplStart - (first.Start - s1)
		e2 := last.ReplEnd + (e1 - last.End)

		// Like git, name the hunk after the closest line above it that
		// starts with a letter, '_' or '$', searching back no further
		// than the previous hunk's start.
		for l := s1 - 1; l > funcPrev; l-- {
			if f, ok := funcName(a[l]); ok {
				funcLine = f
				break
			}
		}
		funcPrev = s1 - 1

		header := "@@ -" + hunkRange(s1, e1-s1) + " +" + hunkRange(s2, e2-s2) + " @@"
		switch {
		case p.o.Color && funcLine != "":
			// git's bytes exactly: the function name is reset twice.
			bw.WriteString(colorFrag + header + colorReset + " " + colorReset + funcLine + colorReset)
		case p.o.Color:
			bw.WriteString(colorFrag + header + colorReset)
		case funcLine != "":
			bw.WriteString(header + " " + funcLine)
		default:
			bw.WriteString(header)
		}
		bw.WriteByte('\n')
		pos := s1
		for _, d := range ds[i : j+1] {
			p.lines(' ', a[pos:d.Start])
			p.lines('-', a[d.Start:d.End])
			p.lines('+', b[d.ReplStart:d.ReplEnd])
			pos = d.End
		}
		p.lines(' ', a[pos:e1])
		i = j + 1
	}
}

// hunkRange formats one side of a hunk header from a 0-based start and a
// line count, as git does: "l,s", "l" when s is 1, and the line before the
// hunk when s is 0.
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return strconv.Itoa(start) + ",0"
	case 1:
		return strconv.Itoa(start + 1)
	}
	return strconv.Itoa(start+1) + "," + strconv.Itoa(count)
}

// funcName applies git's default function-name rule to one line: a line
// starting with an ASCII letter, '_' or '$', cut to 80 bytes (at a UTF-8
// boundary) and stripped of trailing white space.
func funcName(line string) (string, bool) {
	if line == "" {
		return "", false
	}
	c := line[0]
	if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '$') {
		return "", false
	}
	if len(line) > 80 {
		n := 80
		for n > 0 && !utf8.RuneStart(line[n]) {
			n--
		}
		line = line[:n]
	}
	return strings.TrimRight(line, " \t\n\v\f\r"), true
}

// lines writes lines with the prefix op. In colour they are written as
// git writes them: deleted lines red, added lines green with the '+' in
// its own colour run, and every line, context included, reset at its end.
func (p *patchWriter) lines(op byte, lines []string) {
	bw := p.bw
	for _, l := range lines {
		text, nl := strings.CutSuffix(l, "\n")
		if p.o.Color {
			switch op {
			case '-':
				bw.WriteString(colorOld + "-" + text + colorReset)
			case '+':
				bw.WriteString(colorNew + "+" + colorReset + colorNew + text + colorReset)
			default:
				bw.WriteString(string(op) + text + colorReset)
			}
		} else {
			bw.WriteByte(op)
			bw.WriteString(text)
		}
		bw.WriteByte('\n')
		if !nl {
			bw.WriteString("\\ No newline at end of file")
			if p.o.Color {
				bw.WriteString(colorReset)
			}
			bw.WriteByte('\n')
		}
	}
}

// lineCounts returns the number of inserted and deleted lines between two
// texts.
func lineCounts(a, b []byte) (ins, del int) {
	for _, d := range diffLines(splitLines(string(a)), splitLines(string(b))) {
		del += d.End - d.Start
		ins += d.ReplEnd - d.ReplStart
	}
	return ins, del
}
