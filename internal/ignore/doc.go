// Package ignore decides whether a workspace path is ignored, with the
// semantics of git for untracked files (what `git ls-files --others
// --exclude-standard` leaves out), plus two ckpt-specific files that take
// precedence over git's.
//
// # Sources
//
// A scanner walking the workspace collects, per directory:
//
//   - .gitignore, in every directory;
//   - .ckptignore and .decreeignore, in every directory, with gitignore
//     syntax;
//
// and, once, .git/info/exclude, based at the workspace root. Each file is
// parsed with [ParseList]. [New] takes info/exclude, and [Matcher.Child]
// adds one directory's files on the way down:
//
//	m := ignore.New(exclude)
//	root := m.Child("", gitignore, ckptignore, decreeignore)
//	root.Ignored("node_modules", true)
//
// # Precedence
//
// Lists are consulted in this order, and the first list with any matching
// line decides:
//
//  1. the .decreeignore and .ckptignore lists, deepest directory first;
//     the two files of one directory form one list, .decreeignore lines
//     first, so a .ckptignore line wins a tie;
//  2. the .gitignore lists, deepest directory first;
//  3. .git/info/exclude.
//
// Within a list the last matching line wins. The path is ignored when that
// line is not negated ("!"); when no line in any list matches, the path is
// not ignored. So a root .ckptignore holding "!.env" keeps .env files that
// any .gitignore ignores, and a .ckptignore line can ignore what every
// .gitignore allows.
//
// As in git, a path below an ignored directory cannot be re-included: the
// scanner never descends into a directory [Matcher.Ignored] rejects, so the
// package only answers for one path at a time. A directory excluded by a
// .gitignore but re-included by "!dir/" in a .ckptignore is therefore
// descended, and its entries are judged by all lists again.
//
// # Differences from git
//
// The .ckptignore and .decreeignore files are ckpt's own. core.excludesFile
// (and its default, $XDG_CONFIG_HOME/git/ignore) is deliberately not read,
// so a checkpoint does not depend on the user's global git configuration.
// Matching is always case-sensitive, as with core.ignorecase=false. Which
// files exist (for example, that git does not follow a .gitignore that is
// a symlink, and skips every entry named ".git") is the scanner's concern.
//
// # Syntax
//
// Patterns follow gitignore(5) as implemented by git's dir.c and
// wildmatch.c (version 2.39), corner cases included:
//
//   - A UTF-8 byte order mark at the start of a file is skipped. Lines end
//     at "\n"; one "\r" right before it is dropped, so CRLF files work.
//     A NUL byte ends the line.
//   - Empty lines and lines starting with "#" are skipped; "\#" starts a
//     pattern with "#". Trailing spaces are removed unless escaped ("foo\ "
//     keeps one space); tabs and other blanks stay.
//   - "!" negates; "\!" starts a pattern with "!".
//   - A trailing "/" makes the pattern match only directories. A symlink is
//     never a directory here.
//   - A pattern with a "/" anywhere else (a leading one is removed) is
//     anchored to the directory of its file and matched against the path
//     relative to it; otherwise it is matched against the last path
//     component, at any depth.
//   - "*" and "?" match any bytes but "/", "[...]" a set of bytes, with
//     ranges, "!" or "^" negation, "]" first as a member, backslash escapes
//     and the classes [:alnum:], [:alpha:], [:blank:], [:cntrl:], [:digit:],
//     [:graph:], [:lower:], [:print:], [:punct:], [:space:], [:upper:] and
//     [:xdigit:]. "**/" at the start, "/**" at the end and "/**/" in the
//     middle match any number of directories; any other "**" is a "*".
//   - git matches the wildcard-free start of an anchored pattern on its
//     own and gives wildmatch only the rest, so "foo**/bar" matches
//     "foobar" and "foo/x/bar": after "foo" the "**/" counts as leading.
//   - A pattern git cannot parse is kept and never matches: an unclosed
//     "[", an unknown [:class:], a trailing backslash.
//
// # Bytes
//
// Names are arbitrary bytes. Nothing is decoded as UTF-8 or normalized: "?"
// matches one byte (so "??" matches the two-byte "é"), ranges compare byte
// values, and the character classes use git's own locale-independent ASCII
// table, in which no byte above 0x7f is in any class and [:space:] is only
// tab, newline, carriage return and space (not \v or \f).
//
// # Performance
//
// [Matcher.Ignored] does not allocate. Each pattern is classified when
// parsed (literal name, "*literal" suffix, glob, anchored path) with its
// literal prefix and a substring every match must contain; large lists
// index literal names in a map and suffixes by their last byte, so a check
// touches only the patterns that can match. [Matcher.Child] for a
// directory without ignore files returns the parent matcher itself.
package ignore
