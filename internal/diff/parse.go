package diff

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// Patch is a parsed diff: one FilePatch per "diff --git" section, in order.
type Patch struct {
	Files []*FilePatch
}

// FilePatch is the change to one file.
//
// OldPath is empty when the file is created and NewPath is empty when it is
// deleted. When both are set and differ, the patch renames OldPath to
// NewPath, or copies it if Copy is set.
type FilePatch struct {
	OldPath, NewPath string // "" for /dev/null; without the a/ b/ prefix
	OldMode, NewMode uint32 // 0 when absent or unknown
	Copy             bool   // NewPath is a copy of OldPath, which stays
	Binary           bool
	Old, New         *BinaryData // the base64 blocks of a binary patch (Decree's format), if present
	// Forward and Reverse are the hunks of a git binary patch: Forward
	// turns the old content into the new, Reverse (absent from a patch
	// that cannot be reversed) the new into the old.
	Forward, Reverse *BinaryHunk
	OldIndex         string // git blob ids (or prefixes) from the index line, if any
	NewIndex         string
	Hunks            []Hunk
}

// BinaryData is one base64 block of a binary file patch.
type BinaryData struct {
	Size   int64
	SHA256 [32]byte
	Data   []byte
}

// Hunk is one "@@ -OldStart,OldLines +NewStart,NewLines @@" section.
// Starts are 1-based; a side with no lines names the line before the hunk.
type Hunk struct {
	OldStart, OldLines int
	NewStart, NewLines int
	Section            string // text after the second "@@", without the leading space
	Lines              []Line
}

// Line is one line of a hunk.
type Line struct {
	Op   byte   // ' ' context, '-' old side only, '+' new side only
	Text string // the line's bytes with its "\n", which is absent on a last line without newline
}

// ParseError reports malformed or unsafe diff text.
type ParseError struct {
	Line int // 1-based line number in the diff
	Msg  string
}

// Error formats the error as "parse diff: line N: message".
func (e *ParseError) Error() string {
	return fmt.Sprintf("parse diff: line %d: %s", e.Line, e.Msg)
}

// Parse parses diff text: ckpt's own output, Decree's (base64 blocks) and
// git diff's (renames, copies, mode changes and "GIT binary patch" sections
// included). Text before, between and after the "diff --git" sections is
// ignored, so mail-formatted patches parse too. Every path is checked with
// CheckPath, base64 blocks are decoded and checked against their size and
// SHA-256, and git binary hunks are decoded and inflated to their stated
// size. Errors are *ParseError values naming the line.
func Parse(data []byte) (*Patch, error) {
	p := &parser{s: string(data)}
	for off := 0; off < len(p.s); {
		i := strings.IndexByte(p.s[off:], '\n')
		if i < 0 {
			p.lines = append(p.lines, span{off, len(p.s)})
			break
		}
		p.lines = append(p.lines, span{off, off + i})
		off += i + 1
	}
	patch := &Patch{}
	for p.i < len(p.lines) {
		l := p.line(p.i)
		if strings.HasPrefix(l, "diff --git ") {
			fp, err := p.parseFile()
			if err != nil {
				return nil, err
			}
			patch.Files = append(patch.Files, fp)
			continue
		}
		if strings.HasPrefix(l, "--- ") && p.i+2 < len(p.lines) &&
			strings.HasPrefix(p.line(p.i+1), "+++ ") && strings.HasPrefix(p.line(p.i+2), "@@ -") {
			return nil, p.errorf(p.i, "unified diff without a \"diff --git\" header is not supported")
		}
		p.i++
	}
	if len(patch.Files) == 0 && len(bytes.TrimSpace(data)) > 0 {
		return nil, &ParseError{Line: 1, Msg: "no \"diff --git\" section found"}
	}
	return patch, nil
}

type span struct{ start, end int } // a line's byte range, without its "\n"

type parser struct {
	s     string
	lines []span
	i     int // next line to read
}

