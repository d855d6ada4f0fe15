package ignore

import "strings"

// This file is a byte-for-byte port of git's wildmatch.c (git 2.39), the
// matcher behind gitignore patterns. The control flow, including its
// early-abort results, is kept as in the C original so that corner cases
// (unterminated brackets, malformed [:class:] names, "**" next to a
// non-slash) behave exactly as in git. The end of pattern or text reads as
// byte 0, like the NUL terminator in C.

// Results of dowild, as in wildmatch.h.
const (
	wmMatch           = 0
	wmNoMatch         = 1
	wmAbortAll        = -1
	wmAbortToStarStar = -2
)

// wmPathname is WM_PATHNAME: '*', '?' and brackets do not match '/', and
// "**" is special next to slashes.
const wmPathname = 1

// wildmatch reports whether text matches the git wildmatch pattern.
// With flags&wmPathname the pattern is matched as a path (WM_PATHNAME);
// otherwise '*' matches any byte including '/'. Matching is
// case-sensitive and works on bytes.
func wildmatch(pattern, text string, flags int) bool {
	return dowild(pattern, text, flags) == wmMatch
}

// at returns s[i], or 0 past the end of s (C's NUL terminator).
func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// isGlobSpecial is git's is_glob_special: the bytes * ? [ and \.
func isGlobSpecial(c byte) bool {
	return c == '*' || c == '?' || c == '[' || c == '\\'
}

func dowild(p, text string, flags int) int {
	pathname := flags&wmPathname != 0
	pi, ti := 0, 0
	for ; pi < len(p); pi, ti = pi+1, ti+1 {
		pch := p[pi]
		tch := at(text, ti)
		if tch == 0 && pch != '*' {
			return wmAbortAll
		}
		switch pch {
		case '\\':
			// Literal match with the following byte; a trailing
			// backslash compares against 0 and never matches.
			pi++
			pch = at(p, pi)
			if tch != pch {
				return wmNoMatch
			}
			continue
		case '?':
			if pathname && tch == '/' {
				return wmNoMatch
			}
			continue
		case '*':
			var matchSlash bool
			pi++
			if at(p, pi) == '*' {
				prev := pi - 2 // the byte before the run of stars
				for {
					pi++
					if at(p, pi) != '*' {
						break
					}
				}
				if !pathname {
					matchSlash = true
				} else if (prev < 0 || p[prev] == '/') &&
					(at(p, pi) == 0 || at(p, pi) == '/' ||
						(at(p, pi) == '\\' && at(p, pi+1) == '/')) {
					// "**/" after a slash (or at the start) may match
					// zero directories: try the rest right here.
					if at(p, pi) == '/' && dowild(p[pi+1:], text[ti:], flags) == wmMatch {
						return wmMatch
					}
					matchSlash = true
				} else {
					matchSlash = false
				}
			} else {
				matchSlash = !pathname
			}
			if at(p, pi) == 0 {
				// Trailing "**" matches everything; trailing "*" only
				// if no slash follows.
				if !matchSlash && strings.IndexByte(text[ti:], '/') >= 0 {
					return wmNoMatch
				}
				return wmMatch
			} else if !matchSlash && p[pi] == '/' {
				// One star followed by a slash matches the rest of
				// this path component; the loop consumes the slash.
				k := strings.IndexByte(text[ti:], '/')
				if k < 0 {
					return wmNoMatch
				}
				ti += k
				continue
			}
			for {
				if tch == 0 {
					break
				}
				// Advance fast to the next occurrence of a literal
				// that follows the star.
				if !isGlobSpecial(p[pi]) {
					pch = p[pi]
					for {
						tch = at(text, ti)
						if tch == 0 || (!matchSlash && tch == '/') || tch == pch {
							break
						}
						ti++
					}
					if tch != pch {
						return wmNoMatch
					}
				}
				if matched := dowild(p[pi:], text[ti:], flags); matched != wmNoMatch {
					if !matchSlash || matched != wmAbortToStarStar {
						return matched
					}
				} else if !matchSlash && tch == '/' {
					return wmAbortToStarStar
				}
				ti++
				tch = at(text, ti)
			}
			return wmAbortAll
		case '[':
			pi++
			pch = at(p, pi)
			if pch == '^' {
				pch = '!'
			}
			negated := pch == '!'
			if negated {
				pi++
				pch = at(p, pi)
			}
			var prev byte
			matched := false
			for {
				if pch == 0 {
					return wmAbortAll
				}
				if pch == '\\' {
					pi++
					pch = at(p, pi)
					if pch == 0 {
						return wmAbortAll
					}
					if tch == pch {
						matched = true
					}
				} else if pch == '-' && prev != 0 && at(p, pi+1) != 0 && at(p, pi+1) != ']' {
					pi++
					pch = p[pi]
					if pch == '\\' {
						pi++
						pch = at(p, pi)
						if pch == 0 {
							return wmAbortAll
						}
					}
					if tch <= pch && tch >= prev {
						matched = true
					}
					pch = 0 // a range cannot start right after a range
				} else if pch == '[' && at(p, pi+1) == ':' {
					pi += 2
					s := pi
					for {
						pch = at(p, pi)
						if pch == 0 || pch == ']' {
							break
						}
						pi++
					}
					if pch == 0 {
						return wmAbortAll
					}
					n := pi - s - 1
					if n < 0 || p[pi-1] != ':' {
						// No ":]": the '[' is an ordinary member.
						pi = s - 2
						pch = '['
						if tch == pch {
							matched = true
						}
					} else {
						in, ok := inClass(p[s:s+n], tch)
						if !ok {
							return wmAbortAll // malformed [:class:]
						}
						if in {
							matched = true
						}
						pch = 0
					}
				} else if tch == pch {
					matched = true
				}
				prev = pch
				pi++
				pch = at(p, pi)
				if pch == ']' {
					break
				}
			}
			if matched == negated || (pathname && tch == '/') {
				return wmNoMatch
			}
			continue
		default:
			if tch != pch {
				return wmNoMatch
			}
			continue
		}
	}
	if ti < len(text) {
		return wmNoMatch
	}
	return wmMatch
}

// inClass reports whether c is in the POSIX class name, using git's
// locale-independent ASCII ctype (so bytes >= 0x80 are in no class, and
// "space" is only \t \n \r and ' '). ok is false for an unknown name.
func inClass(name string, c byte) (in, ok bool) {
	switch name {
	case "alnum":
		return isAlpha(c) || isDigit(c), true
	case "alpha":
		return isAlpha(c), true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < 0x20 || c == 0x7f, true
	case "digit":
		return isDigit(c), true
	case "graph":
		return c > 0x20 && c < 0x7f, true
	case "lower":
		return c >= 'a' && c <= 'z', true
	case "print":
		return c >= 0x20 && c < 0x7f, true
	case "punct":
		return c > 0x20 && c < 0x7f && !isAlpha(c) && !isDigit(c), true
	case "space":
		return c == ' ' || c == '\t' || c == '\n' || c == '\r', true
	case "upper":
		return c >= 'A' && c <= 'Z', true
	case "xdigit":
		return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'), true
	}
	return false, false
}

func isAlpha(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
