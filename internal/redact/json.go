package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// JSON redacts the strings of raw, a JSON value or a stream of them (JSON
// Lines), and returns it still valid JSON, with how many secrets it
// replaced. Keys are redacted like values. A string value whose key names
// a secret ("password", "api_key", "client_secret", …) is replaced whole
// by a marker unless it is a placeholder. Everything but the strings that
// change — spacing, numbers, key order — is kept byte for byte; a string
// that changes is written back with only the escapes JSON needs. raw that
// is not JSON is an error.
func JSON(raw []byte) ([]byte, int, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	for {
		var v json.RawMessage
		if err := dec.Decode(&v); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, 0, fmt.Errorf("redact json: %w", err)
		}
	}

	var out []byte // nil until a string changes
	total := 0
	at := 0
	// keys holds, for each object or array the scan is in, the last key
	// read (arrays: "", and no key).
	var keys [][]byte
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '{', '[':
			keys = append(keys, nil)
			continue
		case '}', ']':
			keys = keys[:len(keys)-1]
			continue
		case '"':
		default:
			continue
		}
		end := stringEnd(raw, i)
		s := unquote(raw[i+1 : end-1])
		isKey := raw[skipSpace(raw, end)] == ':' // valid JSON: a ':' or more follows a key
		var red []byte
		var n int
		if !isKey && len(keys) > 0 && keys[len(keys)-1] != nil && isSecretKey(keys[len(keys)-1]) &&
			!marker(s) && !assignedCode(s) {
			red, n = Bytes(s)
			if n != 1 || !bytes.HasPrefix(red, []byte("[REDACTED:")) || len(red) != bytes.IndexByte(red, ']')+1 {
				red, n = []byte(Marker("secret")), 1
			}
		} else {
			red, n = Bytes(s)
		}
		if isKey && len(keys) > 0 {
			keys[len(keys)-1] = s
		}
		if n > 0 {
			out = append(out, raw[at:i]...)
			out = appendQuoted(out, red)
			at = end
			total += n
		}
		i = end - 1
	}
	if out == nil {
		return raw, 0, nil
	}
	return append(out, raw[at:]...), total, nil
}

// stringEnd returns the index after the closing quote of the JSON
// string whose opening quote is at raw[i].
func stringEnd(raw []byte, i int) int {
	for j := i + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(raw) // not reached for valid JSON
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw)-1 && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return min(i, len(raw)-1)
}

// unquote decodes the escapes of a JSON string's content. Bytes that are
// not escapes are kept as they are, invalid UTF-8 included. Without a
// backslash, s itself is returned.
func unquote(s []byte) []byte {
	if bytes.IndexByte(s, '\\') < 0 {
		return s
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			out = append(out, c)
			continue
		}
		i++
		switch s[i] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, k := hex4(s, i+1)
			i += k
			if utf16.IsSurrogate(r) {
				if r2, k2 := hex4(s, i+3); k2 == 4 && i+2 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						r = d
						i += 2 + k2
					}
				}
			}
			out = utf8.AppendRune(out, r)
		default: // '"', '\\', '/'
			out = append(out, s[i])
		}
	}
	return out
}

// hex4 decodes the four hex digits at s[i:], and how many it read (4,
// or 0 and U+FFFD if they are not there).
func hex4(s []byte, i int) (rune, int) {
	if i+4 > len(s) {
		return utf8.RuneError, 0
	}
	var r rune
	for _, c := range s[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return utf8.RuneError, 0
		}
		r = r<<4 | rune(c)
	}
	return r, 4
}

// appendQuoted appends s to out as a JSON string, escaping only what JSON
// requires: quotes, backslashes and control characters.
func appendQuoted(out, s []byte) []byte {
	const hex = "0123456789abcdef"
	out = append(out, '"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
		case c == '\n':
			out = append(out, '\\', 'n')
		case c == '\r':
			out = append(out, '\\', 'r')
		case c == '\t':
			out = append(out, '\\', 't')
		case c < 0x20:
			out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			out = append(out, c)
		}
	}
	return append(out, '"')
}
