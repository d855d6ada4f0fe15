package diff

import (
	"errors"
	"strings"
)

// needsQuote reports whether git, with core.quotePath=true, writes a path
// containing b in C-quoted form.
func needsQuote(b byte) bool {
	return b < 0x20 || b == '"' || b == '\\' || b >= 0x7f
}

// QuotePath returns s the way git writes a path in diff headers with
// core.quotePath=true: unchanged if every byte is printable ASCII other than
// '"' and '\', otherwise wrapped in double quotes with C escapes (\a \b \t \n
// \v \f \r \" \\) and three-digit octal escapes for all other bytes below 0x20
// and from 0x7f on. Diff headers quote the prefixed name as a whole:
// QuotePath("a/" + path).
func QuotePath(s string) string {
	i := 0
	for i < len(s) && !needsQuote(s[i]) {
		i++
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteByte('"')
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		c := s[i]
		if !needsQuote(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('\\')
		switch c {
		case '\a':
			b.WriteByte('a')
		case '\b':
			b.WriteByte('b')
		case '\t':
			b.WriteByte('t')
		case '\n':
			b.WriteByte('n')
		case '\v':
			b.WriteByte('v')
		case '\f':
			b.WriteByte('f')
		case '\r':
			b.WriteByte('r')
		case '"', '\\':
			b.WriteByte(c)
		default:
			b.WriteByte('0' + c>>6)
			b.WriteByte('0' + c>>3&7)
			b.WriteByte('0' + c&7)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// UnquotePath undoes QuotePath: a string starting with '"' must be one
// complete C-quoted string, which is decoded; any other string is returned
// unchanged.
func UnquotePath(s string) (string, error) {
	if !strings.HasPrefix(s, `"`) {
		return s, nil
	}
	v, n, err := unquotePrefix(s)
	if err != nil {
		return "", err
	}
	if n != len(s) {
		return "", errors.New("text after closing quote")
	}
	return v, nil
}

// unquotePrefix decodes the C-quoted string at the start of s (which begins
// with '"') and returns its value and the number of bytes it occupies.
func unquotePrefix(s string) (string, int, error) {
	if !strings.HasPrefix(s, `"`) {
		return "", 0, errors.New("missing opening quote")
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			return b.String(), i + 1, nil
		case '\\':
		default:
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			break
		}
		switch c = s[i]; c {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'v':
			b.WriteByte('\v')
		case 'f':
			b.WriteByte('\f')
		case 'r':
			b.WriteByte('\r')
		case '"', '\\':
			b.WriteByte(c)
		case '0', '1', '2', '3':
			if i+2 >= len(s) || !isOctal(s[i+1]) || !isOctal(s[i+2]) {
				return "", 0, errors.New("bad octal escape in quoted path")
			}
			b.WriteByte((c-'0')<<6 | (s[i+1]-'0')<<3 | (s[i+2] - '0'))
			i += 2
		default:
			return "", 0, errors.New("bad escape in quoted path")
		}
	}
	return "", 0, errors.New("missing closing quote")
}

func isOctal(c byte) bool { return '0' <= c && c <= '7' }
