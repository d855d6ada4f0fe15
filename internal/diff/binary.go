package diff

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Git binary patches: "GIT binary patch" followed by a forward hunk (old to
// new) and a reverse hunk (new to old), each "literal <size>" (the whole
// result) or "delta <size>" (a git delta against the content it applies
// to), then the data deflated with zlib and encoded in base85, at most 52
// bytes a line, each line led by a character giving its length ('A' = 1 to
// 'Z' = 26, 'a' = 27 to 'z' = 52), and an empty line. <size> is the length
// of the inflated data.

// BinaryHunk is one hunk of a git binary patch, inflated: the whole content
// it results in (a literal) or a git delta against the content it applies
// to.
type BinaryHunk struct {
	Delta bool
	Data  []byte
}

const (
	// base85Line is the most bytes git encodes on one line.
	base85Line = 52
	// maxBinarySize bounds the size a binary hunk may state.
	maxBinarySize = 1 << 40
	// maxDeflateRatio bounds how much deflated data may grow when
	// inflated (deflate cannot do better than 1032:1), so that a patch
	// cannot claim more memory than its size warrants.
	maxDeflateRatio = 1032
)

const base85Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"

// base85Value maps a character to its value plus one (0: not in the
// alphabet).
var base85Value = func() (t [256]byte) {
	for i := 0; i < len(base85Alphabet); i++ {
		t[base85Alphabet[i]] = byte(i + 1)
	}
	return t
}()

// encode85 appends the base85 encoding of data, as git's encode_85 does:
// each 4 bytes (the last group padded with zeros) as 5 characters.
func encode85(dst, data []byte) []byte {
	for len(data) > 0 {
		var acc uint32
		for i := range 4 {
			acc <<= 8
			if i < len(data) {
				acc |= uint32(data[i])
			}
		}
		var out [5]byte
		for i := 4; i >= 0; i-- {
			out[i] = base85Alphabet[acc%85]
			acc /= 85
		}
		dst = append(dst, out[:]...)
		data = data[min(4, len(data)):]
	}
	return dst
}

// decode85 appends the n bytes that the base85 text s encodes; s must hold
// exactly the groups n needs.
func decode85(dst []byte, s string, n int) ([]byte, error) {
	if len(s) != (n+3)/4*5 {
		return nil, errors.New("base85 data does not match its length")
	}
	for ; n > 0; s = s[5:] {
		var acc uint64
		for i := range 5 {
			v := base85Value[s[i]]
			if v == 0 {
				return nil, fmt.Errorf("invalid base85 character %q", s[i])
			}
			acc = acc*85 + uint64(v-1)
		}
		if acc > 0xffffffff {
			return nil, fmt.Errorf("invalid base85 group %q", s[:5])
		}
		for i := 0; i < min(n, 4); i++ {
			dst = append(dst, byte(acc>>(24-8*i)))
		}
		n -= min(n, 4)
	}
	return dst, nil
}

// writeGitBinary writes a git binary patch turning old into new, as git
// diff --binary does: the header line, the forward hunk and the reverse
// hunk. Write errors are sticky in bw.
func writeGitBinary(bw *bufio.Writer, old, new []byte) {
	bw.WriteString("GIT binary patch\n")
	writeBinaryHunk(bw, old, new)
	writeBinaryHunk(bw, new, old)
}

// writeBinaryHunk writes the hunk turning from into to: a delta when both
// sides have content and the delta, deflated, is smaller than the deflated
// literal (a small change to a large file), else the literal, as git
// chooses.
func writeBinaryHunk(bw *bufio.Writer, from, to []byte) {
	data, kind, size := deflate(to), "literal", len(to)
	if len(from) > 0 && len(to) > 0 {
		if d := makeDelta(from, to, len(data)); d != nil {
			if dd := deflate(d); len(dd) < len(data) {
				data, kind, size = dd, "delta", len(d)
			}
		}
	}
	bw.WriteString(kind + " " + strconv.Itoa(size) + "\n")
	line := make([]byte, 0, 1+base85Line/4*5+1)
	for len(data) > 0 {
		n := min(len(data), base85Line)
		line = line[:0]
		if n <= 26 {
			line = append(line, byte('A'+n-1))
		} else {
			line = append(line, byte('a'+n-27))
		}
		line = encode85(line, data[:n])
		line = append(line, '\n')
		bw.Write(line)
		data = data[n:]
	}
	bw.WriteByte('\n')
}

// deflate compresses data with zlib: at the default level, or, from 1 MiB
// on, at the fastest, which is git's default (core.compression unset) and
// ten times faster than Go's default level on large files.
func deflate(data []byte) []byte {
	level := zlib.DefaultCompression
	if len(data) >= 1<<20 {
		level = zlib.BestSpeed
	}
	var buf bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&buf, level) // a valid level cannot fail
	zw.Write(data)                            // writes to a bytes.Buffer cannot fail
	zw.Close()
	return buf.Bytes()
}

