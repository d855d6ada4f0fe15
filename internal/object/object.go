// Package object defines ckpt's content-addressed objects: blobs, trees and
// checkpoints, their identifiers and their canonical encodings.
//
// # Identifiers
//
// Every object is named by the SHA-256 of its canonical encoding. A blob's
// encoding is the raw file content, so a blob id is exactly the sha256 a
// Decree manifest records for the file. Trees and checkpoints have the
// encodings defined below; equal content always yields an equal id, so an
// unchanged directory keeps its tree id and costs nothing to checkpoint again.
//
// # Trees
//
// A tree is one directory: its entries sorted by the raw bytes of their names.
// Each entry is encoded as
//
//	<mode in octal> SP <size in decimal> SP <name> NUL <32-byte id>
//
// Modes are git-style numbers: 0o100000|perm for a regular file (perm is the
// exact permission bits), 0o120000 for a symlink (its blob is the target
// string), 0o040000 for a directory. A directory entry's size is the total
// size of the files below it. Names are arbitrary bytes except NUL and '/',
// and never "." or "..".
package object

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ID is the SHA-256 identifier of an object.
type ID [32]byte

// ZeroID is the all-zero id, used for "no object".
var ZeroID ID

// Sum returns the id of data.
func Sum(data []byte) ID { return ID(sha256.Sum256(data)) }

// String returns the full lowercase hex form of id.
func (id ID) String() string { return hex.EncodeToString(id[:]) }

// Short returns the 12-hex short form of id used in listings.
func (id ID) Short() string { return hex.EncodeToString(id[:6]) }

// IsZero reports whether id is the zero id.
func (id ID) IsZero() bool { return id == ZeroID }

