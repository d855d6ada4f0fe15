// Package diff renders, parses and applies ckpt's diffs: git diffs that
// carry the full content of binary files (as git diff --binary does, or
// as Decree's base64 blocks), so that every diff applies forward and in
// reverse.
//
// [Write] and [WriteChange] render [Change] values, [Parse] reads diff text
// back into a [Patch], [FilePatch.Apply] applies one file's patch to its
// content, and [ApplyTree] applies a whole patch to a [Tree], all or
// nothing. [Stat] and [WriteStat] produce git diff --stat summaries.
//
// # Format
//
// A diff is a sequence of file sections, each exactly as git diff --binary
// writes it with 3 lines of context. For a path P:
//
//	diff --git a/P b/P
//
// followed by the mode lines that apply:
//
//	new file mode 100644        (the path is added)
//	deleted file mode 100755    (the path is deleted)
//	old mode 100644             (the mode changed)
//	new mode 100755
//
// Modes are git mode numbers in octal, written exactly as given: 100644 and
// 100755 for regular files (other permission bits such as 100600 are kept),
// 120000 for a symbolic link, whose content is its target. A change between
// a regular file and a symlink is written as git writes it: a deletion
// section followed by an addition section for the same path.
//
// Unless only the mode changed, an index line follows with the first 7 hex
// digits of each side's git blob id, sha1("blob <size>\x00" + content), and
// 0000000 for a missing side (all 40 digits in a git binary patch). When
// the mode is the same on both sides it is appended:
//
//	index 626799f..e5c5594 100644
//
// Text content then follows as a unified diff:
//
//	--- a/P                     (--- /dev/null when added)
//	+++ b/P                     (+++ /dev/null when deleted)
//	@@ -l,s +l,s @@ name
//
// Hunks have 3 lines of context; ",s" is left out when s is 1, and a side
// with no lines is written "l,0" with l the line before the hunk ("-0,0"
// for an empty old side). As in git, the header may end with the nearest
// line above the hunk that starts with a letter, '_' or '$'. A line lacking
// its final newline is followed by "\ No newline at end of file". Added and
// deleted files carry their full content. An added or deleted empty file
// has no ---/+++ lines at all, like in git. A name containing a space gets
// a tab after it on the ---/+++ lines, as git writes it, so that patch(1)
// reads the whole name.
//
// # Quoting
//
// Paths are byte strings. As git does with core.quotePath=true, a name
// containing '"', '\', a byte below 0x20, 0x7f or a byte from 0x80 on is
// written as a C-quoted string, prefix included: "a/t\303\251st". The
// escapes are \a \b \t \n \v \f \r \" \\ and three octal digits for any
// other such byte; see [QuotePath] and [UnquotePath]. Every byte except NUL
// round-trips.
//
// # Binary files
//
// Content is binary when a NUL byte occurs in its first 8000 bytes
// ([IsBinary]), as git decides; a file section is binary when either side
// is. Other content is text whatever its encoding: the lines of a Latin-1
// file are written byte for byte, as git writes them. A binary section
// carries the full content of both sides, so that it applies forward and
// in reverse, in one of two formats ([BinaryFormat]).
//
// [GitBinaryPatch], what [Write] and [WriteChange] produce, is git's own,
// as git diff --binary writes it. The index line has full 40-hex blob ids
// (zeros for a missing side), and is followed by
//
//	GIT binary patch
//	literal <size>
//	<data lines>
//	<empty line>
//	literal <size>
//	<data lines>
//	<empty line>
//
// The first hunk turns the old content into the new, the second the new
// into the old. Each is "literal <size>" (the whole content) or "delta
// <size>" (a git delta against the content it applies to, written when
// both sides have content and it compresses smaller than the literal, as
// git chooses), <size> being the length of the hunk's data once inflated.
// The data is compressed with zlib and written in base85 (git's alphabet),
// 52 bytes a line, each line led by a character giving its byte count: 'A'
// to 'Z' for 1 to 26, 'a' to 'z' for 27 to 52.
//
// [Base64Blocks] is the format of Decree's changes.diff: git's marker line
// and then, as an extension, the full content of each side that exists:
//
//	Binary files a/P and b/P differ
//	base64 old <size> <sha256>
//	<base64 of the old content, 76 columns per line>
//	base64 new <size> <sha256>
//	<base64 of the new content, 76 columns per line>
//
// The size is in bytes (decimal), the SHA-256 of the content in lowercase
// hex, and the data standard base64 with padding, wrapped at 76 columns; the
// number of data lines follows from the size, and an empty side has a
// header line and no data lines. An added file has only the new block and
// a deleted one only the old block; "/dev/null" replaces the missing name
// in the marker line.
//
// # Other tools
//
// git apply -p1 applies every diff in the git format forward and with -R
// (binary files, modes and symlinks included); it keeps only the owner's
// execute bit of a mode, as git records it, and warns about other
// permission bits. GNU patch (2.7) applies diffs without binary files,
// forward and with -R, mode lines included; it refuses a git binary patch
// with an error (exit status 1) rather than skipping it, and cannot read
// the name of a section that has no ---/+++ lines (a mode-only change, an
// empty file added or deleted) when the name is unquoted and contains a
// space; git writes the same text. Neither tool understands the base64
// blocks: git apply refuses the diff and patch skips them.
//
// # Parsing and applying
//
// [Parse] reads ckpt's diffs and git diff's output (renames, copies, mode
// changes and git diff --binary's "GIT binary patch" sections, literal and
// delta hunks, included). Text outside "diff --git" sections, such as a mail header, is
// ignored, but a plain unified diff without "diff --git" lines is an error
// rather than nothing, and so is non-empty text with no section at all.
// Names lose their first component (a/, b/), as with -p1. Parse rejects,
// with an error naming the line, any path that is absolute, has an empty,
// "." or ".." component, a ".git" component (any letter case) or a NUL byte
// ([CheckPath]), malformed hunks, base64 blocks that do not decode to
// their stated size and SHA-256, and git binary hunks whose base85 lines
// are malformed or whose data does not inflate to the stated size.
//
// [FilePatch.Apply] verifies everything a diff records before returning a
// result: that the file exists exactly when the patch expects it, its mode,
// the index line's blob ids of the input and of the result, the size and
// SHA-256 of both base64 blocks and that the input equals the old (in
// reverse, the new) one, and each hunk's context and removed lines exactly.
// A git binary patch needs full blob ids on its index line, as with git
// apply, and a reverse hunk to be applied in reverse; a delta hunk must fit
// the content it is applied to.
// A hunk may match at an offset from its stated line, never with fuzz. In
// reverse, additions and deletions swap roles. [ApplyTree] checks every
// path again and writes nothing unless every file patch applies.
package diff