// inflate decompresses zlib data that must inflate to exactly size bytes.
func inflate(data []byte, size int64) ([]byte, error) {
	zr, err := zlib.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	out := bytes.NewBuffer(make([]byte, 0, min(size, 64<<20)))
	if _, err := io.Copy(out, io.LimitReader(zr, size+1)); err != nil {
		return nil, err
	}
	if int64(out.Len()) != size {
		return nil, fmt.Errorf("data inflates to %d bytes or more, hunk says %d", out.Len(), size)
	}
	// Reading to the end checks the zlib checksum.
	if n, err := io.Copy(io.Discard, zr); err != nil || n != 0 {
		return nil, fmt.Errorf("corrupt zlib data: %v", err)
	}
	return out.Bytes(), nil
}

// parseGitBinary parses the hunks after a "GIT binary patch" line: a
// forward hunk, and a reverse one if present.
func (p *parser) parseGitBinary(fp *FilePatch) error {
	start := p.i - 1
	h, err := p.parseBinaryHunk()
	if err != nil {
		return err
	}
	if h == nil {
		if p.i < len(p.lines) {
			return p.errorf(p.i, "git binary patch: want a \"literal\" or \"delta\" line")
		}
		return p.errorf(start, "git binary patch without a hunk")
	}
	fp.Forward = h
	if fp.Reverse, err = p.parseBinaryHunk(); err != nil {
		return err
	}
	return nil
}

// parseBinaryHunk parses one "literal N" or "delta N" hunk at p.i, or
// returns nil if there is none.
func (p *parser) parseBinaryHunk() (*BinaryHunk, error) {
	if p.i >= len(p.lines) {
		return nil, nil
	}
	hdr := p.i
	kind, num, _ := strings.Cut(p.line(hdr), " ")
	if kind != "literal" && kind != "delta" {
		return nil, nil
	}
	size, err := strconv.ParseInt(num, 10, 64)
	if err != nil || num[0] == '+' || size < 0 || size > maxBinarySize {
		return nil, p.errorf(hdr, "bad binary hunk size %q", num)
	}
	var enc []byte
	for p.i++; p.i < len(p.lines); p.i++ {
		l := p.line(p.i)
		if l == "" {
			p.i++
			break
		}
		var n int
		switch c := l[0]; {
		case 'A' <= c && c <= 'Z':
			n = int(c-'A') + 1
		case 'a' <= c && c <= 'z':
			n = int(c-'a') + 27
		default:
			return nil, p.errorf(p.i, "bad binary data line: length character %q", c)
		}
		if enc, err = decode85(enc, l[1:], n); err != nil {
			return nil, p.errorf(p.i, "bad binary data line: %v", err)
		}
	}
	if size > int64(len(enc))*maxDeflateRatio+64 {
		return nil, p.errorf(hdr, "binary hunk says %d bytes, more than %d deflated bytes can hold", size, len(enc))
	}
	data, err := inflate(enc, size)
	if err != nil {
		return nil, p.errorf(hdr, "binary hunk: %v", err)
	}
	return &BinaryHunk{Delta: kind == "delta", Data: data}, nil
}

// apply returns the content h results in when applied to src.
func (h *BinaryHunk) apply(src []byte) ([]byte, error) {
	if !h.Delta {
		return bytes.Clone(h.Data), nil
	}
	return applyDelta(src, h.Data)
}