// MarshalText implements encoding.TextMarshaler (hex).
func (id ID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler (hex).
func (id *ID) UnmarshalText(b []byte) error {
	v, err := ParseID(string(b))
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// ParseID parses a full 64-hex id.
func ParseID(s string) (ID, error) {
	var id ID
	if len(s) != 64 {
		return id, fmt.Errorf("invalid object id %q: want 64 hex digits", s)
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return id, fmt.Errorf("invalid object id %q: %v", s, err)
	}
	return id, nil
}

// Mode bits as git writes them.
const (
	ModeTypeMask = 0o170000
	ModeFile     = 0o100000
	ModeSymlink  = 0o120000
	ModeDir      = 0o040000
	ModePermMask = 0o7777
)

// IsDir reports whether mode is a directory mode.
func IsDir(mode uint32) bool { return mode&ModeTypeMask == ModeDir }

// IsSymlink reports whether mode is a symlink mode.
func IsSymlink(mode uint32) bool { return mode&ModeTypeMask == ModeSymlink }

// IsFile reports whether mode is a regular file mode.
func IsFile(mode uint32) bool { return mode&ModeTypeMask == ModeFile }

// ValidMode reports whether mode is one a tree may hold.
func ValidMode(mode uint32) bool {
	switch mode & ModeTypeMask {
	case ModeFile:
		return mode&^(ModeTypeMask|0o777) == 0
	case ModeSymlink:
		return mode == ModeSymlink
	case ModeDir:
		return mode == ModeDir
	}
	return false
}

// Entry is one name in a tree.
type Entry struct {
	Name string
	Mode uint32
	Size int64
	ID   ID
}

// Tree is one directory's entries, sorted by name bytes.
type Tree struct {
	Entries []Entry
}

// Find returns the entry called name, using binary search.
func (t *Tree) Find(name string) (Entry, bool) {
	i := sort.Search(len(t.Entries), func(i int) bool { return t.Entries[i].Name >= name })
	if i < len(t.Entries) && t.Entries[i].Name == name {
		return t.Entries[i], true
	}
	return Entry{}, false
}

// Size returns the total size of the files below t.
func (t *Tree) Size() int64 {
	var n int64
	for _, e := range t.Entries {
		n += e.Size
	}
	return n
}

// ValidName reports whether name may appear in a tree.
func ValidName(name string) bool {
	return name != "" && name != "." && name != ".." &&
		strings.IndexByte(name, '/') < 0 && strings.IndexByte(name, 0) < 0 && !Reserved(name)
}

// Reserved reports whether name is one ckpt never captures at any depth:
// .git, .ckpt and .decree, in any letter case (on a case-insensitive file
// system .GIT is .git). A tree holding one is invalid store content: a
// crafted checkpoint must not restore a hook into .git.
func Reserved(name string) bool {
	if len(name) < 4 || len(name) > 7 || name[0] != '.' {
		return false
	}
	return strings.EqualFold(name, ".git") || strings.EqualFold(name, ".ckpt") || strings.EqualFold(name, ".decree")
}

// ValidPath reports whether p is a clean relative slash-separated path whose
// every component is a valid name: no leading or trailing slash, no empty,
// "." or ".." components, no NUL, no reserved name (see [Reserved]).
func ValidPath(p string) bool {
	if p == "" {
		return false
	}
	for {
		i := strings.IndexByte(p, '/')
		if i < 0 {
			return ValidName(p)
		}
		if !ValidName(p[:i]) {
			return false
		}
		p = p[i+1:]
	}
}

// AppendEntry appends the encoding of e to b.
func AppendEntry(b []byte, e Entry) []byte {
	b = strconv.AppendUint(b, uint64(e.Mode), 8)
	b = append(b, ' ')
	b = strconv.AppendInt(b, e.Size, 10)
	b = append(b, ' ')
	b = append(b, e.Name...)
	b = append(b, 0)
	return append(b, e.ID[:]...)
}

// Encode returns the canonical encoding of t. Entries must be sorted.
func (t *Tree) Encode() []byte {
	n := 0
	for _, e := range t.Entries {
		n += len(e.Name) + 32 + 24
	}
	b := make([]byte, 0, n)
	for _, e := range t.Entries {
		b = AppendEntry(b, e)
	}
	return b
}

// SortEntries sorts entries by name bytes.
func SortEntries(es []Entry) {
	sort.Slice(es, func(i, j int) bool { return es[i].Name < es[j].Name })
}

// ErrMalformed is wrapped by decoding errors.
var ErrMalformed = errors.New("malformed object")

// DecodeTree parses a tree encoding and validates it: names valid, strictly
// sorted (so unique), modes valid, sizes non-negative.
func DecodeTree(data []byte) (*Tree, error) {
	t := &Tree{}
	prev := ""
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp <= 0 {
			return nil, fmt.Errorf("%w: tree entry without mode", ErrMalformed)
		}
		mode, err := strconv.ParseUint(string(data[:sp]), 8, 32)
		if err != nil || !ValidMode(uint32(mode)) || strconv.FormatUint(mode, 8) != string(data[:sp]) {
			return nil, fmt.Errorf("%w: tree entry mode %q", ErrMalformed, data[:sp])
		}
		data = data[sp+1:]
		sp = bytes.IndexByte(data, ' ')
		if sp <= 0 {
			return nil, fmt.Errorf("%w: tree entry without size", ErrMalformed)
		}
		size, err := strconv.ParseInt(string(data[:sp]), 10, 64)
		if err != nil || size < 0 || strconv.FormatInt(size, 10) != string(data[:sp]) {
			return nil, fmt.Errorf("%w: tree entry size %q", ErrMalformed, data[:sp])
		}
		data = data[sp+1:]
		nul := bytes.IndexByte(data, 0)
		if nul < 0 || len(data) < nul+1+32 {
			return nil, fmt.Errorf("%w: truncated tree entry", ErrMalformed)
		}
		name := string(data[:nul])
		if Reserved(name) {
			return nil, fmt.Errorf("%w: tree holds %q, a name ckpt never records (.git, .ckpt and .decree are never restored)", ErrMalformed, name)
		}
		if !ValidName(name) {
			return nil, fmt.Errorf("%w: invalid name %q in tree", ErrMalformed, name)
		}
		if len(t.Entries) > 0 && name <= prev {
			return nil, fmt.Errorf("%w: tree entries not sorted at %q", ErrMalformed, name)
		}
		var id ID
		copy(id[:], data[nul+1:nul+33])
		t.Entries = append(t.Entries, Entry{Name: name, Mode: uint32(mode), Size: size, ID: id})
		prev = name
		data = data[nul+33:]
	}
	return t, nil
}

// EmptyTree is the encoding-derived id of a tree with no entries.
var EmptyTree = Sum(nil)