func (p *parser) line(i int) string { return p.s[p.lines[i].start:p.lines[i].end] }

// lineText returns line i without its first byte, with its "\n".
func (p *parser) lineText(i int) string {
	sp := p.lines[i]
	if sp.end < len(p.s) {
		return p.s[sp.start+1 : sp.end+1]
	}
	return p.s[sp.start+1:sp.end] + "\n" // the diff's last line lacks "\n"
}

func (p *parser) errorf(i int, format string, args ...any) error {
	return &ParseError{Line: i + 1, Msg: fmt.Sprintf(format, args...)}
}

// parseFile parses one "diff --git" section starting at p.i.
func (p *parser) parseFile() (*FilePatch, error) {
	hdrLine := p.i
	hdrOld, hdrNew, hdrOK, err := parseGitHeader(p.line(p.i)[len("diff --git "):])
	if err != nil {
		return nil, p.errorf(p.i, "%v", err)
	}
	if hdrOK {
		if err := checkPath(hdrOld, true); err != nil {
			return nil, p.errorf(p.i, "%v", err)
		}
		if err := checkPath(hdrNew, true); err != nil {
			return nil, p.errorf(p.i, "%v", err)
		}
	}
	p.i++

	fp := &FilePatch{}
	var (
		isNew, isDeleted, isRename bool
		fromName, toName           string // rename or copy
		haveMinus                  bool
		minusName, plusName        string // "" for /dev/null
		minusLine                  int
		seen                       = map[string]bool{}
	)
header:
	for p.i < len(p.lines) {
		l := p.line(p.i)
		key, rest, _ := cutHeader(l)
		if key != "" {
			if seen[key] {
				return nil, p.errorf(p.i, "repeated %q line", key)
			}
			seen[key] = true
		}
		switch key {
		case "old mode", "deleted file mode", "new mode", "new file mode":
			m, err := parseMode(rest)
			if err != nil {
				return nil, p.errorf(p.i, "%v", err)
			}
			switch key {
			case "old mode":
				fp.OldMode = m
			case "deleted file mode":
				fp.OldMode, isDeleted = m, true
			case "new mode":
				fp.NewMode = m
			case "new file mode":
				fp.NewMode, isNew = m, true
			}
		case "rename from", "rename old", "copy from":
			name, err := parseExtName(rest)
			if err != nil {
				return nil, p.errorf(p.i, "%v", err)
			}
			fromName = name
			isRename = isRename || key != "copy from"
			fp.Copy = fp.Copy || key == "copy from"
		case "rename to", "rename new", "copy to":
			name, err := parseExtName(rest)
			if err != nil {
				return nil, p.errorf(p.i, "%v", err)
			}
			toName = name
			isRename = isRename || key != "copy to"
			fp.Copy = fp.Copy || key == "copy to"
		case "similarity index", "dissimilarity index":
		case "index":
			if err := parseIndex(fp, rest); err != nil {
				return nil, p.errorf(p.i, "%v", err)
			}
		default:
			switch {
			case strings.HasPrefix(l, "--- "):
				minusLine = p.i
				name, err := parseLabel(l[4:])
				if err != nil {
					return nil, p.errorf(p.i, "%v", err)
				}
				p.i++
				if p.i >= len(p.lines) || !strings.HasPrefix(p.line(p.i), "+++ ") {
					return nil, p.errorf(minusLine, "\"---\" line not followed by \"+++\"")
				}
				plus, err := parseLabel(p.line(p.i)[4:])
				if err != nil {
					return nil, p.errorf(p.i, "%v", err)
				}
				if name == "" && plus == "" {
					return nil, p.errorf(minusLine, "both sides are /dev/null")
				}
				haveMinus, minusName, plusName = true, name, plus
				p.i++
				if err := p.parseHunks(fp); err != nil {
					return nil, err
				}
				if len(fp.Hunks) == 0 {
					return nil, p.errorf(minusLine, "no hunks after \"---\"/\"+++\"")
				}
				break header
			case strings.HasPrefix(l, "Binary files ") && strings.HasSuffix(l, " differ"):
				fp.Binary = true
				p.i++
				if err := p.parseBinary(fp); err != nil {
					return nil, err
				}
				break header
			case l == "GIT binary patch":
				fp.Binary = true
				p.i++
				if err := p.parseGitBinary(fp); err != nil {
					return nil, err
				}
				break header
			}
			break header
		}
		p.i++
	}

	// Work out the paths.
	if isNew && isDeleted {
		return nil, p.errorf(hdrLine, "file both created and deleted")
	}
	if fp.Copy && isRename {
		return nil, p.errorf(hdrLine, "file both renamed and copied")
	}
	if isRename || fp.Copy {
		if fromName == "" || toName == "" {
			return nil, p.errorf(hdrLine, "rename or copy without both names")
		}
		if isNew || isDeleted {
			return nil, p.errorf(hdrLine, "rename or copy of a created or deleted file")
		}
		fp.OldPath, fp.NewPath = fromName, toName
		if haveMinus && (minusName != fromName || plusName != toName) {
			return nil, p.errorf(minusLine, "file names disagree with the rename or copy lines")
		}
		if hdrOK && (hdrOld != fromName || hdrNew != toName) {
			return nil, p.errorf(hdrLine, "file names disagree with the rename or copy lines")
		}
	} else {
		name := ""
		switch {
		case haveMinus:
			name = minusName
			if name == "" {
				name = plusName
			} else if plusName != "" && plusName != name {
				return nil, p.errorf(minusLine, "\"---\" and \"+++\" name different files")
			}
			if hdrOK && (hdrOld != name || hdrNew != name) {
				return nil, p.errorf(minusLine, "file name disagrees with the \"diff --git\" line")
			}
			isNew = isNew || minusName == ""
			isDeleted = isDeleted || plusName == ""
			if (isNew && minusName != "") || (isDeleted && plusName != "") {
				return nil, p.errorf(minusLine, "creation or deletion without /dev/null")
			}
		case hdrOK:
			if hdrOld != hdrNew {
				return nil, p.errorf(hdrLine, "different names without a rename")
			}
			name = hdrOld
		default:
			return nil, p.errorf(hdrLine, "cannot tell the file name")
		}
		if isNew && isDeleted {
			return nil, p.errorf(hdrLine, "file both created and deleted")
		}
		if !isNew {
			fp.OldPath = name
		}
		if !isDeleted {
			fp.NewPath = name
		}
	}
	if (isNew && fp.OldMode != 0) || (isDeleted && fp.NewMode != 0) {
		return nil, p.errorf(hdrLine, "mode given for a missing side")
	}
	if fp.OldPath == "" && (fp.Old != nil || !isNullID(fp.OldIndex)) ||
		fp.NewPath == "" && (fp.New != nil || !isNullID(fp.NewIndex)) {
		return nil, p.errorf(hdrLine, "content given for a missing side")
	}
	if (fp.OldPath != "" && fp.OldIndex != "" && isNullID(fp.OldIndex)) ||
		(fp.NewPath != "" && fp.NewIndex != "" && isNullID(fp.NewIndex)) {
		return nil, p.errorf(hdrLine, "index line marks an existing side as missing")
	}
	return fp, nil
}

