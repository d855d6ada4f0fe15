package gitmirror

import (
	"errors"
	"fmt"
	"strings"
)

// configVar is one variable of a git config file: its section
// (lower-cased, with a subsection as "name.sub" kept as written), its name
// (lower-cased) and its value ("" and bare for a name without "=", which
// git reads as true where it wants a boolean and as an error elsewhere).
type configVar struct {
	section, name, value string
	bare                 bool
	line                 int
}

// errConfigSyntax wraps the errors of parseConfig.
var errConfigSyntax = errors.New("bad config line")

// parseConfig reads a git config file by git's own rules (config.c): a
// variable may follow a section header on the same line; names are
// case-insensitive; values are trimmed, may be quoted, carry escapes
// (\\ \" \n \t \b) and continue over a backslash-newline; '#' and ';'
// start a comment outside quotes. What git would refuse ("bad config
// line N") is an error here too: the caller must not guess.
//
// Includes are not followed: git reads a repository's format (its
// extensions) from the config file alone.
func parseConfig(data string) ([]configVar, error) {
	// git's get_next_char reads "\r\n" as "\n".
	p := &configParser{s: strings.ReplaceAll(data, "\r\n", "\n"), line: 1}
	var vars []configVar
	section := ""
	for {
		p.skipSpaceAndComments()
		if p.eof() {
			return vars, nil
		}
		c := p.peek()
		switch {
		case c == '[':
			s, err := p.sectionHeader()
			if err != nil {
				return nil, err
			}
			section = s
		case isAlpha(c):
			// git reads a variable before any section header too.
			line := p.line
			name, value, bare, err := p.variable()
			if err != nil {
				return nil, err
			}
			vars = append(vars, configVar{section: section, name: name, value: value, bare: bare, line: line})
		default:
			return nil, p.errorf()
		}
	}
}

type configParser struct {
	s    string
	i    int
	line int
}

func (p *configParser) eof() bool { return p.i >= len(p.s) }
func (p *configParser) peek() byte {
	if p.eof() {
		return 0
	}
	return p.s[p.i]
}
func (p *configParser) next() byte {
	c := p.peek()
	p.i++
	if c == '\n' {
		p.line++
	}
	return c
}

func (p *configParser) errorf() error {
	return fmt.Errorf("%w %d", errConfigSyntax, p.line)
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isKeyChar(c byte) bool {
	return isAlpha(c) || c >= '0' && c <= '9' || c == '-'
}

// isSpace is git's isspace without the newline (which ends lines here).
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' }

// skipSpaceAndComments skips blank space, newlines and comment lines
// between entries (and a UTF-8 byte-order mark at the very start, as git).
func (p *configParser) skipSpaceAndComments() {
	if p.i == 0 && strings.HasPrefix(p.s, "\xef\xbb\xbf") {
		p.i = 3
	}
	for !p.eof() {
		c := p.peek()
		switch {
		case c == '\n' || isSpace(c):
			p.next()
		case c == '#' || c == ';':
			for !p.eof() && p.peek() != '\n' {
				p.next()
			}
		default:
			return
		}
	}
}

// sectionHeader reads "[name]", "[name "sub"]" or the old "[name.sub]".
func (p *configParser) sectionHeader() (string, error) {
	p.next() // '['
	var name strings.Builder
	for {
		if p.eof() {
			return "", p.errorf()
		}
		c := p.next()
		switch {
		case c == ']':
			if name.Len() == 0 {
				return "", p.errorf()
			}
			return strings.ToLower(name.String()), nil
		case isSpace(c):
			// [name "subsection"]
			for isSpace(p.peek()) {
				p.next()
			}
			if p.next() != '"' {
				return "", p.errorf()
			}
			var sub strings.Builder
			for {
				if p.eof() {
					return "", p.errorf()
				}
				c := p.next()
				if c == '\n' {
					return "", p.errorf()
				}
				if c == '"' {
					break
				}
				if c == '\\' {
					if p.eof() || p.peek() == '\n' {
						return "", p.errorf()
					}
					c = p.next()
				}
				sub.WriteByte(c)
			}
			if p.next() != ']' {
				return "", p.errorf()
			}
			return strings.ToLower(name.String()) + "." + sub.String(), nil
		case isKeyChar(c) || c == '.':
			name.WriteByte(c)
		default:
			return "", p.errorf()
		}
	}
}

// variable reads "name", "name = value" up to the end of its line.
func (p *configParser) variable() (name, value string, bare bool, err error) {
	var n strings.Builder
	for isKeyChar(p.peek()) {
		n.WriteByte(p.next())
	}
	for c := p.peek(); c == ' ' || c == '\t'; c = p.peek() {
		p.next()
	}
	// As git's get_value: a name ends its line or is followed by '='
	// (even a comment after a bare name is an error to git).
	switch c := p.peek(); {
	case p.eof():
		return strings.ToLower(n.String()), "", true, nil
	case c == '\n':
		p.next()
		return strings.ToLower(n.String()), "", true, nil
	case c != '=':
		return "", "", false, p.errorf()
	}
	p.next() // '='
	v, err := p.value()
	return strings.ToLower(n.String()), v, false, err
}

// value reads a value as git's parse_value does.
func (p *configParser) value() (string, error) {
	var b strings.Builder
	quoted := false
	space := 0 // pending unquoted blanks: kept only if more follows
	for {
		if p.eof() {
			if quoted {
				return "", p.errorf()
			}
			return b.String(), nil
		}
		c := p.next()
		if c == '\n' {
			if quoted {
				p.line-- // git names the line the quote was left open on
				return "", p.errorf()
			}
			return b.String(), nil
		}
		if !quoted && (c == ';' || c == '#') {
			for !p.eof() && p.peek() != '\n' {
				p.next()
			}
			return b.String(), nil
		}
		if !quoted && isSpace(c) {
			if b.Len() > 0 {
				space++
			}
			continue
		}
		for ; space > 0; space-- {
			b.WriteByte(' ')
		}
		switch c {
		case '\\':
			if p.eof() {
				// git reads the end of the file as a newline: a
				// continuation, then the end of the value.
				if quoted {
					return "", p.errorf()
				}
				return b.String(), nil
			}
			switch e := p.next(); e {
			case '\n':
				continue // continuation
			case 't':
				b.WriteByte('\t')
			case 'b':
				b.WriteByte('\b')
			case 'n':
				b.WriteByte('\n')
			case '\\', '"':
				b.WriteByte(e)
			default:
				return "", p.errorf()
			}
		case '"':
			quoted = !quoted
		default:
			b.WriteByte(c)
		}
	}
}