// isNullID reports whether id is empty or all zeros (a missing side).
func isNullID(id string) bool { return strings.Trim(id, "0") == "" }

// cutHeader splits an extended header line into its keyword and value.
func cutHeader(l string) (key, rest string, ok bool) {
	for _, k := range []string{
		"old mode", "new mode", "deleted file mode", "new file mode",
		"rename from", "rename to", "rename old", "rename new",
		"copy from", "copy to", "similarity index", "dissimilarity index", "index",
	} {
		if strings.HasPrefix(l, k+" ") {
			return k, l[len(k)+1:], true
		}
	}
	return "", "", false
}

// parseMode parses an octal mode of a regular file or symlink.
func parseMode(s string) (uint32, error) {
	m, err := strconv.ParseUint(s, 8, 32)
	if err != nil || s == "" || s[0] == '+' || s[0] == '-' {
		return 0, fmt.Errorf("bad mode %q", s)
	}
	if !validMode(uint32(m)) {
		return 0, fmt.Errorf("unsupported mode %s", s)
	}
	return uint32(m), nil
}

// parseIndex parses "<old>..<new>[ <mode>]".
func parseIndex(fp *FilePatch, s string) error {
	ids, mode, hasMode := strings.Cut(s, " ")
	o, n, ok := strings.Cut(ids, "..")
	if !ok || !isHexID(o) || !isHexID(n) {
		return fmt.Errorf("bad index line %q", s)
	}
	fp.OldIndex, fp.NewIndex = strings.ToLower(o), strings.ToLower(n)
	if hasMode {
		m, err := parseMode(mode)
		if err != nil {
			return err
		}
		if fp.OldMode == 0 {
			fp.OldMode = m
		}
		if fp.NewMode == 0 {
			fp.NewMode = m
		}
	}
	return nil
}

func isHexID(s string) bool {
	if len(s) < 4 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// parseGitHeader splits the names of a "diff --git" line. ok is false when
// the names cannot be told apart (unquoted, different, and containing
// spaces); other lines must then name the file. The names are returned
// without their first component (a/, b/).
func parseGitHeader(s string) (oldName, newName string, ok bool, err error) {
	var a, b string
	switch {
	case strings.HasPrefix(s, `"`):
		v, n, err := unquotePrefix(s)
		if err != nil {
			return "", "", false, err
		}
		if !strings.HasPrefix(s[n:], " ") {
			return "", "", false, fmt.Errorf("bad \"diff --git\" line")
		}
		a = v
		if b, err = UnquotePath(s[n+1:]); err != nil {
			return "", "", false, err
		}
	case strings.IndexByte(s, '"') >= 0:
		// An unquoted name has no '"', so the first one opens the second name.
		i := strings.IndexByte(s, '"')
		if i == 0 || s[i-1] != ' ' {
			return "", "", false, fmt.Errorf("bad \"diff --git\" line")
		}
		a = s[:i-1]
		if b, err = UnquotePath(s[i:]); err != nil {
			return "", "", false, err
		}
	default:
		// Both unquoted: accept only a split where both sides name the
		// same path, as git does.
		slash := strings.IndexByte(s, '/')
		if slash < 0 {
			return "", "", false, fmt.Errorf("bad \"diff --git\" line")
		}
		name := s[slash+1:]
		for i := 0; i < len(name); i++ {
			if name[i] != ' ' {
				continue
			}
			second := name[i+1:]
			j := strings.IndexByte(second, '/')
			if j < 0 || len(second)-j-1 != i {
				continue
			}
			if second[j+1:] == name[:i] {
				a, b = s[:slash+1+i], second
				break
			}
		}
		if a == "" {
			return "", "", false, nil
		}
	}
	if a, err = stripPrefix(a); err != nil {
		return "", "", false, err
	}
	if b, err = stripPrefix(b); err != nil {
		return "", "", false, err
	}
	return a, b, true, nil
}

// stripPrefix removes the first path component (the a/ or b/ of a diff
// name), as patch -p1 does.
func stripPrefix(name string) (string, error) {
	if strings.HasPrefix(name, "/") {
		return "", fmt.Errorf("absolute path %s", QuotePath(name))
	}
	_, rest, ok := strings.Cut(name, "/")
	if !ok {
		return "", fmt.Errorf("path %s lacks the a/ or b/ prefix", QuotePath(name))
	}
	return rest, nil
}

// parseLabel parses the name on a ---/+++ line: "" for /dev/null, else
// the path without its prefix. A tab ends an unquoted name (git adds one
// after names with spaces; diff(1) adds a timestamp).
func parseLabel(s string) (string, error) {
	var name string
	if strings.HasPrefix(s, `"`) {
		v, n, err := unquotePrefix(s)
		if err != nil {
			return "", err
		}
		if rest := s[n:]; rest != "" && rest[0] != '\t' {
			return "", fmt.Errorf("text after quoted name")
		}
		name = v
	} else {
		name, _, _ = strings.Cut(s, "\t")
		if name == "/dev/null" {
			return "", nil
		}
	}
	name, err := stripPrefix(name)
	if err != nil {
		return "", err
	}
	if err := checkPath(name, true); err != nil {
		return "", err
	}
	return name, nil
}

// parseExtName parses the name of a rename or copy line (no prefix).
func parseExtName(s string) (string, error) {
	name, err := UnquotePath(s)
	if err != nil {
		return "", err
	}
	if err := checkPath(name, true); err != nil {
		return "", err
	}
	return name, nil
}

// parseHunks parses the hunks following a "+++" line.
func (p *parser) parseHunks(fp *FilePatch) error {
	lastOpen := -1 // line of a hunk whose last line lacks "\n"
	for p.i < len(p.lines) && strings.HasPrefix(p.line(p.i), "@@ -") {
		if lastOpen >= 0 {
			return p.errorf(lastOpen, "line without newline is not at the end of the file")
		}
		start := p.i
		h, err := parseHunkHeader(p.line(p.i))
		if err != nil {
			return p.errorf(p.i, "%v", err)
		}
		p.i++
		oldLeft, newLeft := h.OldLines, h.NewLines
		oldOpen, newOpen := false, false // a line without "\n" was seen on that side
		for oldLeft > 0 || newLeft > 0 || (p.i < len(p.lines) && strings.HasPrefix(p.line(p.i), `\`)) {
			if p.i >= len(p.lines) {
				return p.errorf(start, "hunk is truncated")
			}
			l := p.line(p.i)
			op := byte(' ')
			text := "\n"
			if l != "" {
				op = l[0]
				text = p.lineText(p.i)
			}
			switch op {
			case ' ', '-', '+':
				if (op != '+' && (oldLeft == 0 || oldOpen)) || (op != '-' && (newLeft == 0 || newOpen)) {
					return p.errorf(p.i, "hunk does not match its header counts")
				}
				if op != '+' {
					oldLeft--
				}
				if op != '-' {
					newLeft--
				}
				h.Lines = append(h.Lines, Line{Op: op, Text: text})
			case '\\':
				n := len(h.Lines)
				if n == 0 || !strings.HasSuffix(h.Lines[n-1].Text, "\n") {
					return p.errorf(p.i, "misplaced \"\\ No newline at end of file\"")
				}
				last := &h.Lines[n-1]
				last.Text = last.Text[:len(last.Text)-1]
				oldOpen = oldOpen || last.Op != '+'
				newOpen = newOpen || last.Op != '-'
				lastOpen = start
			default:
				return p.errorf(p.i, "unexpected line in hunk")
			}
			p.i++
		}
		fp.Hunks = append(fp.Hunks, h)
	}
	return nil
}

// parseHunkHeader parses "@@ -l[,s] +l[,s] @@[ section]".
func parseHunkHeader(l string) (Hunk, error) {
	var h Hunk
	bad := fmt.Errorf("bad hunk header %q", l)
	rest := l[len("@@ -"):]
	var ok bool
	if h.OldStart, h.OldLines, rest, ok = parseRange(rest); !ok {
		return h, bad
	}
	if !strings.HasPrefix(rest, " +") {
		return h, bad
	}
	if h.NewStart, h.NewLines, rest, ok = parseRange(rest[2:]); !ok {
		return h, bad
	}
	if !strings.HasPrefix(rest, " @@") {
		return h, bad
	}
	h.Section = strings.TrimPrefix(rest[3:], " ")
	if (h.OldLines > 0 && h.OldStart == 0) || (h.NewLines > 0 && h.NewStart == 0) ||
		(h.OldLines == 0 && h.NewLines == 0) {
		return h, bad
	}
	return h, nil
}

// parseRange parses "start[,count]" and returns the rest of s.
func parseRange(s string) (start, count int, rest string, ok bool) {
	start, s, ok = parseNum(s)
	if !ok {
		return 0, 0, "", false
	}
	count = 1
	if strings.HasPrefix(s, ",") {
		if count, s, ok = parseNum(s[1:]); !ok {
			return 0, 0, "", false
		}
	}
	return start, count, s, true
}

func parseNum(s string) (int, string, bool) {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	if i == 0 || i > 9 {
		return 0, "", false
	}
	n, _ := strconv.Atoi(s[:i])
	return n, s[i:], true
}

// parseBinary parses the optional base64 blocks after "Binary files … differ".
func (p *parser) parseBinary(fp *FilePatch) error {
	for _, which := range []string{"old", "new"} {
		if p.i >= len(p.lines) || !strings.HasPrefix(p.line(p.i), "base64 "+which+" ") {
			continue
		}
		b, err := p.parseBase64(which)
		if err != nil {
			return err
		}
		if which == "old" {
			fp.Old = b
		} else {
			fp.New = b
		}
	}
	if p.i < len(p.lines) && strings.HasPrefix(p.line(p.i), "base64 ") {
		return p.errorf(p.i, "unexpected base64 block")
	}
	return nil
}

// parseBase64 parses "base64 <which> <size> <sha256>" and its data lines,
// whose number follows from the size.
func (p *parser) parseBase64(which string) (*BinaryData, error) {
	hdr := p.i
	f := strings.Split(p.line(p.i)[len("base64 "+which+" "):], " ")
	if len(f) != 2 || f[0] == "" || f[0][0] == '+' || len(f[1]) != 64 {
		return nil, p.errorf(hdr, "bad base64 %s header", which)
	}
	size, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || size < 0 || size > 1<<50 {
		return nil, p.errorf(hdr, "bad base64 %s size %q", which, f[0])
	}
	b := &BinaryData{Size: size}
	if _, err := hex.Decode(b.SHA256[:], []byte(f[1])); err != nil {
		return nil, p.errorf(hdr, "bad base64 %s sha256 %q", which, f[1])
	}
	p.i++
	encLen := (size + 2) / 3 * 4
	nlines := (encLen + base64Width - 1) / base64Width
	if nlines > int64(len(p.lines)-p.i) {
		return nil, p.errorf(hdr, "base64 %s data is truncated", which)
	}
	var enc strings.Builder
	enc.Grow(int(encLen))
	for k := int64(0); k < nlines; k++ {
		l := p.line(p.i)
		want := int64(base64Width)
		if k == nlines-1 {
			want = encLen - base64Width*(nlines-1)
		}
		if int64(len(l)) != want {
			return nil, p.errorf(p.i, "base64 %s data line has length %d, want %d", which, len(l), want)
		}
		enc.WriteString(l)
		p.i++
	}
	b.Data, err = base64.StdEncoding.Strict().DecodeString(enc.String())
	if err != nil {
		return nil, p.errorf(hdr, "base64 %s data: %v", which, err)
	}
	if err := b.verify(); err != nil {
		return nil, p.errorf(hdr, "base64 %s data: %v", which, err)
	}
	return b, nil
}

// verify checks Data against Size and SHA256.
func (b *BinaryData) verify() error {
	if int64(len(b.Data)) != b.Size {
		return fmt.Errorf("%d bytes of data, header says %d", len(b.Data), b.Size)
	}
	if sha256.Sum256(b.Data) != b.SHA256 {
		return fmt.Errorf("sha256 mismatch")
	}
	return nil
}
